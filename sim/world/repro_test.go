package world

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Ginkgo's -ginkgo.focus flag prints as "" through flag.Lookup, so the repro line read it from the
// test binary's arguments; it puts the focus after -args, where go test passes it on as is (before
// the package, go test would take the focus text for a package).
func TestReproCarriesGinkgoFocus(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, nil},
		{[]string{"-test.run=TestX"}, nil},
		{[]string{"-ginkgo.focus=the color controller"}, []string{"the color controller"}},
		{[]string{"--ginkgo.focus", "a b", "-ginkgo.v", "-ginkgo.focus=c"}, []string{"a b", "c"}},
		{[]string{"-ginkgo.focus"}, nil},
		{[]string{"--", "-ginkgo.focus=x"}, nil},
		{[]string{"-ginkgo.focus-file=x.go"}, nil},
	} {
		if got := ginkgoFocus(c.args); !slices.Equal(got, c.want) {
			t.Errorf("ginkgoFocus(%q) = %q, want %q", c.args, got, c.want)
		}
	}

	saved := os.Args
	t.Cleanup(func() { os.Args = saved })
	os.Args = []string{saved[0], "-test.v", "-ginkgo.focus=it's red"}
	line := Repro(7)
	want := ` ./sim/world -args -ginkgo.focus='it'\''s red'`
	if !strings.HasPrefix(line, "INFORMERSIM_SEED=7 go test") || !strings.HasSuffix(line, want) {
		t.Errorf("Repro(7) = %q, want it to end with %q", line, want)
	}
	os.Args = []string{saved[0]}
	if line := Repro(7); strings.Contains(line, "ginkgo") {
		t.Errorf("Repro(7) without a focus = %q, names ginkgo", line)
	}
}

// A sweep of no seeds would pass without running anything; one past the largest seed would wrap.
func TestSeedsRefusesEmptyAndWrappingSweeps(t *testing.T) {
	t.Setenv(SeedEnv, "")
	for _, c := range []struct {
		first, n uint64
		want     string
	}{
		{1, 0, "n is 0"},
		{^uint64(0) - 1, 3, "past the largest uint64"},
	} {
		if _, err := Seeds(c.first, c.n); err == nil || !strings.HasPrefix(err.Error(), "world: Seeds: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Seeds(%d, %d) = %v, want an error containing %q", c.first, c.n, err, c.want)
		}
	}
	if got, err := Seeds(^uint64(0)-1, 2); err != nil || !slices.Equal(got, []uint64{^uint64(0) - 1, ^uint64(0)}) {
		t.Errorf("Seeds(max-1, 2) = %v, %v; want the last two seeds", got, err)
	}
	t.Setenv(SeedEnv, "5")
	if got, err := Seeds(1, 0); err != nil || !slices.Equal(got, []uint64{5}) {
		t.Errorf("Seeds(1, 0) with %s=5 = %v, %v; want the replayed seed", SeedEnv, got, err)
	}
}

// Goal: TestRepro's line runs the one subtest that failed: each element of its name anchored and
// quoted, in go test's slash-separated form, so neither a sibling subtest nor one whose name
// merely contains it matches. Method: the line for this test's subtests, its pattern matched
// element by element as go test matches it, against the subtest's name and its siblings'.
func TestTestReproNamesTheSubtest(t *testing.T) {
	t.Run("seed 42 (a+b)", func(t *testing.T) {
		line := TestRepro(t.Name(), 42)
		want := `INFORMERSIM_SEED=42 go test -run '^TestTestReproNamesTheSubtest$/^seed_42_\(a\+b\)$' ./sim/world`
		if line != want {
			t.Fatalf("TestRepro:\n got %s\nwant %s", line, want)
		}
		pattern := strings.Trim(strings.Fields(line)[4], "'")
		matches := func(name string) bool {
			ps, ns := strings.Split(pattern, "/"), strings.Split(name, "/")
			for i, p := range ps {
				if i >= len(ns) || !regexp.MustCompile(p).MatchString(ns[i]) {
					return false
				}
			}
			return true
		}
		for name, want := range map[string]bool{
			t.Name(): true,
			"TestTestReproNamesTheSubtest/seed_42_(a+b)_again": false,
			"TestTestReproNamesTheSubtest/seed_4":              false,
			"TestOther/seed_42_(a+b)":                          false,
		} {
			if got := matches(name); got != want {
				t.Errorf("%s matches %s: %v, want %v", pattern, name, got, want)
			}
		}
	})
	if got, want := TestRepro("", 7), Repro(7); got != want {
		t.Errorf("TestRepro with no name: %q, want Repro's %q", got, want)
	}
}
