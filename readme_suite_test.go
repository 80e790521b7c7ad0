package informersim_test

import (
	"fmt"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/worldtest"
)

// The README's "Testing your controller in a Ginkgo spec" example, kept here so it cannot rot:
// a controller whose handlers feed a worker (a user actor of the world) keeps a derived state
// (the pods it believes exist), a named check compares it with the apiserver, the watch expires
// while a pod is deleted, and a seed sweep runs it all on 20 seeds.

// podController is a small controller: its handlers enqueue keys, its worker syncs one key per
// step from the informer's cache, and known is its derived state.
type podController struct {
	w          *world.World
	cache      informer.Store
	queue      []string
	known      map[string]bool
	tombstones []string
}

func (c *podController) enqueue(obj any) {
	if tomb, ok := obj.(informer.DeletedFinalStateUnknown); ok {
		c.tombstones = append(c.tombstones, tomb.Key)
	}
	key, err := informer.DeletionHandlingMetaNamespaceKeyFunc(obj)
	Expect(err).NotTo(HaveOccurred())
	c.queue = append(c.queue, key)
}

func (c *podController) handler() informer.ResourceEventHandler {
	return informer.ResourceEventHandlerFuncs{
		AddFunc:    c.enqueue,
		UpdateFunc: func(_, obj any) { c.enqueue(obj) },
		DeleteFunc: c.enqueue,
	}
}

// The worker is an actor of the world: it offers "sync" while its queue has keys, so the
// scheduler interleaves it with everything else, and the world is not quiet until it is done.
func (c *podController) Name() string { return "ctrl/worker" }

func (c *podController) Actions(add func(sim.Action)) {
	if len(c.queue) > 0 {
		add(sim.Action{Name: "sync", Run: c.sync})
	}
}

func (c *podController) sync() {
	key := c.queue[0]
	c.queue = c.queue[1:]
	_, exists, err := c.cache.GetByKey(key)
	Expect(err).NotTo(HaveOccurred())
	if exists {
		c.known[key] = true
	} else {
		delete(c.known, key)
	}
}

// check is the controller's convergence check: it knows exactly the pods the apiserver has.
func (c *podController) check() error {
	list, err := c.w.Server().Snapshot(world.DefaultResource(), "default", metav1.ListOptions{})
	if err != nil {
		return err
	}
	var want, got []string
	for _, p := range list.Items {
		want = append(want, "default/"+p.GetName())
	}
	for k := range c.known {
		got = append(got, k)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("the controller knows %v, the apiserver has %v", got, want)
	}
	return nil
}

var _ = Describe("the README example", func() {
	It("keeps a controller's state right when the watch expires while a pod is deleted", func() {
		seeds, err := world.Seeds(uint64(GinkgoRandomSeed())*100, 20) // INFORMERSIM_SEED=n: that seed alone
		Expect(err).NotTo(HaveOccurred())
		for _, seed := range seeds {
			w, err := world.New(seed, world.Config{})
			Expect(err).NotTo(HaveOccurred())
			for _, name := range []string{"a", "b"} {
				Expect(w.Apply(world.Op{Kind: world.OpCreate, Name: name, Labels: map[string]string{"app": "web"}})).To(Succeed())
			}
			inf, err := w.AddInformer("pods", world.InformerSpec{Namespace: "default", LabelSelector: "app=web"})
			Expect(err).NotTo(HaveOccurred())

			ctrl := &podController{w: w, cache: inf.SharedIndexInformer().GetStore(), known: map[string]bool{}}
			_, err = w.AddHandler(inf, "ctrl", ctrl.handler(), world.HandlerOptions{CallDuration: 5 * time.Millisecond})
			Expect(err).NotTo(HaveOccurred())
			Expect(w.AddActor(ctrl)).To(Succeed())
			Expect(w.AddCheck("the controller knows every pod", ctrl.check)).To(Succeed())
			Expect(inf.Start()).To(Succeed())
			Expect(w).To(worldtest.HaveConverged(time.Minute)) // runs the check too

			// The watch expires (410) while b is deleted: the Reflector relists, and the
			// controller hears of the delete it missed as a tombstone (docs/informer.md §14 T5).
			Expect(w.Apply(world.Op{Kind: world.OpCloseWatches, Code: 410})).To(Succeed())
			Expect(w.Apply(world.Op{Kind: world.OpDelete, Name: "b"})).To(Succeed())
			Expect(w).To(worldtest.HaveConverged(time.Minute)) // simulated time, real microseconds
			Expect(ctrl.tombstones).To(Equal([]string{"default/b"}), "seed %d", seed)
			Expect(ctrl.known).To(Equal(map[string]bool{"default/a": true}), "seed %d", seed)
		}
	})
})
