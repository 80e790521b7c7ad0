package informersim_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"go.uber.org/goleak"

	"github.com/informersim/informersim/internal/invariant"
)

// TestMain fails the root suite if any goroutine outlives it: the simulation path starts none,
// and the goroutine driver must stop every goroutine it starts. Tests run with the thorough
// checks (invariant.Thorough), benchmarks without.
func TestMain(m *testing.M) {
	invariant.ThoroughUnlessBenchmarking()
	goleak.VerifyTestMain(m,
		// Ginkgo's interrupt handler watches for SIGINT for the life of the process; it is the
		// suite's goroutine, not ours.
		goleak.IgnoreAnyFunction("github.com/onsi/ginkgo/v2/internal/interrupt_handler.(*InterruptHandler).registerForInterrupts.func2"),
	)
}

// TestInformersim is the one Ginkgo suite of the module root (RunSpecs may run only once per
// package). Specs live in the other *_test.go files of this directory.
func TestInformersim(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "informersim")
}

var _ = Describe("the suite", func() {
	It("runs with Gomega wired in", func() {
		Expect(true).To(BeTrue())
	})
})
