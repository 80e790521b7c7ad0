package clientgo

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/informersim/informersim/clientgo/internal/introspect"
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
// (Report.Diagnostics.UnorderedBatches, with a trace line). A manager built with
// config.Controller{UsePriorityQueue: ptr.To(false)} has a FIFO queue, and its relists are not
// counted. A manager's first LISTs are counted too (see noteControllerRuntimeList).

// priorityQueueFrame is the frame of the queue's goroutine that hands items out.
const priorityQueueFrame = "sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue.(*priorityqueue["

// noteControllerRuntimeList counts an unordered batch for a LIST of two objects or more an
// informer of a controller-runtime run received: a relist, when the controller has a priority
// queue; an informer's first LIST, always. The manager starts its cache before its controllers,
// so a controller's watch asks the cache for an informer that has started, waits until it has
// synced, and only then adds its handler; client-go hands a handler added late the objects the
// informer holds in the order of a Go map (its indexer's). A manager starting while the world
// holds objects (every restart) reconciles them in an order no seed decides.
func (ws *watches) noteControllerRuntimeList(view string, keys map[string]bool) {
	b := ws.b
	if len(keys) < 2 || b.seeded {
		return
	}
	_, relist := b.views[view]
	why := "late-handler"
	if relist {
		if !b.runs(priorityQueueFrame) {
			return
		}
		why = "priority-queue"
	} else if !b.runs(controllerRuntimeFrame) {
		return
	}
	b.unorderedBatches++
	b.s.Emit(ControllerActor, "unordered-list", sim.F("view", view), sim.F("objects", strconv.Itoa(len(keys))), sim.F("why", why))
}

// controllerRuntimeFrame is a frame of controller-runtime's sources, which add the handlers of
// a controller's watches.
const controllerRuntimeFrame = "sigs.k8s.io/controller-runtime/pkg/internal/source."

// runs reports whether a goroutine of this run's controller has frame in its stack, reading the
// stacks once for each frame: the run's controller builds its queues and sources before its
// informers list.
func (ws *watches) runs(frame string) bool {
	b := ws.b
	if b.frames == nil {
		b.frames = map[string]bool{}
	}
	seen, ok := b.frames[frame]
	if !ok {
		seen = bubbleRuns(b.driverID, frame)
		b.frames[frame] = seen
	}
	return seen
}

// bubbleRuns reports whether a goroutine of the driver's bubble has frame in its stack, a frame of
// controller-runtime's (linked.go).
func bubbleRuns(driver uint64, frame string) (found bool) {
	if !strings.HasPrefix(frame, crFunctionPrefix) {
		panic("clientgo: bubbleRuns looks for controller-runtime's frames only: " + frame)
	}
	if !controllerRuntimeMayRun() {
		return false
	}
	introspect.AllStacks(func(all []byte) {
		f := []byte(frame)
		introspect.BubbleStacks(all, driver, func(stack []byte, _ string) bool {
			found = bytes.Contains(stack, f)
			return !found
		})
	})
	return found
}
