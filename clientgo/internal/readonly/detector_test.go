package readonly

import (
	"runtime"
	"testing"

	"github.com/informersim/informersim/clientgo/internal/testobjects"
)

// TestDetectorComparisonsLeaveOtherCallers: a comparison not asked by client-go's detector
// (here, the test's own) is left to reflect.DeepEqual, undecided and uncounted; the detector's
// own calls are answered in the deterministic mode only, where the overlay's reflect.DeepEqual
// asks (clientgo's TestSeededDetectorComparisons).
func TestDetectorComparisonsLeaveOtherCallers(t *testing.T) {
	d := NewDetectorComparisons()
	obj := testobjects.RichDeployment()
	var pcs [1]uintptr
	runtime.Callers(1, pcs[:])
	if _, decided := d.DeepEqual(obj, obj.DeepCopy(), pcs[0]); decided {
		t.Error("a comparison the detector did not ask was decided")
	}
	if d.Answered() != 0 {
		t.Errorf("answered %d, want 0", d.Answered())
	}
}

// TestCompareAnswersAsDeepEqual follows one object through comparisons: equal, changed (and
// told so with the field that changed), equal again once restored.
func TestCompareAnswersAsDeepEqual(t *testing.T) {
	obj := testobjects.RichDeployment()
	cp := obj.DeepCopy()
	equal, snap := Compare(obj, cp, nil)
	if !equal || snap == nil {
		t.Fatalf("first comparison: equal %v, snapshot %v", equal, snap != nil)
	}
	if equal, again := Compare(obj, cp, snap); !equal || again != snap {
		t.Fatalf("unchanged: equal %v, same snapshot %v", equal, again == snap)
	}
	obj.Labels["app"] = "changed"
	if equal, next := Compare(obj, cp, snap); equal || next != nil {
		t.Fatalf("changed: equal %v, snapshot %v", equal, next != nil)
	}
	if got := ChangedFields(cp, obj); len(got) != 1 || got[0] != "ObjectMeta" {
		t.Errorf("ChangedFields = %v, want [ObjectMeta]", got)
	}
	obj.Labels["app"] = cp.Labels["app"]
	if equal, next := Compare(obj, cp, nil); !equal || next == nil {
		t.Fatalf("restored: equal %v, snapshot %v", equal, next != nil)
	}
}
