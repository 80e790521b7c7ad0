package timeline

import (
	"errors"
	"fmt"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/timeline/record"
)

// The record and its page are package record's, which needs only the world (worldtest draws a
// failing spec's run with it); this package adds what the scenario language knows: the
// directives, their captions and expected output, and the course.
type (
	Run       = record.Run
	Scenario  = record.Scenario
	Trace     = record.Trace
	Directive = record.Directive
	Event     = record.Event
	Verdict   = record.Verdict
	Failure   = record.Failure
	Component = record.Component
	ObjectRef = record.ObjectRef
	RVChange  = record.RVChange
)

// SchemaID names the document's format; docs/run.schema.json describes it.
const SchemaID = record.SchemaID

// Marks an event can carry.
const (
	MarkFault     = record.MarkFault
	MarkError     = record.MarkError
	MarkViolation = record.MarkViolation
)

// The pipeline picture's boxes, by client-go's names.
const (
	StageAPIServer     = record.StageAPIServer
	StageListerWatcher = record.StageListerWatcher
	StageReflector     = record.StageReflector
	StageDeltaFIFO     = record.StageDeltaFIFO
	StageRealFIFO      = record.StageRealFIFO
	StageIndexer       = record.StageIndexer
	StageInformer      = record.StageInformer
	StageProcessor     = record.StageProcessor
	StageListener      = record.StageListener
	StageHandler       = record.StageHandler
	StageWorkqueue     = record.StageWorkqueue
	StageWorker        = record.StageWorker
)

// Stages lists the pipeline picture's boxes in the order it draws them.
var Stages = record.Stages

// CheckStages reports a name that is not one of Stages.
func CheckStages(names []string) error { return record.CheckStages(names) }

// PipelineSVG draws the pipeline with the named stages highlighted.
func PipelineSVG(highlight []string) string { return record.PipelineSVG(highlight) }

// LessonNumber is a lesson's number as its file name gives it: "12a" for
// "12a-deltafifo-grouping", "5" for "05-tombstone".
func LessonNumber(name string) string { return record.LessonNumber(name) }

// FromResult builds the record of a finished run of sc: record.FromWorld's, with the scenario's
// topology, its directives (each owning the events recorded while it ran) and whether each
// printed its file's expected block.
func FromResult(sc scenarios.Scenario, res *scenarios.Result) (*Run, error) {
	if res == nil || res.Env == nil {
		return nil, errors.New("timeline: no run (nil result)")
	}
	w := res.Env.World()
	if w == nil {
		return nil, fmt.Errorf("timeline: scenario %s built no world", sc.Name)
	}
	topo := res.Env.Topology()
	r, err := record.FromWorld(w, record.Source{
		Scenario: Scenario{Name: sc.Name, Title: sc.Title, Concept: sc.Concept, Labels: sc.Labels, Pipeline: sc.Pipeline},
		Replay:   res.Env.ReplayCommand(), Hash: res.Hash, Topology: &topo,
		Verdicts: res.Env.Verdicts(), Failure: res.Failure,
	})
	if err != nil {
		return nil, err
	}
	// Each directive owns the events recorded while it ran: from the previous directive's end
	// to its own (events dropped from the kept trace belong to none).
	dropped := r.Trace.Dropped
	first := 0
	for i, st := range res.Steps {
		end := min(max(int(st.TraceEnd-dropped), first), len(r.Events))
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
	if first != len(r.Events) {
		return nil, fmt.Errorf("timeline: %s: %d events were recorded after the last directive", sc.Name, len(r.Events)-first)
	}
	r.Passed = res.Failure == nil && len(r.Mismatches) == 0
	return r, nil
}

func trimNL(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}
