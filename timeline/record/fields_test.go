package record

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Goal: fields get their types; a value that does not fit its key's type is an error.
func TestTypedFields(t *testing.T) {
	rv := int64(3)
	for _, c := range []struct {
		key, val string
		want     any
	}{
		{"rv", "4", int64(4)}, {"rv", "2->4", RVChange{From: 2, To: 4}}, {"rv", "", ""},
		{"init", "true", true}, {"to", "-", []string{}}, {"to", "a,b", []string{"a", "b"}},
		{"timeout", "8m48s", "8m48s"}, {"obj", "tomb(default/b@3)", ObjectRef{Key: "default/b", RV: &rv, Tombstone: true}},
		{"reason", "Expired", "Expired"},
	} {
		got, err := typedValue(c.key, c.val)
		if err != nil {
			t.Errorf("%s=%q: %v", c.key, c.val, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s=%q (-want +got):\n%s", c.key, c.val, d)
		}
	}
	for _, c := range [][2]string{{"rv", "x"}, {"n", "1.5"}, {"init", "yes"}, {"timeout", "5"}, {"obj", "a/b/c"}, {"obj", "tomb(a"}, {"obj", "a@x"}} {
		if v, err := typedValue(c[0], c[1]); err == nil {
			t.Errorf("%s=%q was accepted as %v", c[0], c[1], v)
		}
	}
	if r, err := parseObjectRef("pods/default/a", true); err != nil || r.Key != "default/a" || r.Resource != "pods" {
		t.Errorf("pods/default/a: %+v %v", r, err)
	}
}
