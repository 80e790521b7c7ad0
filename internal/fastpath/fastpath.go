package fastpath

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
)

// Trick is one speed trick.
type Trick uint8

// The tricks, each named by what it replaces; docs/performance.md says what each buys.
const (
	// ReadOnlySnapshots: clientgo's read-only check compares snapshots of a lent object's
	// memory (clientgo/internal/readonly) instead of reflect.DeepEqual with its copy.
	ReadOnlySnapshots Trick = iota
	// DetectorSnapshots: in the deterministic mode, client-go's cache mutation detector's
	// comparisons are answered from those snapshots instead of by reflect.DeepEqual.
	DetectorSnapshots
	// SharedEncodings: the REST front encodes an object's committed version once per encoding
	// and shares it between responses (fakeapi/rest/encache.go).
	SharedEncodings
	// ManagedFieldsAccessors: kube's field manager reads and writes managedFields through
	// accessors that skip Unstructured's conversions (kube/managedobject.go).
	ManagedFieldsAccessors
	// ConversionPlans: kube converts between typed objects and maps with plans built once per
	// type instead of runtime.DefaultUnstructuredConverter.
	ConversionPlans

	numTricks
)

// names are the tricks' names in INFORMERSIM_PLAIN.
var names = [numTricks]string{
	ReadOnlySnapshots:      "readonly-snapshots",
	DetectorSnapshots:      "detector-snapshots",
	SharedEncodings:        "shared-encodings",
	ManagedFieldsAccessors: "managed-fields-accessors",
	ConversionPlans:        "conversion-plans",
}

// EnvPlain is the environment variable that takes tricks out by name (the package's contract).
const EnvPlain = "INFORMERSIM_PLAIN"

// out holds the tricks taken out: by INFORMERSIM_PLAIN before main, by SetOut in tests. Its
// loads are atomic because tests flip a trick while other runs' goroutines read it.
var out [numTricks]atomic.Bool

func init() {
	v, ok := os.LookupEnv(EnvPlain)
	if !ok || v == "" {
		return
	}
	taken, err := Parse(v)
	if err != nil {
		// A measurement of the wrong thing is worse than none; the process has not started its
		// work yet, so it stops with the message alone rather than a panic's trace.
		fmt.Fprintln(os.Stderr, "informersim:", err)
		os.Exit(2)
	}
	for _, t := range taken {
		out[t].Store(true)
	}
	if On {
		fmt.Fprintf(os.Stderr, "informersim: speed tricks taken out by %s: %s\n", EnvPlain, strings.Join(Names(taken), ","))
	}
}

// Use reports whether trick t is in: the build has no tag plain and INFORMERSIM_PLAIN does not
// name it.
func Use(t Trick) bool { return On && !out[t].Load() }

// SetOut takes trick t out (taken) or puts it back, for a test that compares a trick with its
// standard code in one process, and returns what undoes it.
func SetOut(t Trick, taken bool) (restore func()) {
	was := out[t].Swap(taken)
	return func() { out[t].Store(was) }
}

// String is the trick's name in INFORMERSIM_PLAIN.
func (t Trick) String() string {
	if t < numTricks {
		return names[t]
	}
	return fmt.Sprintf("Trick(%d)", uint8(t))
}

// Tricks returns every trick, in the order of their constants.
func Tricks() []Trick {
	all := make([]Trick, numTricks)
	for i := range all {
		all[i] = Trick(i)
	}
	return all
}

// Names returns the names of ts.
func Names(ts []Trick) []string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return s
}

// Parse reads a value of INFORMERSIM_PLAIN: trick names separated by commas, or all. It returns
// the tricks in the order of their constants, each once.
func Parse(v string) ([]Trick, error) {
	var taken [numTricks]bool
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if name == "all" {
			taken = [numTricks]bool{}
			for i := range taken {
				taken[i] = true
			}
			continue
		}
		found := false
		for i, n := range names {
			if n == name {
				taken[i], found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("%s=%q: %q is no speed trick's name; the names are all, %s", EnvPlain, v, name, strings.Join(names[:], ", "))
		}
	}
	var ts []Trick
	for i, t := range taken {
		if t {
			ts = append(ts, Trick(i))
		}
	}
	return ts, nil
}
