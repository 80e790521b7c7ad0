package scenarios_test

import (
	"strings"
	"testing"

	"github.com/informersim/informersim/scenarios"
)

// FuzzParseDirective: the directive parser never panics, and whatever it accepts prints in a
// form it accepts again, unchanged.
func FuzzParseDirective(f *testing.F) {
	for _, sc := range scenarios.Course() {
		for _, l := range strings.Split(sc.Text, "\n") {
			if l != "" && l != "----" && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "+") && !strings.HasPrefix(l, " ") {
				f.Add(l, "")
			}
		}
	}
	f.Add("create name=a", `{"data":{"k":"v"}}`)
	f.Add("run for=(1s, 2s)", "")
	f.Add("informer name=x indexers=(namespace, label:app) labels=app=web", "")
	f.Fuzz(func(t *testing.T, line, input string) {
		d, err := scenarios.ParseDirective(line, input)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "scenarios: ") {
				t.Fatalf("error %q does not start with the package name", err)
			}
			return
		}
		l2, in2, _ := strings.Cut(d.String(), "\n")
		back, err := scenarios.ParseDirective(l2, in2)
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", line, d.String(), err)
		}
		if back.String() != d.String() {
			t.Fatalf("%q printed as %q, then as %q", line, d.String(), back.String())
		}
	})
}
