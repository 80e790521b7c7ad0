package oracle

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/narration"
)

// The oracles' names (design.md "Oracles").
const (
	PerObjectOrder      = world.OraclePerObjectOrder
	CacheBeforeNotify   = world.OracleCacheBeforeNotify
	EventualConsistency = world.OracleEventualConsistency
	ReadOnlyObjects     = world.OracleReadOnlyObjects
	ResyncAlignment     = "resync-alignment"
	LateJoin            = "late-join"
	Tombstones          = "tombstones"
	WatchGuarantees     = "watch-guarantees"
)

// Kind says when an oracle is checked.
type Kind int

const (
	// Safety oracles are checked on every step: the first violating event stops the run.
	Safety Kind = iota + 1
	// Liveness oracles are checked once the world has converged.
	Liveness
)

func (k Kind) String() string {
	switch k {
	case Safety:
		return "safety"
	case Liveness:
		return "liveness"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Info describes one oracle.
type Info struct {
	Name string
	Kind Kind
	// Where says who checks it: "world" (the world's DeliveryLog or CheckConverged), "oracle"
	// (this package, over the trace and the apiserver's record), or both ("world+oracle": the
	// DeliveryLog checks per-object order, this package that each state told was committed).
	Where string
	// Doc is one line saying what it holds the run to.
	Doc string
}

// entry is one oracle of the catalogue: what it is, and how it is checked. Adding an oracle is
// its file (a Checker and its constructor, or an attach function) and its row here.
type entry struct {
	Info
	// newChecker builds the oracle's trace checker for w (nil: a recorded trace); nil for an
	// oracle that does not read the trace.
	newChecker func(w *world.World) Checker
	// attach hooks an oracle that reads something other than the trace (the apiserver's
	// record) to h.
	attach func(h *Handle)
}

// catalog is every oracle, in the order they are checked and reported. The world checks the
// first four itself (its DeliveryLog, its read-only check and CheckConverged); this package adds
// per-object order's other half and the rest.
var catalog = []entry{
	{Info{PerObjectOrder, Safety, "world+oracle", "each handler sees states the apiserver committed, per object in resourceVersion order, nothing after a delete but a re-creation"}, newAuthority, nil},
	{Info{CacheBeforeNotify, Safety, "world", "when a handler is called, the cache holds the state it is told about or a newer one"}, nil, nil},
	{Info{ReadOnlyObjects, Safety, "world", "nothing changes an object an informer handed out (noticed at the object's next write, at the latest once converged)"}, nil, nil},
	{Info{EventualConsistency, Liveness, "world", "once quiet, every cache and every handler's replayed view equals the apiserver's state"}, nil, nil},
	{Info{ResyncAlignment, Safety, "oracle", "resyncs only for cached objects, only to due handlers, at the periods informer.md §2 computes"}, newResync, nil},
	{Info{LateJoin, Safety, "oracle", "a late handler gets exactly the cache, then every change, no gap, no duplicate; HasSynced per §3, §4.6"}, newLateJoin, nil},
	{Info{Tombstones, Safety, "oracle", "a delete missed while disconnected arrives as DeletedFinalStateUnknown with the last known state"}, newTombstones, nil},
	{Info{WatchGuarantees, Safety, "oracle", "the apiserver's watches are ordered, unique, gap-free, resumable, with honest bookmarks"}, nil, attachWatchGuarantees},
}

// All returns every oracle, in the order they are checked and reported.
func All() []Info {
	out := make([]Info, len(catalog))
	for i, o := range catalog {
		out[i] = o.Info
	}
	return out
}

// Names returns every oracle's name.
func Names() []string {
	out := make([]string, len(catalog))
	for i, o := range catalog {
		out[i] = o.Name
	}
	return out
}

func lookup(name string) (entry, bool) {
	for _, o := range catalog {
		if o.Name == name {
			return o, true
		}
	}
	return entry{}, false
}

// Checker is one trace oracle of this package: it reads the trace one event at a time and says
// what, if anything, the event violates. Finish is called once the run has converged (or the
// trace has ended): the oracle's liveness half.
type Checker interface {
	Name() string
	// Event reads e and returns a description of the violation, or "".
	Event(e sim.Event) string
	// Finish returns a description of what the whole trace left unfulfilled, or "".
	Finish() string
}

// NewChecker returns a fresh checker of the trace oracle called name: ResyncAlignment, LateJoin,
// Tombstones, or PerObjectOrder's half that this package checks (every state a handler is told
// about was committed by the apiserver; the order is the world's DeliveryLog's). Cache before
// notify and eventual consistency (the world's) and WatchGuarantees (which reads the
// apiserver's record, not the trace) have none.
func NewChecker(name string) (Checker, error) {
	o, ok := lookup(name)
	switch {
	case !ok:
		return nil, unknown(name)
	case o.newChecker == nil:
		return nil, fmt.Errorf("oracle: %s is not a trace oracle", name)
	}
	return o.newChecker(nil), nil
}

func unknown(name string) error {
	return fmt.Errorf("oracle: unknown oracle %q (known: %s)", name, strings.Join(Names(), ", "))
}

// CheckTrace runs the trace oracles named (all of them when none is named) over events, a trace
// recorded earlier or built by hand, and returns the first violation (nil if none), with the
// events before it as its window. Names of oracles that do not read the trace are an error.
func CheckTrace(events []sim.Event, names ...string) (*world.Violation, error) {
	if len(names) == 0 {
		for _, o := range catalog {
			if o.newChecker != nil {
				names = append(names, o.Name)
			}
		}
	}
	var cs []Checker
	for _, n := range names {
		c, err := NewChecker(n)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	for i, e := range events {
		for _, c := range cs {
			if msg := c.Event(e); msg != "" {
				return &world.Violation{Oracle: c.Name(), Message: msg, Event: e, Window: slices.Clone(events[max(0, i-world.DefaultViolationWindow):i])}, nil
			}
		}
	}
	for _, c := range cs {
		if msg := c.Finish(); msg != "" {
			end := sim.Event{Actor: narration.ActorOracle, Kind: narration.KindTraceEnd}
			if n := len(events); n > 0 {
				end.Step, end.Time = events[n-1].Step, events[n-1].Time
			}
			return &world.Violation{Oracle: c.Name(), Message: msg, Event: end, Window: slices.Clone(events[max(0, len(events)-world.DefaultViolationWindow):])}, nil
		}
	}
	return nil, nil
}

// Verdict is one oracle's standing in a run.
type Verdict struct {
	Info
	// Violation is the oracle's first violation, nil while it holds.
	Violation *world.Violation
}

func (v Verdict) String() string {
	if v.Violation != nil {
		return v.Name + ": violated: " + v.Violation.Message
	}
	return v.Name + ": ok"
}

// Handle is the oracles attached to one world.
type Handle struct {
	w       *world.World
	names   []string
	checked map[string]bool
	trace   []Checker

	// first is the first violation; raised says it was panicked with (which stops the run).
	first     *world.Violation
	foundStep int64
	raised    bool
}

// Attach attaches the named oracles (every oracle when none is named) to w, once, before any
// informer is added (a world with informers is refused):
// from now on the trace oracles read every trace event (sim.Sim.Subscribe) and the
// watch-guarantees oracle every write and watch event of the apiserver (fakeapi.Server.OnCommit
// and OnRecord, whose one observer it takes). They only read: a run with oracles attached has
// the same trace, hash included, as one without.
//
// A safety violation stops the run: it is raised at the next step (so never from inside the
// apiserver's lock or a caller's write), as a panic the engine turns into a *sim.RunError that
// unwraps to the *world.Violation. The world's own oracles (per-object order, cache before
// notify) always run and stop the run the same way; eventual consistency is checked by
// RunUntilConverged. Call Check with any error of the run to fold those into the handle.
func Attach(w *world.World, names ...string) (*Handle, error) {
	if w == nil {
		return nil, errors.New("oracle: Attach: nil world")
	}
	if len(w.Informers()) > 0 {
		// The trace oracles rebuild each informer from its narration, registrations included.
		return nil, errors.New("oracle: Attach: the world already has informers; attach the oracles before adding any")
	}
	if len(names) == 0 {
		names = Names()
	}
	h := &Handle{w: w, checked: map[string]bool{}}
	for _, n := range names {
		if _, ok := lookup(n); !ok {
			return nil, unknown(n)
		}
		if h.checked[n] {
			return nil, fmt.Errorf("oracle: Attach: %s named twice", n)
		}
		h.checked[n] = true
	}
	for _, o := range catalog { // catalog order, whatever the order asked
		if !h.checked[o.Name] {
			continue
		}
		h.names = append(h.names, o.Name)
		if o.newChecker != nil {
			h.trace = append(h.trace, o.newChecker(w))
		}
		if o.attach != nil {
			o.attach(h)
		}
	}
	w.Sim().Subscribe(h.event)
	return h, nil
}

func (h *Handle) event(e sim.Event) {
	if h.first != nil {
		if !h.raised && e.Step > h.foundStep {
			h.raised = true
			panic(h.first)
		}
		return
	}
	for _, c := range h.trace {
		if msg := c.Event(e); msg != "" {
			h.found(world.NewViolation(h.w.Sim(), c.Name(), msg, e, world.DefaultViolationWindow))
			return
		}
	}
}

func (h *Handle) found(v *world.Violation) {
	h.first = v
	h.foundStep = h.w.Sim().StepCount()
}

// Check folds an error of the run (from RunUntilConverged, RunFor, RunUntil...) into the
// handle: a *world.Violation it wraps, of an attached oracle, becomes the handle's violation if
// it has none. It returns the handle's violation if there is one (the first violation of the
// run, whoever found it), else err.
func (h *Handle) Check(err error) error {
	var v *world.Violation
	if h.first == nil && errors.As(err, &v) && h.checked[v.Oracle] {
		h.first = v
		h.raised = true
	}
	if h.first != nil {
		return h.first
	}
	return err
}

// Finish checks the liveness half of the attached trace oracles (a late handler that never
// synced, a resync or relist left half done); call it once the world is quiet. It returns the
// handle's violation, if any.
func (h *Handle) Finish() error {
	if h.first != nil {
		return h.first
	}
	for _, c := range h.trace {
		if msg := c.Finish(); msg != "" {
			s := h.w.Sim()
			h.found(world.NewViolation(s, c.Name(), msg, sim.Event{Step: s.StepCount(), Time: s.Now(), Actor: narration.ActorWorld, Kind: narration.KindConverged}, world.DefaultViolationWindow))
			h.raised = true
			return h.first
		}
	}
	return nil
}

// RunUntilConverged is world.World.RunUntilConverged (the liveness phase, then eventual
// consistency and the user's checks) followed by Finish, with every error folded in by Check:
// it returns nil only when every attached oracle holds.
func (h *Handle) RunUntilConverged(budget time.Duration) error {
	if err := h.Check(h.w.RunUntilConverged(budget)); err != nil {
		return err
	}
	return h.Finish()
}

// Violation returns the first violation of an attached oracle, or nil.
func (h *Handle) Violation() *world.Violation { return h.first }

// Verdicts returns the standing of every attached oracle, in catalog order.
func (h *Handle) Verdicts() []Verdict {
	out := make([]Verdict, 0, len(h.names))
	for _, n := range h.names {
		o, _ := lookup(n)
		v := Verdict{Info: o.Info}
		if h.first != nil && h.first.Oracle == n {
			v.Violation = h.first
		}
		out = append(out, v)
	}
	return out
}

// World returns the world the oracles are attached to.
func (h *Handle) World() *world.World { return h.w }

// Names returns the attached oracles' names, in catalog order.
func (h *Handle) Names() []string { return slices.Clone(h.names) }
