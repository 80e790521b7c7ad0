package introspect

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
)

// TestReaderContainsAcrossChunks places the string across each chunk boundary of the reader.
func TestReaderContainsAcrossChunks(t *testing.T) {
	s := []byte("sigs.k8s.io/controller-runtime/")
	for _, at := range []int{0, 1<<20 - len(s), 1<<20 - 5, 1 << 20, 2<<20 - 1, 3<<20 - len(s)} {
		data := make([]byte, 3<<20)
		copy(data[at:], s)
		if got, err := readerContains(bytes.NewReader(data[:max(at+len(s), 0)]), s); err != nil || !got {
			t.Errorf("at %d: %v, %v", at, got, err)
		}
		if got, err := readerContains(bytes.NewReader(data[:at+len(s)-1]), s); err != nil || got {
			t.Errorf("cut at %d: %v, %v", at, got, err)
		}
	}
}

// TestGoroutineID reads the calling goroutine's id from its own stack header, and another
// goroutine's differs.
func TestGoroutineID(t *testing.T) {
	id := GoroutineID()
	if id == 0 {
		t.Fatal("GoroutineID: 0, the header was not parsed")
	}
	other := make(chan uint64)
	go func() { other <- GoroutineID() }()
	if o := <-other; o == 0 || o == id {
		t.Fatalf("another goroutine's id %d, this one's %d", o, id)
	}
}

// TestBubbleStacks finds, from a bubble's goroutine, the bubble's other goroutines and not
// testing/synctest's own nor the caller.
func TestBubbleStacks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		self := GoroutineID()
		stop := make(chan struct{})
		go blockedInBubble(stop)
		synctest.Wait()
		var found []string
		AllStacks(func(all []byte) {
			BubbleStacks(all, self, func(stack []byte, state string) bool {
				found = append(found, string(stack))
				if !strings.Contains(state, "synctest bubble") {
					t.Errorf("state %q names no bubble", state)
				}
				return true
			})
		})
		close(stop)
		if len(found) != 1 || !strings.Contains(found[0], "blockedInBubble") {
			t.Fatalf("the bubble's goroutines other than the caller: %d stacks\n%s", len(found), strings.Join(found, "\n\n"))
		}
	})
}

func blockedInBubble(stop chan struct{}) { <-stop }

func TestCurrentBubble(t *testing.T) {
	if got := CurrentBubble(); got != "" {
		t.Errorf("outside a bubble: %q", got)
	}
	synctest.Test(t, func(t *testing.T) {
		outer := CurrentBubble()
		if !strings.HasPrefix(outer, "synctest bubble ") {
			t.Fatalf("in a bubble: %q", outer)
		}
		done := make(chan string)
		go func() { done <- CurrentBubble() }()
		if inner := <-done; inner != outer {
			t.Errorf("a goroutine of the bubble says %q, its starter %q", inner, outer)
		}
	})
}

// returnAddress is the address its call returns to, in the caller.
//
//go:noinline
func returnAddress() uintptr {
	var pcs [1]uintptr
	runtime.Callers(2, pcs[:])
	return pcs[0]
}

//go:noinline
func checkedCaller() uintptr { return returnAddress() }

func TestCallerCheck(t *testing.T) {
	const pkg = "github.com/informersim/informersim/clientgo/internal/introspect."
	c := NewCallerCheck(pkg + "checkedCaller")
	for i := range 2 { // the second time from what the first saw
		if !c.In(checkedCaller()) {
			t.Errorf("call %d: the caller was not recognised", i)
		}
		if c.In(returnAddress()) {
			t.Errorf("call %d: the test was taken for the caller", i)
		}
	}
	if NewCallerCheck(pkg + "TestCallerCheck").In(checkedCaller()) {
		t.Error("the caller was taken for its own caller")
	}
}
