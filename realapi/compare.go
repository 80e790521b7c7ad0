package realapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// Difference is one place where the two sides' normalised answers to one step differ.
type Difference struct {
	Sequence, Family, Step string
	// Path is where in the normalised answer they differ (code, body.metadata.labels, events[2].type).
	Path       string
	Real, Ours any
	// Known is the ID of the Known entry that explains it, "" when none does.
	Known string
}

func (d Difference) String() string {
	s := fmt.Sprintf("%s, step %q, at %s:\n      real:        %s\n      informersim: %s", d.Sequence, d.Step, d.Path, brief(d.Real), brief(d.Ours))
	if d.Known != "" {
		s += "\n      known: " + d.Known
	}
	return s
}

func brief(v any) string {
	if v == nil {
		return "<absent>"
	}
	b, _ := json.Marshal(v)
	if len(b) > 400 {
		return string(b[:400]) + "..."
	}
	return string(b)
}

// KnownDifference is a difference informersim keeps on purpose or cannot make equal: where it
// shows (a family, a step and a path, each a regular expression; empty matches anything), what
// each side answers there when that is part of it (Real and Ours, regular expressions matched
// against the JSON of the value, "null" for none), and why (the reason docs/realcluster.md
// gives).
type KnownDifference struct {
	ID, Reason                     string
	Family, Step, Path, Real, Ours string
	family, step, path, real, ours *regexp.Regexp
}

func (k *KnownDifference) compile() error {
	var err error
	re := func(s string) *regexp.Regexp {
		if s == "" || err != nil {
			return nil
		}
		var r *regexp.Regexp
		r, err = regexp.Compile("^(?:" + s + ")$")
		return r
	}
	k.family, k.step, k.path, k.real, k.ours = re(k.Family), re(k.Step), re(k.Path), re(k.Real), re(k.Ours)
	if err != nil {
		return fmt.Errorf("realapi: known difference %s: %w", k.ID, err)
	}
	if k.ID == "" || k.Reason == "" {
		return fmt.Errorf("realapi: a known difference needs an ID and a reason: %+v", *k)
	}
	return nil
}

func (k *KnownDifference) matches(d Difference) bool {
	ok := func(r *regexp.Regexp, s string) bool { return r == nil || r.MatchString(s) }
	value := func(r *regexp.Regexp, v any) bool {
		if r == nil {
			return true
		}
		b, err := json.Marshal(v)
		return err == nil && r.Match(b)
	}
	return ok(k.family, d.Family) && ok(k.step, d.Step) && ok(k.path, d.Path) && value(k.real, d.Real) && value(k.ours, d.Ours)
}

// Diff returns where a and b differ, leaf by leaf (a list of another length differs as a whole).
func Diff(a, b any) []Difference {
	var out []Difference
	diffAt("", a, b, &out)
	return out
}

func diffAt(path string, a, b any, out *[]Difference) {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			diffAt(join(path, k), am[k], bm[k], out)
		}
		return
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			diffAt(fmt.Sprintf("%s[%d]", path, i), al[i], bl[i], out)
		}
		return
	}
	if as, ok := a.([]string); ok {
		if bs, ok := b.([]string); ok {
			if !reflect.DeepEqual(as, bs) {
				*out = append(*out, Difference{Path: path, Real: setDiff(as, bs), Ours: setDiff(bs, as)})
			}
			return
		}
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, Difference{Path: path, Real: a, Ours: b})
	}
}

// setDiff is what a has that b lacks (for sorted summaries: discovery, schema names).
func setDiff(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	out := []string{}
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	if strings.ContainsAny(k, "./") {
		return path + "[" + k + "]"
	}
	return path + "." + k
}

// Report is a run's outcome: what ran, what differed, what the known entries explained.
type Report struct {
	Sequences, Steps int
	// Differences are all differences found, explained or not.
	Differences []Difference
	// ByKnown counts the differences each known entry explained.
	ByKnown map[string]int
	// Stale are the known entries that explained nothing.
	Stale []string
}

// Unexplained are the differences no known entry explains.
func (r *Report) Unexplained() []Difference {
	var out []Difference
	for _, d := range r.Differences {
		if d.Known == "" {
			out = append(out, d)
		}
	}
	return out
}

// Compare compares the outcomes of one sequence on the two sides and adds what differs to the
// report, explained by known where it can be.
func (r *Report) Compare(seq Sequence, real, ours []Outcome, known []KnownDifference) {
	r.Sequences++
	if r.ByKnown == nil {
		r.ByKnown = map[string]int{}
	}
	n := max(len(real), len(ours))
	for i := range n {
		var a, b Outcome
		if i < len(real) {
			a = real[i]
		}
		if i < len(ours) {
			b = ours[i]
		}
		r.Steps++
		step := a.Step
		if step == "" {
			step = b.Step
		}
		for _, d := range Diff(a.Normalised, b.Normalised) {
			d.Sequence, d.Family, d.Step = seq.Name, seq.Family, step
			for j := range known {
				if known[j].matches(d) {
					d.Known = known[j].ID
					r.ByKnown[d.Known]++
					break
				}
			}
			r.Differences = append(r.Differences, d)
		}
	}
}

// Finish records the known entries that explained nothing.
func (r *Report) Finish(known []KnownDifference) {
	r.Stale = nil
	for _, k := range known {
		if r.ByKnown[k.ID] == 0 {
			r.Stale = append(r.Stale, k.ID)
		}
	}
}

// String is the report as the suite prints it.
func (r *Report) String() string {
	var b strings.Builder
	un := r.Unexplained()
	fmt.Fprintf(&b, "realapi: %d sequences, %d steps compared; %d differences: %d explained by %d known entries, %d unexplained\n",
		r.Sequences, r.Steps, len(r.Differences), len(r.Differences)-len(un), len(r.ByKnown), len(un))
	ids := make([]string, 0, len(r.ByKnown))
	for id := range r.ByKnown {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(&b, "  known %-28s %5d\n", id, r.ByKnown[id])
	}
	for _, id := range r.Stale {
		fmt.Fprintf(&b, "  known %s explained nothing: it is stale (remove it here and in docs/realcluster.md)\n", id)
	}
	// Unexplained differences, at most 3 per family and step, the rest counted.
	seen := map[string]int{}
	left := 0
	for _, d := range un {
		key := d.Family + "\x00" + d.Step + "\x00" + d.Path
		seen[key]++
		if seen[key] > 1 || len(seen) > 60 {
			left++
			continue
		}
		fmt.Fprintf(&b, "  UNEXPLAINED %s\n", d)
	}
	if left > 0 {
		fmt.Fprintf(&b, "  ... and %d more unexplained differences at the same places or later\n", left)
	}
	return b.String()
}
