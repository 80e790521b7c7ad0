package worldtest_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/worldtest"
)

// The Ginkgo specs of this package: NewWorld's repro line focuses the spec that built the world.
func TestSpecs(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "worldtest")
}

var _ = Describe("NewWorld's repro line", func() {
	It("replays this spec alone (it's named by its full text)", func() {
		line := worldtest.SpecRepro(42)
		Expect(line).To(HavePrefix("INFORMERSIM_SEED=42 go test"))
		Expect(line).To(ContainSubstring(" ./sim/world/worldtest -args -ginkgo.focus='"))
		Expect(strings.Count(line, "-ginkgo.focus")).To(Equal(1))

		// What the shell hands the binary is a regexp that matches this spec's text and no other.
		out, err := exec.Command("sh", "-c", "printf %s "+line[strings.Index(line, "-ginkgo.focus="):]).Output()
		Expect(err).NotTo(HaveOccurred())
		focus := regexp.MustCompile(strings.TrimPrefix(string(out), "-ginkgo.focus="))
		// Ginkgo matches it against the suite's description, a space, and the spec's full text.
		Expect(focus.MatchString("worldtest "+CurrentSpecReport().FullText())).To(BeTrue(), "%s", focus)
		Expect(focus.MatchString("worldtest NewWorld's repro line replays this spec alone")).To(BeFalse())
		Expect(focus.MatchString("worldtest " + CurrentSpecReport().FullText() + " too")).To(BeFalse())

		// A failing run's error carries it.
		w, err := worldtest.NewWorld(42, world.Config{})
		Expect(err).NotTo(HaveOccurred())
		inf, err := w.AddInformer("inf1", world.InformerSpec{})
		Expect(err).NotTo(HaveOccurred())
		_, err = w.AddHandler(inf, "bad", informer.ResourceEventHandlerFuncs{AddFunc: func(any) { panic("boom") }}, world.HandlerOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Apply(world.Op{Kind: world.OpCreate, Name: "a"})).To(Succeed())
		Expect(inf.Start()).To(Succeed())
		err = w.RunUntilConverged(time.Minute)
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("repro: " + line))
	})

	It("is NewWorldFromConfig's too, with the apiserver's and the engine's settings", func() {
		w, err := worldtest.NewWorldFromConfig(sim.Config{Seed: 7, Policy: sim.PolicyFIFO}, fakeapi.Config{Replicas: 3}, world.Config{})
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Server().Replicas().Len()).To(Equal(3))
		Expect(w.Sim().Config().Policy).To(Equal(sim.PolicyFIFO))
		Expect(w.Sim().Config().Repro).To(Equal(worldtest.SpecRepro(7)))
		Expect(w.Sim().Config().Repro).To(ContainSubstring("-ginkgo.focus="))

		// A repro line given is kept.
		w, err = worldtest.NewWorldFromConfig(sim.Config{Seed: 7, Repro: "my own line"}, fakeapi.Config{}, world.Config{})
		Expect(err).NotTo(HaveOccurred())
		Expect(w.Sim().Config().Repro).To(Equal("my own line"))
	})
})

// Outside a spec there is nothing to focus: SpecRepro is world.Repro.
func TestSpecReproOutsideASpec(t *testing.T) {
	if got, want := worldtest.SpecRepro(7), world.Repro(7); got != want {
		t.Errorf("SpecRepro(7) = %q outside a spec, want world.Repro's %q", got, want)
	}
}
