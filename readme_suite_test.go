package informersim_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim/world"
)

// The README's "Testing your handler in a Ginkgo spec" example, kept here so it cannot rot: a
// user's handler (here one that remembers the tombstones it was given) runs in a simulated world,
// the watch expires while a pod is deleted, and the handler learns of the delete from the relist.
var _ = Describe("the README example", func() {
	It("survives a watch that expires while a pod is deleted", func() {
		seed := uint64(GinkgoRandomSeed())
		w, err := world.New(seed, world.Config{})
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})).To(Succeed())

		var tombstones []string
		myHandler := informer.ResourceEventHandlerFuncs{
			DeleteFunc: func(obj any) {
				if tomb, ok := obj.(informer.DeletedFinalStateUnknown); ok {
					tombstones = append(tombstones, tomb.Key)
				}
			},
		}
		inf, err := w.AddInformer("inf1", world.InformerOptions{Namespace: "default"})
		Expect(err).NotTo(HaveOccurred())
		mine, err := w.AddHandler(inf, "controller", myHandler, world.HandlerOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(inf.Start()).To(Succeed())
		Expect(w.RunUntilConverged(time.Minute)).To(Succeed(), "seed %d", seed)

		// informer.md §7.7 and §14 T5: a 410 in the stream makes the Reflector relist, and the
		// delete it missed arrives as a DeletedFinalStateUnknown with the last known state. Pods
		// are deleted gracefully, as on a real apiserver (fakeapi.md §5.3): MODIFIED with
		// deletionTimestamp, then DELETED. The informer missed both, so the tombstone holds a@2,
		// the last state it saw, as the README says.
		Expect(w.Apply(world.Op{Kind: world.OpCloseWatches, Code: 410})).To(Succeed())
		Expect(w.Apply(world.Op{Kind: world.OpDelete, Name: "a"})).To(Succeed())
		Expect(w.RunUntilConverged(time.Minute)).To(Succeed(), "seed %d", seed)
		Expect(mine.Recorder().Strings()).To(Equal([]string{"add(default/a@2,true)", "del(tomb default/a@2)"}), "seed %d", seed)
		Expect(tombstones).To(Equal([]string{"default/a"}), "seed %d", seed)
	})
})
