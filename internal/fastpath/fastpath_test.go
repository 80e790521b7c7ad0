package fastpath

import (
	"slices"
	"strings"
	"testing"
)

// Goal: INFORMERSIM_PLAIN's value is read as the contract says, and a misspelt name is an
// error that lists the names rather than a switch that takes nothing out.
func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want []Trick
		err  string
	}{
		{in: "shared-encodings", want: []Trick{SharedEncodings}},
		{in: "conversion-plans, shared-encodings,conversion-plans", want: []Trick{SharedEncodings, ConversionPlans}},
		{in: "all", want: Tricks()},
		{in: "shared-encodings,all", want: Tricks()},
		{in: "encodings", err: `"encodings" is no speed trick's name; the names are all, readonly-snapshots`},
		{in: "shared-encodings,", err: `"" is no speed trick's name`},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Parse(%q): error %v, want one saying %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Parse(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

// Goal: every trick has a name of its own, so that each can be taken out alone.
func TestNamesAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, tr := range Tricks() {
		n := tr.String()
		if n == "" || n == "all" || strings.Contains(n, ",") || seen[n] {
			t.Errorf("trick %d has the name %q: empty, reserved, or another's", tr, n)
		}
		seen[n] = true
	}
}

// Goal: Use follows the build and the tricks taken out: every trick in an ordinary build but
// those taken out, none in a plain one.
func TestUseFollowsTheBuild(t *testing.T) {
	for _, tr := range Tricks() {
		t.Cleanup(SetOut(tr, false))
	}
	for _, tr := range Tricks() {
		if Use(tr) != On {
			t.Errorf("Use(%v) = %v with nothing taken out, in a build whose On is %v", tr, Use(tr), On)
		}
	}
	SetOut(SharedEncodings, true)
	for _, tr := range Tricks() {
		if want := On && tr != SharedEncodings; Use(tr) != want {
			t.Errorf("Use(%v) = %v with shared-encodings taken out, want %v (On is %v)", tr, Use(tr), want, On)
		}
	}
}
