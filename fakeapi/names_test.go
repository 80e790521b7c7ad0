package fakeapi

import (
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

// TestFastNameChecksAgreeWithValidators checks every fast check of names.go against the
// apimachinery validator it stands in for: on all short strings over an alphabet with every
// character class that matters, on strings at the length limits, and on random strings. The
// fast checks must agree exactly (a simple label key only for keys without "/", which it
// leaves to the validator).
func TestFastNameChecksAgreeWithValidators(t *testing.T) {
	const alphabet = "az09AZ-_./ é"
	var inputs []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		inputs = append(inputs, prefix)
		if n == 0 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			gen(prefix+alphabet[i:i+1], n-1)
		}
	}
	gen("", 4)
	for _, n := range []int{62, 63, 64, 252, 253, 254} {
		inputs = append(inputs, strings.Repeat("a", n), strings.Repeat("a.", n/2)+"b", "a"+strings.Repeat("-", n-2)+"b")
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 20000; i++ {
		b := make([]byte, 1+rnd.IntN(70))
		for j := range b {
			b[j] = "abz09-._AZ"[rnd.IntN(10)]
		}
		inputs = append(inputs, string(b))
	}
	checks := []struct {
		name      string
		fast      func(string) bool
		validator func(string) []string
	}{
		{"DNS1123Label", isDNS1123Label, validation.IsDNS1123Label},
		{"DNS1035Label", isDNS1035Label, validation.IsDNS1035Label},
		{"DNS1123Subdomain", isDNS1123Subdomain, validation.IsDNS1123Subdomain},
		{"LabelValue", isLabelValue, validation.IsValidLabelValue},
		{"SimpleLabelKey", isSimpleLabelKey, validation.IsQualifiedName},
	}
	for _, c := range checks {
		for _, s := range inputs {
			want := len(c.validator(s)) == 0
			if c.name == "SimpleLabelKey" && strings.Contains(s, "/") {
				want = false
			}
			if got := c.fast(s); got != want {
				t.Fatalf("%s(%q) = %v, validator says valid=%v", c.name, s, got, want)
			}
		}
	}
}
