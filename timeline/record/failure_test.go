package record

import "testing"

// Goal: a check's failure is about the object its message names least often (the one in only
// one of a "got, want" message's lists), the latest in the trace on a tie, and only a whole key
// counts ("default/b" is not in "default/bb").
func TestNamedObject(t *testing.T) {
	evs := []Event{{Object: "default/a"}, {Object: "default/b"}, {Object: "default/bb"}, {Object: "default/c"}, {}}
	for _, c := range []struct{ msg, want string }{
		{"the controller knows [default/a default/b], the apiserver has [default/a]", "default/b"},
		{"the controller knows [default/a default/bb], the apiserver has [default/a default/bb default/c]", "default/c"},
		{"knows [default/a], has [default/bb]", "default/bb"}, // a tie: the latest in the trace
		{"nothing about any object", ""},
		{"default/bbb is not a key of the trace", ""},
	} {
		if got := namedObject(c.msg, evs); got != c.want {
			t.Errorf("namedObject(%q) = %q, want %q", c.msg, got, c.want)
		}
	}
}

// Goal: a world's page is titled with the spec a replay command focuses, else the test it runs.
func TestTitleFromRepro(t *testing.T) {
	for _, c := range []struct{ repro, want string }{
		{`INFORMERSIM_SEED=1 go test -run '^TestX$' ./pkg -args -ginkgo.focus='(^| )a controller does it$'`, "a controller does it"},
		{`INFORMERSIM_SEED=1 go test -run '^TestX$' ./pkg -args -ginkgo.focus='(^| )it'\''s \(quoted\)$'`, "it's (quoted)"},
		{`INFORMERSIM_SEED=2 go test -run 'TestInformersim' .`, "TestInformersim"},
		{`informersim run failing-spec --seed 2`, "a world's run"},
	} {
		if got := TitleFromRepro(c.repro); got != c.want {
			t.Errorf("TitleFromRepro(%q) = %q, want %q", c.repro, got, c.want)
		}
	}
}
