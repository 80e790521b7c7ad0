package introspect

import (
	"bytes"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// GoroutineID returns the running goroutine's id, read from its stack header ("goroutine 12 [").
func GoroutineID() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	s := strings.TrimPrefix(string(buf[:n]), "goroutine ")
	if i := strings.IndexByte(s, ' '); i > 0 {
		id, err := strconv.ParseUint(s[:i], 10, 64)
		if err == nil {
			return id
		}
	}
	return 0
}

// BubbleStacks calls f with the stack and state of each goroutine of self's testing/synctest
// bubble in all (runtime.Stack's text of every goroutine), but self and testing/synctest's own,
// until f returns false: the goroutines of the code under test, when self is the bubble's driver.
func BubbleStacks(all []byte, self uint64, f func(stack []byte, state string) bool) {
	stacks := bytes.Split(all, []byte("\n\n"))
	bubble := ""
	for _, s := range stacks {
		if id, state, ok := stackHeader(s); ok && id == self {
			bubble = bubbleOf(state)
		}
	}
	if bubble == "" {
		return
	}
	for _, s := range stacks {
		id, state, ok := stackHeader(s)
		if !ok || id == self || bubbleOf(state) != bubble || bytes.Contains(s, []byte("testing/synctest.")) {
			continue
		}
		if !f(s, state) {
			return
		}
	}
}

// stackBufs keeps the buffers AllStacks fills: a megabyte or more made (and zeroed) at each
// read of the stacks was a third of the bytes a harness run allocated (bubbleRuns reads them
// once or twice a run).
var stackBufs = sync.Pool{New: func() any { return new([]byte) }}

// AllStacks calls f with the stacks of every goroutine of the process, in a buffer that is
// reused once f returns (f must not keep it).
func AllStacks(f func(all []byte)) {
	buf := stackBufs.Get().(*[]byte)
	defer stackBufs.Put(buf)
	if len(*buf) == 0 {
		*buf = make([]byte, 1<<20)
	}
	for {
		n := runtime.Stack(*buf, true)
		if n < len(*buf) {
			f((*buf)[:n])
			return
		}
		*buf = make([]byte, 2*len(*buf))
	}
}

// stackHeader is goroutineHeader of a stack's first line.
func stackHeader(stack []byte) (uint64, string, bool) {
	line, _, _ := bytes.Cut(stack, []byte("\n"))
	return goroutineHeader(string(line))
}

// goroutineHeader parses "goroutine 12 [chan receive (durable), synctest bubble 1]:".
func goroutineHeader(s string) (uint64, string, bool) {
	s, ok := strings.CutPrefix(s, "goroutine ")
	if !ok {
		return 0, "", false
	}
	line, _, _ := strings.Cut(s, "\n")
	idText, state, ok := strings.Cut(line, " ")
	if !ok {
		return 0, "", false
	}
	id, err := strconv.ParseUint(idText, 10, 64)
	return id, state, err == nil
}

// bubbleOf is the "synctest bubble N" of a goroutine's state, "" outside bubbles.
func bubbleOf(state string) string {
	_, after, ok := strings.Cut(state, "synctest bubble ")
	if !ok {
		return ""
	}
	n, _, _ := strings.Cut(after, "]")
	n, _, _ = strings.Cut(n, ",")
	return "synctest bubble " + n
}

// CurrentBubble is the running goroutine's testing/synctest bubble, "synctest bubble N" as its
// stack header says it, or "" outside a bubble (or when the header cannot be read).
func CurrentBubble() string {
	var buf [96]byte
	n := runtime.Stack(buf[:], false)
	_, state, ok := stackHeader(buf[:n])
	if !ok {
		return ""
	}
	return bubbleOf(state)
}
