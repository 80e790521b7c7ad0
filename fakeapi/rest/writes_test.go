package rest

import (
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/validation"
)

// TestManagerOrUserAgent checks the default field manager's shortcut for printable ASCII
// against the rule in full (productManager: the User-Agent up to its first "/", without its
// unprintable characters, cut to the longest valid manager), on user agents as clients send them
// and random ones (control characters, non-ASCII, invalid UTF-8, past the length limit). A
// fieldManager parameter wins.
func TestManagerOrUserAgent(t *testing.T) {
	want := func(ua string) string {
		product, _, _ := strings.Cut(ua, "/")
		return productManager(product)
	}
	agents := []string{
		"", "kubectl/v1.32.0 (linux/amd64) kubernetes/abc", "sc.test/v0.0.0 (linux/amd64) kubernetes/$Format",
		"my controller", "tab\there/1", "é-manager/2", "\xff\xfe/3", strings.Repeat("m", 200) + "/1",
		strings.Repeat("m", validation.FieldManagerMaxLength), strings.Repeat("é", 100), "del\x7f/1", "~ok~",
	}
	r := rand.New(rand.NewPCG(25, 7))
	const alphabet = "ab /~\x00\x1f\x7f\xc3\xa9\xff\t"
	for range 2000 {
		b := make([]byte, r.IntN(160))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		agents = append(agents, string(b))
	}
	for _, ua := range agents {
		if got, w := managerOrUserAgent("", ua), want(ua); got != w {
			t.Fatalf("managerOrUserAgent(%q) = %q, want %q", ua, got, w)
		}
	}
	if got := managerOrUserAgent("mine", "kubectl/v1"); got != "mine" {
		t.Errorf("with a fieldManager: %q, want mine", got)
	}
}
