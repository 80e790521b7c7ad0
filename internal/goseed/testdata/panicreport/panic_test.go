// Package panicreport is run by TestOverlayReportsTheDetectorsPanic with the overlay: inside a
// testing/synctest bubble during a run, the panic client-go's cache mutation detector makes ends
// only its goroutine and is written to the run's reports; outside a run it is not caught (the
// test checks that only by the line count). And the function given to AnswerDeepEqual answers
// reflect.DeepEqual's calls, and the ranges whose order follows addresses are counted.
package panicreport

import (
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"testing/synctest"

	"github.com/informersim/informersim/internal/goseed"
)

func TestDetectorPanicReported(t *testing.T) {
	if !goseed.Active() {
		t.Fatal("built without the overlay")
	}
	reports, err := goseed.NewReports()
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		goseed.Begin(1, reports)
		defer goseed.End()
		deferred := false
		go func() {
			defer func() { deferred = true }()
			panic("cache *v1.Deployment modified")
		}()
		synctest.Wait()
		if !deferred {
			t.Error("the detector's goroutine ended without running its deferred calls")
		}
	})
	if got, want := reports.Take(), []string{"cache *v1.Deployment modified"}; !slices.Equal(got, want) {
		t.Fatalf("reports %q, want %q", got, want)
	}
	if got := reports.Take(); got != nil {
		t.Fatalf("a second Take returned %q", got)
	}
}

func TestOtherPanicsGoOn(t *testing.T) {
	reports, err := goseed.NewReports()
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		goseed.Begin(1, reports)
		defer goseed.End()
		recovered := make(chan any, 1)
		go func() {
			defer func() { recovered <- recover() }()
			panic("cache of mine modified?") // not the detector's: it ends in "modified?"
		}()
		if r := <-recovered; r == nil {
			t.Error("a panic that is not the detector's was caught")
		}
	})
	if got := reports.Take(); got != nil {
		t.Fatalf("reports %q, want none", got)
	}
}

// TestAnswerDeepEqual: with the overlay, the function given to AnswerDeepEqual answers the
// calls it decides, leaves the others to reflect.DeepEqual, and is gone after AnswerDeepEqual(nil).
func TestAnswerDeepEqual(t *testing.T) {
	asked, fromHere := 0, 0
	ok := goseed.AnswerDeepEqual(func(x, y any, caller uintptr) (equal, decided bool) {
		asked++
		if f, _ := runtime.CallersFrames([]uintptr{caller}).Next(); f.Function == "github.com/informersim/informersim/internal/goseed/testdata/panicreport.TestAnswerDeepEqual" {
			fromHere++
		}
		if s, isString := x.(string); isString && s == "decided" {
			return true, true
		}
		return false, false
	})
	if !ok {
		t.Fatal("AnswerDeepEqual reports no overlay")
	}
	if !reflect.DeepEqual("decided", 1) {
		t.Error("DeepEqual did not take the answer the function decided")
	}
	if reflect.DeepEqual("other", 1) || !reflect.DeepEqual([]int{1}, []int{1}) {
		t.Error("DeepEqual did not compare the calls the function left to it")
	}
	if asked != 3 || fromHere != 3 {
		t.Errorf("the function was asked %d times, %d of them from the test; want 3 and 3", asked, fromHere)
	}
	goseed.AnswerDeepEqual(nil)
	if reflect.DeepEqual("decided", 1) || asked != 3 {
		t.Errorf("after AnswerDeepEqual(nil), DeepEqual still asked the function (%d asks)", asked)
	}
}

// TestAddressKeyedRangesCounted: during a run, a range of the bubble over a map of more than
// eight entries keyed by pointers is counted, with its type; a small one (its entries keep the
// order they went in), one keyed by strings, and one ranged outside the bubble are not.
func TestAddressKeyedRangesCounted(t *testing.T) {
	fill := func(n int) (map[*int]bool, map[string]bool) {
		byPointer, byName := map[*int]bool{}, map[string]bool{}
		for i := range n {
			byPointer[new(int)] = true
			byName[strconv.Itoa(i)] = true
		}
		return byPointer, byName
	}
	ranged := 0
	rangeOver := func(maps ...any) {
		for _, m := range maps {
			switch m := m.(type) {
			case map[*int]bool:
				for range m {
					ranged++
				}
			case map[string]bool:
				for range m {
					ranged++
				}
			}
		}
	}
	bigByPointer, bigByName := fill(20)
	smallByPointer, _ := fill(5)
	synctest.Test(t, func(t *testing.T) {
		goseed.Begin(1, nil)
		defer goseed.End()
		rangeOver(bigByPointer, bigByName, smallByPointer)
		n, types, known := goseed.AddressKeyedRanges()
		if !known || n != 1 || !slices.Equal(types, []string{"map[*int]bool"}) {
			t.Errorf("in the bubble: %d ranges counted, types %q (known %v); want 1 of map[*int]bool", n, types, known)
		}
	})
	goseed.Begin(2, nil)
	rangeOver(bigByPointer) // outside any bubble
	goseed.End()
	if n, _, _ := goseed.AddressKeyedRanges(); n != 0 {
		t.Errorf("a run's range outside its bubble was counted: %d", n)
	}
	if ranged != 20+20+5+20 {
		t.Fatalf("ranged over %d entries", ranged)
	}
}
