package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/informersim/informersim/sim/world"
)

// ShrinkOptions say which failing run to shrink and how hard to try.
type ShrinkOptions struct {
	// Options replace the file's seed or policy, as for Run: the run they give must fail. The
	// shrunk file carries them in its world directive.
	Options
	// MaxRuns bounds the runs the shrinker may spend (default 5000). A shrink cut short by it
	// returns its best file so far with Minimal false, never a quiet partial result.
	MaxRuns int
	// OutName is the name the shrunk file will be run under, which its replay lines name
	// (default: the name given to Shrink and "-shrunk").
	OutName string
}

// Shrunk is a failing run shrunk to a small scenario file.
type Shrunk struct {
	// Text is the shrunk scenario file: a header comment saying what failed and what was
	// removed, then its directives and their expected blocks (it fails with Failure when run).
	Text string
	// Failure is the failure both runs share (FailureSignature), e.g. "oracle tombstones".
	Failure string
	// Object is the object the failure is about (world.Violation's Key, "ns/name"), under its
	// name in Text (the shrink may rename it); "" when the failure is about no one object (a
	// user's check, a run that did not converge). Every candidate the shrink kept failed with
	// Failure about this object: one failing with the same oracle about another object, or
	// with another oracle, is a different bug and was not kept.
	Object string
	// Directives and Ops count the file's directives, and among them the world ops (writes and
	// faults), before and after: [0] before, [1] after. Before counts a generate directive's
	// ops once expanded.
	Directives, Ops [2]int
	// Runs is the number of runs the shrink spent; Minimal says no single directive or
	// argument removal, shorter duration or simpler name still fails the same way (false
	// when MaxRuns cut it short).
	Runs    int
	Minimal bool
	// Removed says, in words, what was removed or simplified (the header's comment).
	Removed []string
}

// FailureSignature is what makes two failures the same for the shrinker (world.FailureSignature):
// the oracle a violation is of ("oracle tombstones"), the user's check that failed ("check
// \"name\""), or else the failure's message with numbers removed (a run that did not converge
// in its budget, an event that never came).
func FailureSignature(err error) string { return world.FailureSignature(err) }

const defaultShrinkRuns = 5000

// errShrinkBudget stops a shrink that has spent its runs.
var errShrinkBudget = errors.New("scenarios: shrink: out of runs")

type shrinker struct {
	name string
	sig  string
	// key is the object the original failure is about (FailureObject) under the candidates'
	// current names ("" for none); a candidate fails the same way only about it.
	key     string
	runs    int
	maxRuns int
	// replay, when set, runs a candidate instead of Run (ShrinkOps: a Go-hosted controller's
	// ops) and returns its failure.
	replay func(ds []Directive) error
}

// fails runs ds and says whether it fails with the shrinker's signature; a file the change made
// malformed or unfit (a start of an informer no longer declared) does not.
func (s *shrinker) fails(ds []Directive) (bool, error) {
	if s.runs >= s.maxRuns {
		return false, errShrinkBudget
	}
	s.runs++
	if s.replay != nil {
		return s.same(s.replay(ds)), nil
	}
	res, err := Run(s.name, Format("", ds, nil), Options{})
	if err != nil {
		return false, nil
	}
	return s.same(res.Failure), nil
}

// same says whether failure is the shrinker's: the same FailureSignature (the oracle, or the
// user's check) about the same object (FailureObject), as the shrink renamed it.
func (s *shrinker) same(failure error) bool {
	return failure != nil && FailureSignature(failure) == s.sig && FailureObject(failure) == s.key
}

// FailureObject is the object a failure is about: the Key of the world.Violation it wraps
// ("ns/name", or "name" when cluster-scoped), "" when it is about no one object or is no
// violation (a user's check, a run that did not converge).
func FailureObject(err error) string {
	var v *world.Violation
	if errors.As(err, &v) {
		return v.Key
	}
	return ""
}

// Shrink reduces a failing scenario (text, named name) to a small file failing the same way
// (FailureSignature): a generate directive is first expanded into the ops it issued, then, in
// passes until none changes anything, directives are removed (delta debugging: halves, then
// quarters, down to single ones), arguments dropped, durations halved, and object names
// renamed a, b, c... It is an error when the text is malformed or its run does not fail.
func Shrink(name, text string, opts ShrinkOptions) (*Shrunk, error) {
	if opts.MaxRuns < 0 {
		return nil, fmt.Errorf("scenarios: shrink %s: MaxRuns %d is negative", name, opts.MaxRuns)
	}
	orig, err := Run(name, text, opts.Options)
	if err != nil {
		return nil, err
	}
	if orig.Failure == nil {
		return nil, fmt.Errorf("scenarios: shrink %s: the run passes (seed %d): there is no failure to shrink to", name, orig.Seed)
	}
	s := &shrinker{name: name, sig: FailureSignature(orig.Failure), key: FailureObject(orig.Failure), maxRuns: cmpOr(opts.MaxRuns, defaultShrinkRuns)}
	out := &Shrunk{Failure: s.sig}
	var ds []Directive
	captions := 0
	for _, st := range orig.Steps {
		if st.Directive.Cmd == "caption" {
			captions++
			continue
		}
		ds = append(ds, st.Directive)
	}
	// The file's seed and policy, or those that replaced them, go into its world directive.
	ds = pinWorld(ds, orig)
	if captions > 0 {
		out.Removed = append(out.Removed, fmt.Sprintf("%d captions", captions))
	}
	if exp, ok := expandGenerators(ds, orig); ok {
		fails, err := s.fails(exp)
		if err != nil {
			return nil, err
		}
		if fails {
			ds = exp
		} else {
			out.Removed = append(out.Removed, "(the generate directive was kept: its ops, written out, do not fail the same way)")
		}
	}
	out.Directives[0], out.Ops[0] = len(ds), countOps(ds)

	ds, err = s.passes(ds, out)
	if err != nil {
		return nil, err
	}
	out.Runs = s.runs

	outName := opts.OutName
	if outName == "" {
		outName = name + "-shrunk"
	}
	out.Object = s.key
	final, err := Run(outName, Format("", ds, nil), Options{})
	if err != nil || !s.same(final.Failure) {
		// Every accepted step was a failing run, so this cannot happen unless a run is not
		// deterministic: say so rather than hand back a file that passes.
		return nil, fmt.Errorf("scenarios: shrink %s: the shrunk file does not fail as its last accepted run did (%v): the run is not deterministic", name, err)
	}
	outputs := make([]string, len(final.Steps))
	for i, st := range final.Steps {
		outputs[i] = st.Output
	}
	minimal := "no single directive or argument can be removed, no duration halved, and it still fails so"
	if !out.Minimal {
		minimal = fmt.Sprintf("NOT minimal: the shrink stopped after %d runs (its budget)", s.runs)
	}
	header := fmt.Sprintf("%s, shrunk: fails with %s\n\n%sShrunk from %s (seed %d, %d directives, %d ops) to %d directives and %d ops in %d runs; %s.\nRemoved: %s.",
		name, s.sig, aboutObject(orig.Failure, s.key), name, orig.Seed, out.Directives[0], out.Ops[0], out.Directives[1], out.Ops[1], s.runs, minimal, strings.Join(cmpOrSlice(out.Removed, []string{"nothing"}), ", "))
	out.Text = Format(header, ds, outputs)
	return out, nil
}

// aboutObject is the header's sentence naming the object the failure is about, if any.
func aboutObject(orig error, key string) string {
	switch from := FailureObject(orig); {
	case key == "":
		return ""
	case from != key:
		return fmt.Sprintf("It fails about %s (%s in the original), as the original did; candidates failing about another object or otherwise were not kept.\n", key, from)
	default:
		return fmt.Sprintf("It fails about %s, as the original did; candidates failing about another object or otherwise were not kept.\n", key)
	}
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func cmpOrSlice(a, b []string) []string {
	if len(a) > 0 {
		return a
	}
	return b
}

func countOps(ds []Directive) int {
	n := 0
	for _, d := range ds {
		if d.Op != nil {
			n++
		}
	}
	return n
}

// pinWorld makes the run's seed and policy the world directive's (adding one when the file
// has none), so the shrunk file replays without options.
func pinWorld(ds []Directive, res *Result) []Directive {
	w := Directive{Cmd: "world"}
	rest := ds
	if len(ds) > 0 && ds[0].Cmd == "world" {
		w, rest = ds[0], ds[1:]
	}
	args := slices.DeleteFunc(slices.Clone(w.Args), func(a datadriven.CmdArg) bool { return a.Key == "seed" || a.Key == "policy" })
	args = append([]datadriven.CmdArg{argOf("seed", strconv.FormatUint(res.Seed, 10))}, args...)
	if p := res.Env.World().Sim().Config().Policy.String(); p != "random" {
		args = append(args[:1], append([]datadriven.CmdArg{argOf("policy", p)}, args[1:]...)...)
	}
	w.Args = args
	return append([]Directive{w}, rest...)
}

// expandGenerators replaces each generate directive by the ops its generator issued, each
// after a run for the time since the previous one; ok is false when there is none.
func expandGenerators(ds []Directive, res *Result) ([]Directive, bool) {
	env := res.Env
	if len(env.gens) == 0 {
		return nil, false
	}
	var out []Directive
	g := 0
	for _, d := range ds {
		if d.Cmd != "generate" || g >= len(env.gens) {
			out = append(out, d)
			continue
		}
		out = append(out, GeneratedDirectives(env.genStarts[g], env.gens[g].Ops())...)
		g++
	}
	return out, true
}

// passes runs the shrinker's passes over ds until none changes anything (or the runs are spent):
// delta debugging, declarations removed with their uses, arguments dropped and durations
// halved, objects renamed. It fills out's Minimal, Directives[1], Ops[1] and Removed.
func (s *shrinker) passes(ds []Directive, out *Shrunk) ([]Directive, error) {
	removedDirs, droppedArgs, shortened, renamed := 0, 0, 0, false
	var err error
	err = func() error {
		for {
			before := len(ds)
			if ds, err = s.ddmin(ds); err != nil {
				return err
			}
			if ds, err = s.removeDeclared(ds); err != nil {
				return err
			}
			removedDirs += before - len(ds)
			n, err := s.simplifyArgs(&ds)
			if err != nil {
				return err
			}
			droppedArgs += n.dropped
			shortened += n.shortened
			if !renamed {
				ok, err := s.rename(&ds)
				if err != nil {
					return err
				}
				renamed = ok
				if ok {
					n.dropped++ // a change: another pass
				}
			}
			if len(ds) == before && n.dropped == 0 && n.shortened == 0 {
				return nil
			}
		}
	}()
	switch {
	case errors.Is(err, errShrinkBudget):
		out.Minimal = false
	case err != nil:
		return nil, err
	default:
		out.Minimal = true
	}
	out.Directives[1], out.Ops[1] = len(ds), countOps(ds)
	if removedDirs > 0 {
		out.Removed = append(out.Removed, fmt.Sprintf("%d of %d directives (%d of %d ops)", removedDirs, out.Directives[0], out.Ops[0]-out.Ops[1], out.Ops[0]))
	}
	if droppedArgs > 0 {
		out.Removed = append(out.Removed, fmt.Sprintf("%d arguments", droppedArgs))
	}
	if shortened > 0 {
		out.Removed = append(out.Removed, fmt.Sprintf("%d halvings of durations", shortened))
	}
	if renamed {
		out.Removed = append(out.Removed, "objects renamed a, b, c... in order of appearance")
	}
	return ds, nil
}

// ddmin removes directives (never the world directive that opens the file) in chunks of
// halving size while the rest still fails, and ends with a pass of single removals none of
// which fails.
func (s *shrinker) ddmin(ds []Directive) ([]Directive, error) {
	head := 0
	if len(ds) > 0 && ds[0].Cmd == "world" {
		head = 1
	}
	n := 2
	for len(ds)-head > 0 {
		items := len(ds) - head
		chunk := (items + n - 1) / n
		removed := false
		for start := head; start < len(ds); start += chunk {
			cand := slices.Concat(ds[:start], ds[min(start+chunk, len(ds)):])
			ok, err := s.fails(cand)
			if err != nil {
				return ds, err
			}
			if ok {
				ds, removed = cand, true
				n = max(n-1, 2)
				break
			}
		}
		if !removed {
			if chunk == 1 {
				break
			}
			n = min(n*2, items)
		}
	}
	return ds, nil
}

// removeDeclared removes, for each directive that declares a name (an informer, a handler, a
// workqueue: a name= argument of a directive that is not an op), it and every directive that
// names it (informer=inf2, handler=inf2/h), while the rest still fails: a declaration and its
// uses, which single removals cannot take out one by one (a start of an informer no longer
// declared is a malformed file).
func (s *shrinker) removeDeclared(ds []Directive) ([]Directive, error) {
	for i := 0; i < len(ds); i++ {
		d := ds[i]
		name, ok := d.arg("name")
		if d.Op != nil || d.Cmd == "world" || !ok || name == "" {
			continue
		}
		cand := slices.Clone(ds[:i])
		for _, u := range ds[i+1:] {
			if !namesIn(u, name) {
				cand = append(cand, u)
			}
		}
		ok, err := s.fails(cand)
		if err != nil {
			return ds, err
		}
		if ok {
			ds = cand
			i--
		}
	}
	return ds, nil
}

// namesIn says whether one of d's argument values is name, or a path starting with it
// ("inf2/h").
func namesIn(d Directive, name string) bool {
	for _, a := range d.Args {
		for _, v := range a.Vals {
			if v == name || strings.HasPrefix(v, name+"/") {
				return true
			}
		}
	}
	return false
}

type argChanges struct{ dropped, shortened int }

// simplifyArgs tries, for each directive, dropping each argument (and its input), then halving
// each duration, keeping every change that still fails.
func (s *shrinker) simplifyArgs(ds *[]Directive) (argChanges, error) {
	var n argChanges
	for i := range *ds {
		for a := 0; ; a++ {
			cmd, args, err := datadriven.ParseLine((*ds)[i].Line())
			if err != nil || a >= len(args) {
				break
			}
			if cmd == "world" && (args[a].Key == "seed" || args[a].Key == "client") {
				continue // an ops file's replay reads neither: dropped, they would seem not to matter
			}
			ok, err := s.try(ds, i, rejoin(cmd, slices.Delete(slices.Clone(args), a, a+1)), (*ds)[i].inputText())
			if err != nil {
				return n, err
			}
			if ok {
				n.dropped++
				a-- // the next argument moved into this place
			}
		}
		if (*ds)[i].inputText() != "" {
			ok, err := s.try(ds, i, (*ds)[i].Line(), "")
			if err != nil {
				return n, err
			}
			if ok {
				n.dropped++
			}
		}
		for a := 0; ; a++ {
			cmd, args, err := datadriven.ParseLine((*ds)[i].Line())
			if err != nil || a >= len(args) {
				break
			}
			for len(args[a].Vals) == 1 {
				d, err := time.ParseDuration(args[a].Vals[0])
				if err != nil || d < 2*time.Millisecond {
					break
				}
				args = slices.Clone(args)
				args[a] = argOf(args[a].Key, (d / 2).String())
				ok, err := s.try(ds, i, rejoin(cmd, args), (*ds)[i].inputText())
				if err != nil {
					return n, err
				}
				if !ok {
					break
				}
				n.shortened++
			}
		}
	}
	return n, nil
}

// try replaces directive i by the one line and input give, if it parses and still fails.
func (s *shrinker) try(ds *[]Directive, i int, line, input string) (bool, error) {
	d, err := ParseDirective(line, input)
	if err != nil {
		return false, nil
	}
	cand := slices.Clone(*ds)
	cand[i] = d
	ok, err := s.fails(cand)
	if ok {
		*ds = cand
	}
	return ok, err
}

// rename gives the objects the ops name the names a, b, c... in order of first appearance, if
// the run still fails so; it says whether it did.
func (s *shrinker) rename(ds *[]Directive) (bool, error) {
	names := map[string]string{}
	for _, d := range *ds {
		if d.Op != nil && d.Op.Name != "" {
			if _, ok := names[d.Op.Name]; !ok {
				names[d.Op.Name] = canonicalName(len(names))
			}
		}
	}
	same := true
	for from, to := range names {
		same = same && from == to
	}
	if same {
		return false, nil
	}
	cand := slices.Clone(*ds)
	for i, d := range cand {
		if d.Op == nil || d.Op.Name == "" {
			continue
		}
		op := *d.Op
		op.Name = names[op.Name]
		nd, err := ParseDirective(Directive{Cmd: d.Cmd, Op: &op}.Line(), d.inputText())
		if err != nil {
			return false, nil
		}
		cand[i] = nd
	}
	key := s.key
	s.key = renamedKey(key, names)
	ok, err := s.fails(cand)
	if ok {
		*ds = cand
	} else {
		s.key = key
	}
	return ok, err
}

// renamedKey is key ("ns/name" or "name") with its name renamed as names says.
func renamedKey(key string, names map[string]string) string {
	ns, name, found := strings.Cut(key, "/")
	if !found {
		name, ns = ns, ""
	}
	to, ok := names[name]
	if !ok {
		return key
	}
	if !found {
		return to
	}
	return ns + "/" + to
}

// canonicalName is the i-th short name: a..z, then a1..z1, and so on.
func canonicalName(i int) string {
	name := string(rune('a' + i%26))
	if i >= 26 {
		name += strconv.Itoa(i / 26)
	}
	return name
}
