package informersim_test

import (
	"errors"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
	"github.com/informersim/informersim/sim/world/worldtest"
)

// The world specs run informers against the fake apiserver on the simulator. Their seeds derive
// from GinkgoRandomSeed(), so every suite run tries new interleavings, and each seed and trace
// hash is recorded in the report: `ginkgo --seed=N` replays a failure.
var _ = Describe("the world", func() {
	seeds := func(n uint64) []uint64 {
		base := uint64(GinkgoRandomSeed())
		out := make([]uint64, n)
		for i := range out {
			out[i] = base*1000 + uint64(i)
		}
		return out
	}
	record := func(w *world.World) {
		AddReportEntry(fmt.Sprintf("seed %d", w.Sim().Seed()), w.Sim().Trace().Hash())
	}
	newWorld := func(seed uint64, names ...string) (*world.World, *world.Informer, []*world.Handler) {
		w, err := world.New(seed, world.Config{})
		Expect(err).NotTo(HaveOccurred())
		for _, name := range []string{"a", "b", "c"} {
			Expect(w.Apply(world.Op{Kind: world.OpCreate, Name: name})).To(Succeed())
		}
		inf, err := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
		Expect(err).NotTo(HaveOccurred())
		var hs []*world.Handler
		for _, name := range names {
			h, err := w.AddHandler(inf, name, nil, world.HandlerOptions{})
			Expect(err).NotTo(HaveOccurred())
			hs = append(hs, h)
		}
		Expect(inf.Start()).To(Succeed())
		return w, inf, hs
	}

	It("converges after a 410 relist, with a tombstone for the delete it missed", func() {
		for _, seed := range seeds(5) {
			w, inf, hs := newWorld(seed, "h1", "h2")
			Expect(w).To(worldtest.HaveConverged(), "seed %d", seed)
			for _, h := range hs {
				h.Deliveries().Take()
			}
			// The watch ends with 410 Expired while b is deleted and c updated: the Reflector
			// backs off and relists at its last RV (informer.md §7.7, §14 T5). These are pods,
			// which the apiserver deletes gracefully (fakeapi.md §5.3): b's delete is two writes,
			// MODIFIED b@5 with deletionTimestamp and grace 0, then DELETED b@6, so c's update is
			// c@7. The informer misses both of b's; the relist still yields one tombstone, with
			// the last state the cache held (b@3), and nothing for the terminating state.
			Expect(w.Apply(world.Op{Kind: world.OpCloseWatches, Code: 410})).To(Succeed())
			Expect(w.Apply(world.Op{Kind: world.OpDelete, Name: "b"})).To(Succeed())
			Expect(w.Apply(world.Op{Kind: world.OpUpdate, Name: "c"})).To(Succeed())
			Expect(w).To(worldtest.HaveConverged(), "seed %d", seed)
			for _, h := range hs {
				Expect(h.Deliveries().Take()).To(Equal([]string{
					"del(tomb default/b@3)", "upd(default/a@2->2)", "upd(default/c@4->7)",
				}), "seed %d %s", seed, h.Actor())
			}
			Expect(inf.SharedIndexInformer().LastSyncResourceVersion()).To(Equal("7"))
			record(w)
		}
	})

	It("gives a late handler the cache as initial adds, then every later change", func() {
		for _, seed := range seeds(5) {
			w, inf, _ := newWorld(seed, "h1")
			Expect(w).To(worldtest.HaveConverged(), "seed %d", seed)
			late, err := w.AddHandler(inf, "late", nil, world.HandlerOptions{})
			Expect(err).NotTo(HaveOccurred())
			Expect(late.HasSynced()).To(BeFalse())
			Expect(w.Apply(world.Op{Kind: world.OpUpdate, Name: "a"})).To(Succeed())
			Expect(w).To(worldtest.HaveConverged(), "seed %d", seed)
			got := late.Deliveries().Strings()
			Expect(got).To(HaveLen(4))
			Expect(got[:3]).To(ConsistOf("add(default/a@2,true)", "add(default/b@3,true)", "add(default/c@4,true)"))
			Expect(got[3]).To(Equal("upd(default/a@2->5)"))
			Expect(late.HasSynced()).To(BeTrue())
			record(w)
		}
	})

	It("converges after a random workload with watch drops, compactions and failed requests, in both start-ups", func() {
		for i, seed := range seeds(10) {
			// Every other seed starts with the watch-list stream (informer.md §7.5), the others
			// LIST then WATCH (§7.3).
			watchList := i%2 == 1
			w, err := world.NewFromConfig(sim.Config{Seed: seed, FaultSiteProbability: 0.5}, fakeapi.Config{}, world.Config{})
			Expect(err).NotTo(HaveOccurred())
			oracles, err := oracle.Attach(w) // every named oracle, on every step
			Expect(err).NotTo(HaveOccurred())
			inf, err := w.AddInformer("inf1", world.InformerSpec{Namespace: "", Informer: informer.SharedIndexInformerOptions{ResyncPeriod: 30 * time.Second}, WatchList: watchList})
			Expect(err).NotTo(HaveOccurred())
			for _, name := range []string{"h1", "h2"} {
				_, err := w.AddHandler(inf, name, nil, world.HandlerOptions{})
				Expect(err).NotTo(HaveOccurred())
			}
			Expect(inf.Start()).To(Succeed())
			gen, err := w.Generate(world.GenConfig{Namespaces: []string{"default", "other"}, Ops: 60, FaultOps: true, FaultPoints: true})
			Expect(err).NotTo(HaveOccurred())
			Expect(oracles.Check(w.Sim().RunUntil(gen.Finished, time.Hour))).To(Succeed(), "seed %d", seed)
			w.Sim().SetFaultsEnabled(false)
			Expect(oracles).To(worldtest.HaveConverged(time.Hour), "seed %d", seed)
			Expect(oracles).To(worldtest.SatisfyEveryOracle(), "seed %d", seed)
			streamed := false
			for _, r := range w.Server().Requests() {
				if o := r.Options.SendInitialEvents; r.Client == "inf1" && o != nil && *o {
					streamed = true
				}
			}
			Expect(streamed).To(Equal(watchList), "seed %d: watch-list requests sent", seed)
			record(w)
		}
	})

	It("HaveConverged names the first diverging key", func() {
		seed := seeds(1)[0]
		w, inf, _ := newWorld(seed, "h1")
		Expect(w).To(worldtest.HaveConverged())
		// Corrupt the cache behind the informer's back.
		ghost := &unstructured.Unstructured{}
		ghost.SetNamespace("default")
		ghost.SetName("ghost")
		ghost.SetResourceVersion("1")
		Expect(inf.SharedIndexInformer().GetStore().Add(ghost)).To(Succeed())
		m := worldtest.HaveConverged()
		ok, err := m.Match(w)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse())
		Expect(m.FailureMessage(w)).To(ContainSubstring("key default/ghost: present at rv=1, apiserver has none"))
		Expect(m.FailureMessage(w)).To(ContainSubstring(fmt.Sprintf("seed: %d", seed)))
	})

	It("turns a panicking handler into a failed run that names the seed", func() {
		seed := seeds(1)[0]
		w, inf, _ := newWorld(seed)
		_, err := w.AddHandler(inf, "bad", informer.ResourceEventHandlerFuncs{
			AddFunc: func(any) { panic("boom") },
		}, world.HandlerOptions{})
		Expect(err).NotTo(HaveOccurred())
		err = w.RunUntilConverged(time.Minute)
		Expect(err).To(MatchError(ContainSubstring(fmt.Sprintf("seed %d", seed))))
		var re *sim.RunError
		Expect(errors.As(err, &re)).To(BeTrue())
		Expect(re.Actor).To(Equal("inf1/bad"))
	})
})
