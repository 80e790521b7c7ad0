package clientgo_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/internal/pinned"
)

// Goal: harness runs do not move when the harness, the REST front, kube's conversions or the
// world change for speed, and the plain build (-tags plain, internal/fastpath: every speed trick
// off) runs the same runs. Method: the mirror controller's trace hashes (TestHarnessMirror's
// runs: a generated workload with watch closes, 410s, compactions and failed requests), seeds
// 1..4 with one and two workers, equal the ones pinned in testdata/pinned-hashes.txt (see
// internal/pinned for rewriting it after a change of behavior); make test-plain runs it in the
// plain build.
func TestPinnedHarnessHashes(t *testing.T) {
	var names []string
	for _, workers := range []string{"1", "2"} {
		for _, seed := range pinned.Seeds(4) {
			names = append(names, "workers="+workers+"/seed="+seed)
		}
	}
	pinned.Check(t, "testdata/pinned-hashes.txt", names, func(name string) string {
		w, s, _ := strings.Cut(name, "/")
		workers, _ := strconv.Atoi(strings.TrimPrefix(w, "workers="))
		seed, _ := strconv.ParseUint(strings.TrimPrefix(s, "seed="), 10, 64)
		rep, err := clientgo.Run(t, mirrorConfig(seed, workers, nil))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return rep.Hash
	})
}
