package goseed

import (
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// EnvSeed is the environment variable through which a process built with the overlay hands the
// runtime a run's seed: setting it (os.Setenv) takes effect at once.
const EnvSeed = "INFORMERSIM_RUNTIME_SEED"

// Begin makes seed the runtime's seed and begins a run: the maps written from now, the ranges
// and selects begun from now draw from it, and until End the scheduler is kept from deciding by
// the clock (no preemption for a time slice, a goroutine made ready waits its turn at the end of
// the queue, no mutex turns to starvation mode). With reports (nil: none), a panic of client-go's
// cache mutation detector in a testing/synctest bubble ends only its goroutine and is reported
// there (Reports). Without the overlay it only sets EnvSeed. Runs must not overlap: the runtime
// holds one seed per process.
func Begin(seed uint64, reports *Reports) {
	v := strconv.FormatUint(seed, 10)
	if reports != nil {
		v += "," + strconv.FormatUint(uint64(reports.f.Fd()), 10)
	}
	_ = os.Setenv(EnvSeed, v)
}

// Reports is a file the runtime writes the panics of client-go's cache mutation detector to
// during runs, one line each ("cache *v1.Deployment modified"), in place of ending the process.
type Reports struct {
	f    *os.File
	read int64
}

// NewReports makes the file, which is removed at once: only its descriptor is kept.
func NewReports() (*Reports, error) {
	f, err := os.CreateTemp("", "informersim-reports-")
	if err != nil {
		return nil, err
	}
	_ = os.Remove(f.Name())
	return &Reports{f: f}, nil
}

// Take returns the lines written since the last Take.
func (r *Reports) Take() []string {
	st, err := r.f.Stat()
	if err != nil || st.Size() <= r.read {
		return nil
	}
	buf := make([]byte, st.Size()-r.read)
	n, _ := r.f.ReadAt(buf, r.read)
	buf = buf[:n]
	// Only whole lines: the runtime writes a line at once, but a read may come between.
	last := strings.LastIndexByte(string(buf), '\n')
	if last < 0 {
		return nil
	}
	r.read += int64(last + 1)
	return strings.Split(string(buf[:last]), "\n")
}

// End ends the run Begin began: the scheduler is the clock's again. The seed stays.
func End() {
	_ = os.Setenv(EnvSeed, "")
}

var (
	activeOnce sync.Once
	active     bool
)

// Active reports whether this binary was built with the overlay. It asks the runtime, not the
// build: under one seed, two maps filled alike range in the same order, and under another seed
// in another (without the overlay, each map has a random hash seed and start, and two maps of 64
// keys range alike practically never). The answer is computed once; it leaves the runtime's seed as it found it.
func Active() bool {
	activeOnce.Do(func() {
		before, had := os.LookupEnv(EnvSeed)
		a, b, c := rangeOrder(1), rangeOrder(1), rangeOrder(2)
		active = a == b && a != c
		End()
		if had {
			_ = os.Setenv(EnvSeed, before)
		} else {
			_ = os.Unsetenv(EnvSeed)
		}
	})
	return active
}

// rangeOrder fills a new map under seed and says in what order it ranges.
func rangeOrder(seed uint64) string {
	Begin(seed, nil)
	m := make(map[string]int)
	for i := range 64 {
		m[strconv.Itoa(i)] = i
	}
	var b strings.Builder
	for k := range m {
		b.WriteString(k)
		b.WriteByte(',')
	}
	return b.String()
}

// AnswerDeepEqual makes h the first to answer each call of reflect.DeepEqual in the process,
// until AnswerDeepEqual(nil): h is given the two values and the return address of the call (a
// program counter in the function that called DeepEqual, as runtime.Callers gives it); when h
// returns decided, DeepEqual returns its equal, else DeepEqual compares as always. It reports
// false, and does nothing, in a binary built without the overlay.
func AnswerDeepEqual(h func(x, y any, caller uintptr) (equal, decided bool)) bool {
	a, ok := reflect.TypeOf(0).(interface {
		InformersimAnswerDeepEqual(func(x, y any, caller uintptr) (equal, decided bool))
	})
	if ok {
		a.InformersimAnswerDeepEqual(h)
	}
	return ok
}

// AddressKeyedTypesNamed is how many map types AddressKeyedRanges names at most: when it names
// fewer, it named the type of every range it counted.
const AddressKeyedTypesNamed = 8

// AddressKeyedRanges returns how many ranges the goroutines of the current (or last) run's
// bubble made over maps whose order follows the addresses of their keys (more than eight
// entries, keyed by pointers, channels, interfaces or structs holding one), which no seed
// decides, and the first of those maps' types; known is false in a binary built without the
// overlay.
func AddressKeyedRanges() (n uint64, types []string, known bool) {
	a, ok := reflect.TypeOf(0).(interface {
		InformersimAddressKeyedRanges() (uint64, []reflect.Type)
	})
	if !ok {
		return 0, nil, false
	}
	n, ts := a.InformersimAddressKeyedRanges()
	for _, t := range ts {
		types = append(types, t.String())
	}
	return n, types, true
}
