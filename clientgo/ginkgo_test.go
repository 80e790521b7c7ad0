package clientgo_test

import (
	"strings"
	"testing"

	"github.com/informersim/informersim/clientgo"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// ginkgoSuiteT is the *testing.T of the go test function running the Ginkgo suite: the bubble a
// run from a spec goes in (GinkgoT() is not a *testing.T).
var ginkgoSuiteT *testing.T

// TestGinkgoSuite runs this package's Ginkgo specs: the harness used from a spec, as a Ginkgo
// user's controller tests would.
func TestGinkgoSuite(t *testing.T) {
	ginkgoSuiteT = t
	RegisterFailHandler(Fail)
	RunSpecs(t, "clientgo harness from Ginkgo")
}

var _ = Describe("clientgo.Run from a Ginkgo spec", func() {
	It("runs a controller with GinkgoT() in the suite's *testing.T (InSuite), replaying from its seed", func() {
		cfg := mirrorConfig(3, 2, nil)
		rep, err := clientgo.Run(clientgo.InSuite(ginkgoSuiteT, GinkgoT()), cfg)
		Expect(err).NotTo(HaveOccurred(), "%v", rep)
		again, err := clientgo.Run(clientgo.InSuite(ginkgoSuiteT, GinkgoT()), cfg)
		Expect(err).NotTo(HaveOccurred())
		Expect(again.Hash).To(Equal(rep.Hash))
		Expect(rep.Trace).To(ContainSubstring("configmaps/configmaps#1"))
	})

	It("says what it needs when given GinkgoT() alone", func() {
		_, err := clientgo.Run(GinkgoT(), mirrorConfig(3, 2, nil))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(ContainSubstring("clientgo.InSuite(suiteT, t)"))
		Expect(strings.HasPrefix(err.Error(), "clientgo: Run: t is a ")).To(BeTrue(), err.Error())
	})
})
