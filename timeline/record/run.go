package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/narration"
	"github.com/informersim/informersim/sim/world/oracle"
)

// SchemaID names the document's format; docs/run.schema.json describes it.
const SchemaID = "informersim.run/v1"

// WorldName is the scenario name of a world's run driven by Go code (a spec's): FromWorld's
// when the source names none. Its page is titled with the scenario's Title, the spec's name.
const WorldName = "world"

// Run is the complete record of one run of a scenario: what --json prints, and what the HTML
// page draws.
type Run struct {
	Schema   string   `json:"schema"`
	Scenario Scenario `json:"scenario"`
	Seed     uint64   `json:"seed"`
	Policy   string   `json:"policy"`
	// Replay is the one command that replays the run.
	Replay string `json:"replay"`
	Trace  Trace  `json:"trace"`
	// Passed says the run ended without a failure and every directive printed its file's
	// expected block (Mismatches lists those that did not).
	Passed     bool     `json:"passed"`
	Mismatches []string `json:"mismatches"`
	// Compared says the directives' outputs were compared with the file's expected blocks:
	// false when the run's seed or policy replaced the file's own (informersim run --seed),
	// whose blocks then do not apply (NotCompared). A world's run, which has none, is compared.
	Compared   bool        `json:"compared"`
	Components []Component `json:"components"`
	Directives []Directive `json:"directives"`
	Events     []Event     `json:"events"`
	Verdicts   []Verdict   `json:"verdicts"`
	Failure    *Failure    `json:"failure"`
	// Hazards are the hazards the run exercised (world.CountHazards over its kept events).
	Hazards Hazards `json:"hazards"`
}

// Hazards are how often each hazard fired in the run (only those that did) and, in
// world.HazardNames order, those it never reached.
type Hazards struct {
	Counts map[string]int `json:"counts"`
	Never  []string       `json:"never"`
}

// Scenario is the scenario the run played: its name, title, concept text, labels and the parts
// of the pipeline it is about.
type Scenario struct {
	Name     string   `json:"name"`
	Title    string   `json:"title"`
	Concept  string   `json:"concept"`
	Labels   []string `json:"labels"`
	Pipeline []string `json:"pipeline"`
}

// Trace identifies the trace: its SHA-256 (which covers every event, kept or not), how many
// events it recorded and how many of the oldest it did not keep (Events then starts at Seq
// Dropped).
type Trace struct {
	Hash    string `json:"hash"`
	Len     int64  `json:"len"`
	Dropped int64  `json:"dropped"`
}

// Directive is one directive of the scenario and what it printed. Its events are
// Events[FirstEvent:EndEvent] (positions in Events, not Seq).
type Directive struct {
	Pos     string `json:"pos"`
	Cmd     string `json:"cmd"`
	Line    string `json:"line"`
	Caption string `json:"caption,omitempty"`
	Output  string `json:"output"`
	// Matches says the output equals the file's expected block.
	Matches    bool `json:"matches"`
	FirstEvent int  `json:"first_event"`
	EndEvent   int  `json:"end_event"`
}

// Event is one trace event. Fields holds its fields as typed values (see docs/timeline.md);
// Object is the key ("ns/name") of the object it is about, when it is about one; Text is its
// narration line; Lane the component it is drawn in; Mark says it is a fault the scenario
// injected, an error answer, or the event at which an oracle found its violation.
type Event struct {
	Seq    int64          `json:"seq"`
	Step   int64          `json:"step"`
	TimeNS int64          `json:"time_ns"`
	Time   string         `json:"time"`
	Actor  string         `json:"actor"`
	Kind   string         `json:"kind"`
	Fields map[string]any `json:"fields"`
	// Scheduler marks the scheduler's step event (the first event of each step: which actor
	// acted, and how); the narration leaves these out.
	Scheduler bool   `json:"scheduler,omitempty"`
	Object    string `json:"object,omitempty"`
	Lane      string `json:"lane"`
	Mark      string `json:"mark,omitempty"`
	// Directive is the index in Directives of the directive that ran it.
	Directive int    `json:"directive"`
	Text      string `json:"text"`

	raw string // the event's canonical text (sim.Event.String), to find the violating event
}

// Marks an event can carry.
const (
	MarkFault     = "fault"
	MarkError     = "error"
	MarkViolation = "violation"
)

// Verdict is one oracle's verdict on the run.
type Verdict struct {
	Oracle    string `json:"oracle"`
	Kind      string `json:"kind"`
	Where     string `json:"where"`
	Doc       string `json:"doc"`
	OK        bool   `json:"ok"`
	Violation string `json:"violation,omitempty"`
}

// Failure is what stopped the run. Event is the Seq of the event at which the oracle found its
// violation, null when the failure has no event in the kept trace (a run error, or a check made
// between events); TimeNS and Step are when it was found. Object is the key of the object it is
// about, Actor the component whose event it was found at (a handler, a queue), Check the
// spec's named check (World.AddCheck) that failed, each "" when the failure names none. Report
// is what the terminal printed for it: the failure, the seed, the replay line, the object's
// history and the trace before the failure.
type Failure struct {
	Message string `json:"message"`
	Oracle  string `json:"oracle,omitempty"`
	Check   string `json:"check,omitempty"`
	Object  string `json:"object,omitempty"`
	Actor   string `json:"actor,omitempty"`
	Event   *int64 `json:"event"`
	TimeNS  int64  `json:"time_ns"`
	Step    int64  `json:"step"`
	Report  string `json:"report"`
}

// Source is what the record of a world's run is built from, besides the world.
type Source struct {
	// Scenario names the run; an empty Name is "world". Its Pipeline must name Stages.
	Scenario Scenario
	// Replay is the command that replays the run; "" is the world's sim.Config.Repro.
	Replay string
	// Hash is the trace's hash as the run reported it; "" is the trace's own (sim.Trace.Hash).
	Hash string
	// Topology gives the lanes; nil is TopologyOf(the world).
	Topology *Topology
	// Verdicts are the attached oracles' verdicts (oracle.Handle.Verdicts), if any.
	Verdicts []oracle.Verdict
	// Failure is what stopped the run (a *world.Violation marks its event), nil if nothing did.
	Failure error
	// Report is what the host printed for the failure (a matcher's message: the failure, the
	// replay line, the trace before it); "" is World.Explain's.
	Report string
}

// FromWorld builds the record of w's run so far. It has no directives (Directives is empty and
// every event's Directive is 0): a world driven by Go code runs none; FromResult's caller, the
// scenario language, adds them. Passed says the run has no failure.
func FromWorld(w *world.World, src Source) (*Run, error) {
	if w == nil {
		return nil, errors.New("timeline: no run (nil world)")
	}
	sc := src.Scenario
	if sc.Name == "" {
		sc.Name = WorldName
	}
	if err := CheckStages(sc.Pipeline); err != nil {
		return nil, fmt.Errorf("%w (scenario %s's pipeline: line)", err, sc.Name)
	}
	s := w.Sim()
	tr := s.Trace()
	topo := src.Topology
	if topo == nil {
		t := TopologyOf(w)
		topo = &t
	}
	replay, hash := src.Replay, src.Hash
	if replay == "" {
		replay = s.Config().Repro
	}
	if hash == "" {
		hash = tr.Hash()
	}
	r := &Run{
		Schema: SchemaID,
		Scenario: Scenario{Name: sc.Name, Title: sc.Title, Concept: sc.Concept,
			Labels: nonNil(sc.Labels), Pipeline: nonNil(sc.Pipeline)},
		Seed:       s.Seed(),
		Policy:     s.Config().Policy.String(),
		Replay:     replay,
		Trace:      Trace{Hash: hash, Len: tr.Len(), Dropped: tr.Dropped()},
		Mismatches: []string{},
		Compared:   true,
		Directives: []Directive{},
		Verdicts:   []Verdict{},
	}
	evs := tr.Events()
	h := world.CountHazards(evs)
	r.Hazards = Hazards{Counts: map[string]int(h), Never: nonNil(h.Never())}
	if int64(len(evs))+tr.Dropped() != tr.Len() {
		return nil, fmt.Errorf("timeline: the trace kept %d events and dropped %d of %d", len(evs), tr.Dropped(), tr.Len())
	}
	lanes := newLaneMap(*topo)
	r.Events = make([]Event, len(evs))
	lastStep := int64(0)
	for i := range evs {
		e := &evs[i]
		out, err := newEvent(e, tr.Dropped()+int64(i), lanes)
		if err != nil {
			return nil, fmt.Errorf("timeline: %s: event %d (%s): %w", sc.Name, tr.Dropped()+int64(i), e, err)
		}
		// The scheduler's step event is the first event of each step (sim.Narrate).
		out.Scheduler = e.Step != lastStep
		lastStep = e.Step
		r.Events[i] = out
	}
	r.Components = lanes.components()
	for _, v := range src.Verdicts {
		vd := Verdict{Oracle: v.Name, Kind: v.Kind.String(), Where: v.Where, Doc: v.Doc, OK: v.Violation == nil}
		if v.Violation != nil {
			vd.Violation = v.Violation.Message
		}
		r.Verdicts = append(r.Verdicts, vd)
	}
	if src.Failure != nil {
		report := src.Report
		if report == "" {
			report = w.Explain(src.Failure)
		}
		r.Failure = newFailure(src.Failure, report, r.Events, evs)
	}
	r.Passed = src.Failure == nil
	return r, nil
}

func newEvent(e *sim.Event, seq int64, lanes *laneMap) (Event, error) {
	out := Event{Seq: seq, Step: e.Step, TimeNS: int64(e.Time), Time: sim.FormatSimTime(e.Time),
		Actor: e.Actor, Kind: e.Kind, Fields: make(map[string]any, len(e.Fields))}
	for _, f := range e.Fields {
		if _, dup := out.Fields[f.Key]; dup {
			return out, fmt.Errorf("field %q twice", f.Key)
		}
		var v any
		var err error
		if f.Key == narration.FieldObj {
			v, err = parseObjectRef(f.Value, e.Actor == narration.ActorAPIServer)
		} else {
			v, err = typedValue(f.Key, f.Value)
		}
		if err != nil {
			return out, fmt.Errorf("field %s=%q: %w", f.Key, f.Value, err)
		}
		out.Fields[f.Key] = v
		switch x := v.(type) {
		case ObjectRef:
			out.Object = x.Key
		case string:
			if f.Key == narration.FieldKey && out.Object == "" {
				out.Object = x
			}
		}
	}
	line := *e
	line.Step = 0
	out.Text = trimNL(sim.Narrate([]sim.Event{line}))
	out.Lane = lanes.lane(e)
	out.Mark = markOf(e)
	out.raw = e.String()
	return out, nil
}

// errorKinds are error answers, broken streams and failed writes as the trace narrates them
// ("ERROR" is a watch event's type, "requeue" a scenario workqueue's retry).
var errorKinds = map[string]bool{
	"ERROR": true, narration.KindListError: true, narration.KindWatchError: true, narration.KindDrop: true,
	narration.KindProcessError: true, narration.KindStoreError: true, narration.KindWriteError: true, "requeue": true,
}

// markOf marks the apiserver's faults (the ops world.OpKind.Fault says are: they change how it
// serves, narrated under their op's name) and the error kinds.
func markOf(e *sim.Event) string {
	if e.Actor == narration.ActorAPIServer {
		if k, err := world.ParseOpKind(e.Kind); err == nil && k.Fault() {
			return MarkFault
		}
	}
	if errorKinds[e.Kind] {
		return MarkError
	}
	return ""
}

// checkName reads the name of a spec's check from World.RunUntilConverged's error
// ("world: check "NAME" failed: ...").
var checkName = regexp.MustCompile(`(?:^|: )check "((?:[^"\\]|\\.)*)" failed`)

// newFailure describes the failure and marks the violating event, found in the trace by its
// step, time, actor, kind and fields (the last such event: the oracle reads as the trace grows).
// report is what the host printed; a violation about an object whose history it lacks gets the
// object's history from the kept trace (sim events evs) appended.
func newFailure(failure error, report string, out []Event, evs []sim.Event) *Failure {
	f := &Failure{Message: failure.Error(), Report: report}
	if n := len(out); n > 0 {
		f.TimeNS, f.Step = out[n-1].TimeNS, out[n-1].Step
	}
	var v *world.Violation
	if !errors.As(failure, &v) {
		if m := checkName.FindStringSubmatch(f.Message); m != nil {
			if name, err := strconv.Unquote(`"` + m[1] + `"`); err == nil {
				f.Check = name
				// The banner names the check: the message is what it said, without the run's
				// seed and replay command (the report has them).
				_, said, _ := strings.Cut(f.Message, m[0]+": ")
				if i := strings.LastIndex(said, " (seed "); i >= 0 {
					said = said[:i]
				}
				if said != "" {
					f.Message = said
				}
			}
			f.Object = namedObject(f.Message, out)
			if f.Object != "" && !strings.Contains(report, "history of "+f.Object) {
				f.Report = strings.TrimRight(report, "\n") + "\n" + historyText(f.Object, evs)
			}
		}
		return f
	}
	f.Oracle, f.Message, f.TimeNS, f.Object = v.Oracle, v.Message, int64(v.Event.Time), v.Key
	if v.Event.Actor != "" {
		f.Step, f.Actor = v.Event.Step, v.Event.Actor
	}
	if f.Object == "" {
		f.Object = world.EventObject(v.Event)
	}
	if v.Key != "" && len(v.History) == 0 && !strings.Contains(report, "history of "+v.Key) {
		// A matcher's own violation (HaveObservedInOrder) names its object without its history.
		f.Report = strings.TrimRight(report, "\n") + "\n" + historyText(v.Key, evs)
	}
	want := v.Event.String()
	for i := len(out) - 1; i >= 0; i-- {
		e := &out[i]
		if e.Step == v.Event.Step && e.TimeNS == int64(v.Event.Time) && e.Actor == v.Event.Actor && e.Kind == v.Event.Kind && e.raw == want {
			seq := e.Seq
			f.Event = &seq
			e.Mark = MarkViolation
			break
		}
	}
	return f
}

// historyText is the object's history as the terminal prints a violation's.
func historyText(key string, evs []sim.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "history of %s (every event about it, oldest first):\n", key)
	for _, e := range world.ObjectHistory(evs, key) {
		b.WriteString("  " + e.String() + "\n")
	}
	return b.String()
}

// namedObject is the object a check's message is about: of the objects of the trace that it
// names, the one it names least often (in a "got [a b], want [a]" message, the one in only one
// list), the latest in the trace on a tie; "" when it names none.
func namedObject(msg string, out []Event) string {
	last := map[string]int{}
	for i, e := range out {
		if e.Object != "" {
			last[e.Object] = i
		}
	}
	best, bestN, bestLast := "", 0, -1
	for key, at := range last {
		n := 0
		for rest := msg; ; {
			i := strings.Index(rest, key)
			if i < 0 {
				break
			}
			end := i + len(key)
			if (i == 0 || !objectChar(rest[i-1])) && (end == len(rest) || !objectChar(rest[end])) {
				n++
			}
			rest = rest[end:]
		}
		if n > 0 && (best == "" || n < bestN || (n == bestN && at > bestLast)) {
			best, bestN, bestLast = key, n, at
		}
	}
	return best
}

func objectChar(c byte) bool {
	return c == '-' || c == '.' || c == '/' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// NotCompared says the run's directives were not compared with the file's expected blocks (its
// seed or policy replaced the file's own, whose blocks then do not apply): no mismatch is
// counted, and the run passed if nothing failed.
func (r *Run) NotCompared() {
	r.Compared = false
	r.Mismatches = []string{}
	r.Passed = r.Failure == nil
}

// WriteJSON writes the document, indented, with a final newline.
func (r *Run) WriteJSON(w io.Writer) error {
	if r == nil {
		return errors.New("timeline: no run")
	}
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

func trimNL(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}
