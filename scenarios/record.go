package scenarios

import (
	"errors"
	"fmt"
	"strings"

	"github.com/informersim/informersim/timeline/record"
)

// A scenario's run as a record (package timeline/record: the JSON document and its HTML
// timeline) with what the scenario language adds: the directives, captions and expected output;
// and the course as a site. The record and its page are drawn by timeline/record, which needs
// only the world; what needs the scenario language is here, so imports go one way: the world,
// then timeline/record, then scenarios, then the command.

// RunRecord builds the record of a finished run of sc: record.FromWorld's, with the scenario's
// topology, its directives (each owning the events recorded while it ran) and whether each
// printed its file's expected block.
func RunRecord(sc Scenario, res *Result) (*record.Run, error) {
	if res == nil || res.Env == nil {
		return nil, errors.New("scenarios: no run (nil result)")
	}
	w := res.Env.World()
	if w == nil {
		return nil, fmt.Errorf("scenarios: scenario %s built no world", sc.Name)
	}
	topo := res.Env.Topology()
	r, err := record.FromWorld(w, record.Source{
		Scenario: record.Scenario{Name: sc.Name, Title: sc.Title, Concept: sc.Concept, Labels: sc.Labels, Pipeline: sc.Pipeline},
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
		d := record.Directive{Pos: st.Pos, Cmd: st.Directive.Cmd, Line: st.Directive.Line(),
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
		return nil, fmt.Errorf("scenarios: %s: %d events were recorded after the last directive", sc.Name, len(r.Events)-first)
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

// BuildCourse runs every lesson of the course with its own seed and returns the records, in
// order. A lesson that fails, or prints other than its file's expected blocks, is an error: the
// site shows the course as it is checked.
func BuildCourse() ([]*record.Run, error) {
	var runs []*record.Run
	for _, sc := range Course() {
		if err := record.CheckStages(sc.Pipeline); err != nil {
			return nil, fmt.Errorf("%s: %w", sc.Name, err)
		}
		res, err := Run(sc.Name, sc.Text, Options{Name: sc.Name})
		if err != nil {
			return nil, err
		}
		r, err := RunRecord(sc, res)
		if err != nil {
			return nil, err
		}
		if !r.Passed {
			return nil, fmt.Errorf("scenarios: lesson %s does not pass (failure %v, directives not as expected: %s)", sc.Name, res.Failure, strings.Join(r.Mismatches, ", "))
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return nil, errors.New("scenarios: the course is empty")
	}
	return runs, nil
}

// WriteCourse runs the course (BuildCourse) and writes it as a site into dir (created if
// missing): index.html and one page per lesson, NAME.html. It returns the files written.
func WriteCourse(dir string) ([]string, error) {
	if dir == "" {
		return nil, errors.New("scenarios: WriteCourse: no directory")
	}
	runs, err := BuildCourse()
	if err != nil {
		return nil, err
	}
	return record.WriteSite(dir, runs)
}
