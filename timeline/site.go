package timeline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/timeline/record"
)

// BuildCourse runs every lesson of the course with its own seed and returns the records, in
// order. A lesson that fails, or prints other than its file's expected blocks, is an error: the
// site shows the course as it is checked.
func BuildCourse() ([]*Run, error) {
	var runs []*Run
	for _, sc := range scenarios.Course() {
		if err := CheckStages(sc.Pipeline); err != nil {
			return nil, fmt.Errorf("%s: %w", sc.Name, err)
		}
		res, err := scenarios.Run(sc.Name, sc.Text, scenarios.Options{Name: sc.Name})
		if err != nil {
			return nil, err
		}
		r, err := FromResult(sc, res)
		if err != nil {
			return nil, err
		}
		if !r.Passed {
			return nil, fmt.Errorf("timeline: lesson %s does not pass (failure %v, directives not as expected: %s)", sc.Name, res.Failure, strings.Join(r.Mismatches, ", "))
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return nil, errors.New("timeline: the course is empty")
	}
	return runs, nil
}

// WriteCourse runs the course (BuildCourse) and writes it as a site into dir (created if
// missing): index.html and one page per lesson, NAME.html. It returns the files written.
func WriteCourse(dir string) ([]string, error) {
	if dir == "" {
		return nil, errors.New("timeline: WriteCourse: no directory")
	}
	runs, err := BuildCourse()
	if err != nil {
		return nil, err
	}
	return record.WriteSite(dir, runs)
}
