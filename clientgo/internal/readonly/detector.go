package readonly

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/informersim/informersim/clientgo/internal/introspect"
)

// client-go's cache mutation detector keeps, for each object an informer caches, the object and
// a deep copy, and every second of its clock asks reflect.DeepEqual of each pair, from this
// method (checked with k8s.io/client-go v0.37.2).
var detectorCalls = introspect.NewCallerCheck("k8s.io/client-go/tools/cache.(*defaultCacheMutationDetector).CompareObjects")

// DetectorComparisons answers, during one run, the comparisons client-go's cache mutation
// detector asks reflect.DeepEqual: each pair (the cached object, the detector's copy) by
// Compare, keeping the pair's snapshot for the next second's comparison. The detector compares
// every object it holds every second, nearly always unchanged: a snapshot answers those at about
// a hundredth of DeepEqual's cost. Its DeepEqual method is what reflect.DeepEqual asks first in
// the deterministic mode (goseed.AnswerDeepEqual) while the run goes on.
type DetectorComparisons struct {
	mu    sync.Mutex
	snaps map[[2]unsafe.Pointer]*Snapshot
	// answered counts the comparisons answered here, for tests and the run's diagnostics.
	answered atomic.Int64
}

// NewDetectorComparisons returns the comparisons of one run, none answered yet.
func NewDetectorComparisons() *DetectorComparisons {
	return &DetectorComparisons{snaps: map[[2]unsafe.Pointer]*Snapshot{}}
}

// DeepEqual answers a call of reflect.DeepEqual(x, y) that returns to caller, with decided set
// when the detector made it; any other call (another caller, or values that are not pointers)
// it leaves to DeepEqual.
func (d *DetectorComparisons) DeepEqual(x, y any, caller uintptr) (equal, decided bool) {
	if !detectorCalls.In(caller) {
		return false, false
	}
	key := [2]unsafe.Pointer{pointerOf(x), pointerOf(y)}
	if key[0] == nil || key[1] == nil {
		return false, false
	}
	d.mu.Lock()
	last := d.snaps[key]
	d.mu.Unlock()
	equal, next := Compare(x, y, last)
	if next != last {
		d.mu.Lock()
		if next != nil {
			d.snaps[key] = next
		} else {
			delete(d.snaps, key)
		}
		d.mu.Unlock()
	}
	d.answered.Add(1)
	return equal, true
}

// Answered is how many of the detector's comparisons were answered here.
func (d *DetectorComparisons) Answered() int64 { return d.answered.Load() }

// pointerOf is what v points to, nil when v is not a non-nil pointer.
func pointerOf(v any) unsafe.Pointer {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil
	}
	return rv.UnsafePointer()
}
