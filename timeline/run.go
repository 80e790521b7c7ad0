package timeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/narration"
)

// SchemaID names the document's format; docs/run.schema.json describes it.
const SchemaID = "informersim.run/v1"

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
	Passed     bool        `json:"passed"`
	Mismatches []string    `json:"mismatches"`
	Components []Component `json:"components"`
	Directives []Directive `json:"directives"`
	Events     []Event     `json:"events"`
	Verdicts   []Verdict   `json:"verdicts"`
	Failure    *Failure    `json:"failure"`
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
// between events); TimeNS is when it was found.
type Failure struct {
	Message string `json:"message"`
	Oracle  string `json:"oracle,omitempty"`
	Event   *int64 `json:"event"`
	TimeNS  int64  `json:"time_ns"`
	Report  string `json:"report"`
}

// FromResult builds the record of a finished run of sc.
func FromResult(sc scenarios.Scenario, res *scenarios.Result) (*Run, error) {
	if res == nil || res.Env == nil {
		return nil, errors.New("timeline: no run (nil result)")
	}
	w := res.Env.World()
	if w == nil {
		return nil, fmt.Errorf("timeline: scenario %s built no world", sc.Name)
	}
	if err := CheckStages(sc.Pipeline); err != nil {
		return nil, fmt.Errorf("%w (scenario %s's pipeline: line)", err, sc.Name)
	}
	s := w.Sim()
	tr := s.Trace()
	r := &Run{
		Schema: SchemaID,
		Scenario: Scenario{Name: sc.Name, Title: sc.Title, Concept: sc.Concept,
			Labels: nonNil(sc.Labels), Pipeline: nonNil(sc.Pipeline)},
		Seed:       res.Seed,
		Policy:     s.Config().Policy.String(),
		Replay:     res.Env.ReplayCommand(),
		Trace:      Trace{Hash: res.Hash, Len: tr.Len(), Dropped: tr.Dropped()},
		Mismatches: []string{},
		Directives: []Directive{},
		Verdicts:   []Verdict{},
	}
	evs := tr.Events()
	if int64(len(evs))+tr.Dropped() != tr.Len() {
		return nil, fmt.Errorf("timeline: the trace kept %d events and dropped %d of %d", len(evs), tr.Dropped(), tr.Len())
	}
	lanes := newLaneMap(res.Env.Topology())
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
	// Each directive owns the events recorded while it ran: from the previous directive's end
	// to its own (events dropped from the kept trace belong to none).
	first := 0
	for i, st := range res.Steps {
		end := min(max(int(st.TraceEnd-tr.Dropped()), first), len(evs))
		d := Directive{Pos: st.Pos, Cmd: st.Directive.Cmd, Line: st.Directive.Line(),
			Caption: st.Directive.Caption(), Output: trimNL(st.Output),
			Matches: trimNL(st.Output) == trimNL(st.Expected), FirstEvent: first, EndEvent: end}
		if !d.Matches {
			r.Mismatches = append(r.Mismatches, st.Pos)
		}
		r.Directives = append(r.Directives, d)
		for j := first; j < end; j++ {
			r.Events[j].Directive = i
		}
		first = end
	}
	if first != len(evs) {
		return nil, fmt.Errorf("timeline: %s: %d events were recorded after the last directive", sc.Name, len(evs)-first)
	}
	r.Components = lanes.components()
	for _, v := range res.Env.Verdicts() {
		vd := Verdict{Oracle: v.Name, Kind: v.Kind.String(), Where: v.Where, Doc: v.Doc, OK: v.Violation == nil}
		if v.Violation != nil {
			vd.Violation = v.Violation.Message
		}
		r.Verdicts = append(r.Verdicts, vd)
	}
	if res.Failure != nil {
		r.Failure = newFailure(res, r.Events)
	}
	r.Passed = res.Failure == nil && len(r.Mismatches) == 0
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

// newFailure describes the failure and marks the violating event, found in the trace by its
// step, time, actor, kind and fields (the last such event: the oracle reads as the trace grows).
func newFailure(res *scenarios.Result, evs []Event) *Failure {
	f := &Failure{Message: res.Failure.Error(), Report: "replay: " + res.Env.ReplayCommand()}
	var v *world.Violation
	if !errors.As(res.Failure, &v) {
		if n := len(evs); n > 0 {
			f.TimeNS = evs[n-1].TimeNS
		}
		return f
	}
	f.Oracle, f.Message, f.TimeNS, f.Report = v.Oracle, v.Message, int64(v.Event.Time), v.Report()
	want := v.Event.String()
	for i := len(evs) - 1; i >= 0; i-- {
		e := &evs[i]
		if e.Step == v.Event.Step && e.TimeNS == int64(v.Event.Time) && e.Actor == v.Event.Actor && e.Kind == v.Event.Kind && e.raw == want {
			seq := e.Seq
			f.Event = &seq
			e.Mark = MarkViolation
			break
		}
	}
	return f
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
