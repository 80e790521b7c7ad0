package clientgo

import (
	"runtime"
	"strconv"
	"strings"

	"github.com/informersim/informersim/sim"
)

// controller-runtime's priority queue (on by default since v0.22) hands a reconciler's requests
// out by priority: an event whose object did not change (the same resourceVersion, as a relist
// gives for most objects) gets a low priority, any other the normal one. Its intake is a buffer
// that a goroutine of the queue flushes while another hands items to an idle worker, so when a
// relist delivers a burst of changed and unchanged objects, whether the worker gets the first
// unchanged object before a changed one arrived in the queue is a race between goroutines of the
// controller, which no step of the world decides (two informers relisting at one instant mix
// their bursts too). The harness cannot order it; it counts it: a relist of two objects or more
// by an informer of a run whose controller has a priority queue is an unordered batch
// (Report.UnorderedBatches, with a trace line). A run without one replays from its seed as far
// as the world can tell; a manager built with config.Controller{UsePriorityQueue:
// ptr.To(false)} has a FIFO queue, and its relists are not counted.

// priorityQueueFrame is the frame of the queue's goroutine that hands items out.
const priorityQueueFrame = "sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue.(*priorityqueue["

// noteRelist counts an unordered batch when a LIST an informer received is a relist of two
// objects or more (the informer had listed before) and the controller has a priority queue.
func (b *bubble) noteRelist(view string, keys map[string]bool) {
	if _, relist := b.views[view]; !relist || len(keys) < 2 || !b.hasPriorityQueue() {
		return
	}
	b.unorderedBatches++
	b.s.Emit(ControllerActor, "unordered-relist", sim.F("view", view), sim.F("objects", strconv.Itoa(len(keys))), sim.F("why", "priority-queue"))
}

// hasPriorityQueue reports whether a goroutine of this run's controller belongs to
// controller-runtime's priority queue; once seen, it is remembered.
func (b *bubble) hasPriorityQueue() bool {
	if !b.priorityQueue {
		b.priorityQueue = bubbleRuns(b.driverID, priorityQueueFrame)
	}
	return b.priorityQueue
}

// bubbleRuns reports whether a goroutine of the driver's bubble has frame in its stack.
func bubbleRuns(driver uint64, frame string) bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	bubble := ""
	stacks := strings.Split(string(buf), "\n\n")
	for _, s := range stacks {
		if id, state, ok := goroutineHeader(s); ok && id == driver {
			bubble = bubbleOf(state)
		}
	}
	if bubble == "" {
		return false
	}
	for _, s := range stacks {
		if _, state, ok := goroutineHeader(s); ok && bubbleOf(state) == bubble && strings.Contains(s, frame) {
			return true
		}
	}
	return false
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
