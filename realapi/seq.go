package realapi

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Sequence is one generated request sequence: its name (family and seed), and its steps, run
// in order on each side in a namespace of its own.
type Sequence struct {
	Name   string
	Family string
	// Namespace is the sequence's namespace, created by the first step; {ns} in paths and
	// bodies.
	Namespace string
	Steps     []Step
}

// Step is one request, a watch, or a compaction. Paths and bodies may hold placeholders,
// replaced per side before the request: {ns}, {rv:NAME}, {continue:NAME}, {uid:NAME} (saved
// by an earlier step's Save).
type Step struct {
	// Name says what the step checks, in reports.
	Name string
	Req  Request
	// Save, when set, keeps the answer's resourceVersion ({rv:Save}), uid ({uid:Save}) and
	// continue token ({continue:Save}) for later steps.
	Save string
	// Watch, when set, makes Req a watch: it is opened, Watch.Then's steps run, then Want
	// events are read (at most Wait).
	Watch *WatchSpec
	// Compact, when set, compacts the side's store at {rv:Compact} instead of a request.
	Compact string
	// Settle, when set, makes the step a wait: Req (a GET) is repeated until the answer's
	// JSON at Settle holds SettleTo, or 20 s pass (then compared as it is).
	Settle   string
	SettleTo string
	// Volatile says a controller writes the object asynchronously (a Deployment's status):
	// its status, resourceVersion and the controller's annotations are not compared.
	Volatile bool
	// Reduce names the part of a large document compared (reduce.go): discovery and OpenAPI.
	Reduce string
	// NoCompare says the answer is needed for what later steps save, not compared (a setup
	// step whose answer another step checks).
	NoCompare bool
}

// WatchSpec is what a watch step reads.
type WatchSpec struct {
	Then []Step
	// Want is how many events to read, progress bookmarks (IsProgressBookmark) not counted.
	Want int
	// Linger, when set, keeps the watch read this long after the Want-th event, so that what
	// the server sends on its own clock (a progress bookmark) within it is compared too.
	Linger time.Duration
}

// Outcome is one step's normalised answer on one side.
type Outcome struct {
	Step       string
	Normalised any
	Err        error
}

// vars are one side's saved values within one sequence.
type vars struct {
	rv, uid, cont map[string]string
	ranks         *ranks
}

var placeholder = regexp.MustCompile(`\{(ns|rv|uid|continue)(?::([A-Za-z0-9_-]+))?\}`)

func (v *vars) expand(s, ns string) (string, error) {
	var missing error
	out := placeholder.ReplaceAllStringFunc(s, func(m string) string {
		sub := placeholder.FindStringSubmatch(m)
		var table map[string]string
		switch sub[1] {
		case "ns":
			return ns
		case "rv":
			table = v.rv
		case "uid":
			table = v.uid
		case "continue":
			table = v.cont
		}
		val, ok := table[sub[2]]
		if !ok && missing == nil {
			missing = fmt.Errorf("realapi: %s is not saved", m)
		}
		return val
	})
	return out, missing
}

// Run runs seq on side and returns each compared step's outcome, in order. An error is a
// failure to talk to the side (not an answer).
func Run(ctx context.Context, side *Side, seq Sequence) ([]Outcome, error) {
	v := &vars{rv: map[string]string{}, uid: map[string]string{}, cont: map[string]string{}, ranks: newRanks()}
	var out []Outcome
	for _, st := range seq.Steps {
		o, err := runStep(ctx, side, seq, st, v, &out)
		if err != nil {
			return out, fmt.Errorf("%s, step %q on %s: %w", seq.Name, st.Name, side.Name, err)
		}
		if !st.NoCompare {
			out = append(out, o)
		}
	}
	return out, nil
}

func runStep(ctx context.Context, side *Side, seq Sequence, st Step, v *vars, out *[]Outcome) (Outcome, error) {
	if st.Compact != "" {
		rev, ok := v.rv[st.Compact]
		if !ok {
			return Outcome{}, fmt.Errorf("compaction at {rv:%s}, which is not saved", st.Compact)
		}
		return Outcome{Step: st.Name, Normalised: "compacted"}, side.Compact(ctx, rev)
	}
	req := st.Req
	var err error
	if req.Path, err = v.expand(req.Path, seq.Namespace); err != nil {
		return Outcome{}, err
	}
	if req.Body, err = v.expand(req.Body, seq.Namespace); err != nil {
		return Outcome{}, err
	}
	var resp Response
	switch {
	case st.Watch != nil:
		floor := v.ranks.max // the Then steps' writes are ranked before the events are read
		w, err := side.OpenWatch(ctx, req)
		if err != nil {
			return Outcome{}, err
		}
		for _, then := range st.Watch.Then {
			o, err := runStep(ctx, side, seq, then, v, out)
			if err != nil {
				w.Stop()
				return Outcome{}, err
			}
			if !then.NoCompare {
				*out = append(*out, o)
			}
		}
		resp = w.Read(st.Watch.Want, 10*time.Second, st.Watch.Linger)
		if w.readErr != nil {
			return Outcome{}, w.readErr
		}
		if st.Save != "" {
			save(resp.Body, st.Save, v)
		}
		return Outcome{Step: st.Name, Normalised: NormaliseWatch(resp, v.ranks, st.Volatile, floor)}, nil
	case st.Settle != "":
		deadline := time.Now().Add(20 * time.Second)
		for {
			if resp, err = side.Do(ctx, req); err != nil {
				return Outcome{}, err
			}
			if settled(resp.Body, st.Settle, st.SettleTo) || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	default:
		if resp, err = side.Do(ctx, req); err != nil {
			return Outcome{}, err
		}
	}
	if st.Save != "" {
		save(resp.Body, st.Save, v)
	}
	return Outcome{Step: st.Name, Normalised: Normalise(reduce(resp, st.Reduce), v.ranks, st.Volatile)}, nil
}

// settled says the JSON body's value at the dotted path prints as want ("<absent>" for none,
// a 404 body counting as absent; "<present>" for any).
func settled(body []byte, path, want string) bool {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	if m["kind"] == "Status" && m["code"] == float64(404) {
		return want == "<absent>"
	}
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return want == "<absent>"
		}
		if cur, ok = mm[k]; !ok {
			return want == "<absent>"
		}
	}
	return want == "<present>" || fmt.Sprint(cur) == want
}

// save keeps the body's metadata.resourceVersion, uid and continue under name.
func save(body []byte, name string, v *vars) {
	var m struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
			UID             string `json:"uid"`
			Continue        string `json:"continue"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &m) != nil {
		return
	}
	if m.Metadata.ResourceVersion != "" {
		v.rv[name] = m.Metadata.ResourceVersion
	}
	if m.Metadata.UID != "" {
		v.uid[name] = m.Metadata.UID
	}
	v.cont[name] = m.Metadata.Continue
}
