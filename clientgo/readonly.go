package clientgo

import (
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/informersim/informersim/clientgo/internal/readonly"
	"github.com/informersim/informersim/internal/fastpath"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// Read-only objects under the harness. The typed objects the Env's informers hand out (to their
// handlers, and through their listers) are converted copies of the apiserver's, which the world's
// read-only-objects oracle does not see. The harness checks them as the world checks its lent
// objects: when an informer's transform makes a typed object, the harness keeps a deep copy of
// it, and after every step of the world at which the controller's code can have run (see
// bubble.turn: at the others nothing can have changed) compares each object handed out with its
// copy: the first time as reflect.DeepEqual does, later by a snapshot of the object's memory
// taken when it was found equal, which answers as DeepEqual would at a fraction of its cost
// (package internal/readonly). A change (a controller that writes into a lister's object
// instead of a DeepCopy) fails the run with the
// oracle's violation, about the object, naming the informer (its resource) that handed it out,
// with the seed and the replay line. As client-go's cache mutation detector does, an object is
// watched for lentRetention after it was handed out.
//
// The informers a controller builds itself from the *rest.Config (Main) are client-go's,
// whose objects are decoded by client-go from the bytes the REST front writes: the harness holds
// no reference to them. client-go's own cache mutation detector checks them (detector.go), and
// in the deterministic mode the harness answers the detector's comparisons the same way
// (determinism.go).

// lentRetention is how long (simulated) a handed-out object is compared with its copy.
const lentRetention = 2 * time.Minute

// lentObject is one typed object an informer handed out, and its copy at that moment.
type lentObject struct {
	obj, copy runtime.Object
	informer  string // the world name of the informer, e.g. "foos.samplecontroller.k8s.io"
	key       string // namespace/name
	rv        string
	at        time.Duration // when it was handed out
	// snap is obj's memory when it was last found DeepEqual to copy (readonly_snapshot.go), nil
	// before the first comparison.
	snap *readonly.Snapshot
}

// lend records obj, made by informer's transform inside a step, to be compared after each step
// with a copy made here.
func (lr *lending) lend(informer string, obj any) {
	b := lr.b
	o, ok := obj.(runtime.Object)
	if !ok || o == nil {
		return
	}
	if b.lentIndex == nil {
		b.lentIndex = map[any]bool{}
	}
	if b.lentIndex[o] {
		return // the transform ran again on an object it made (transforms are idempotent)
	}
	key, _ := metaOf(o)
	b.lentIndex[o] = true
	b.lent = append(b.lent, lentObject{obj: o, copy: o.DeepCopyObject(), informer: informer, key: key, rv: rvOf(o), at: b.s.Now()})
}

// controllerWoken notes that the driver woke a goroutine of the controller: the comparison after
// the first step once the next synctest.Wait returned looks at what it changed (bubble.woken).
func (b *bubble) controllerWoken() {
	if b != nil {
		b.woken.Store(true)
	}
}

// controllerCodeRuns notes that the controller's code runs inside this step (a handler, its
// transform, an index function): the comparison after this step looks at what it changed, and
// the one after the next wait at what it woke (an enqueue wakes a worker). Any goroutine may call
// it.
func (b *bubble) controllerCodeRuns() {
	if b != nil {
		b.codeRan.Store(true)
		b.woken.Store(true)
	}
}

// watchSynced records a synced checker handed to the controller: a step of the world closes its
// Done channel, which wakes whatever goroutine of the controller waits on it; pollSynced notices.
func (b *bubble) watchSynced(c cache.DoneChecker) cache.DoneChecker {
	if b == nil || c == nil {
		return c
	}
	b.syncedMu.Lock()
	b.synced = append(b.synced, c)
	b.syncedMu.Unlock()
	return c
}

// pollSynced, after a step, marks that the controller may run if a synced checker it was handed
// is done since the last poll, and forgets the done ones.
func (lr *lending) pollSynced() {
	b := lr.b
	b.syncedMu.Lock()
	defer b.syncedMu.Unlock()
	kept := b.synced[:0]
	for _, c := range b.synced {
		select {
		case <-c.Done():
			b.controllerWoken()
		default:
			kept = append(kept, c)
		}
	}
	clear(b.synced[len(kept):])
	b.synced = kept
}

// checkLent compares every object handed out within lentRetention with its copy, after a step
// at which the controller's code may have run (bubble.turn); the first changed one fails the run
// with a read-only-objects violation. Each comparison is readonly.Compare's: by the object's
// snapshot when its memory is unchanged, else as DeepEqual would.
func (lr *lending) checkLent() {
	b := lr.b
	if len(b.lent) == 0 {
		return
	}
	// lent is in the order the objects were handed out, so those out of retention lead it.
	now, expired := b.s.Now(), 0
	for expired < len(b.lent) && now-b.lent[expired].at > lentRetention {
		delete(b.lentIndex, b.lent[expired].obj)
		expired++
	}
	if expired > 0 {
		n := copy(b.lent, b.lent[expired:])
		clear(b.lent[n:])
		b.lent = b.lent[:n]
	}
	for i := range b.lent {
		l := &b.lent[i]
		if !fastpath.Use(fastpath.ReadOnlySnapshots) { // the check as defined, which the snapshots answer alike
			if reflect.DeepEqual(l.obj, l.copy) {
				continue
			}
		} else {
			var equal bool
			if equal, l.snap = readonly.Compare(l.obj, l.copy, l.snap); equal {
				continue
			}
		}
		b.s.Emit(ControllerActor, "read-only-violation", sim.F("informer", l.informer), sim.F("key", l.key), sim.F("rv", l.rv))
		msg := fmt.Sprintf("the controller changed %T %s (resourceVersion %s), which informer %s handed out at %s to its handlers and lister: it differs in %s from what was delivered; copy an object before changing it (DeepCopy)",
			l.obj, l.key, l.rv, l.informer, sim.FormatSimTime(l.at), strings.Join(readonly.ChangedFields(l.copy, l.obj), ", "))
		b.fail(b.violation(world.OracleReadOnlyObjects, msg))
		return
	}
}
