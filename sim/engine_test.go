package sim

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// funcActor is an actor built from closures, for tests.
type funcActor struct {
	name    string
	actions func(add func(Action))
}

func (a funcActor) Name() string             { return a.name }
func (a funcActor) Actions(add func(Action)) { a.actions(add) }
func always(name string, run func()) funcActor {
	act := Action{Name: "run", Run: run}
	return funcActor{name, func(add func(Action)) { add(act) }}
}

func TestNewRejectsBadConfig(t *testing.T) {
	bad := []Config{
		{Policy: 9}, {PCTDepth: -1}, {MaxSteps: -1}, {MaxSimTime: -time.Second},
		{FaultSiteProbability: 1.5}, {FaultHitProbability: -0.1}, {Trace: 7}, {MaxTraceEvents: -3},
	}
	for _, cfg := range bad {
		if _, err := New(cfg); err == nil || !strings.HasPrefix(err.Error(), "sim: ") {
			t.Errorf("New(%+v) error = %v, want a \"sim: \" error", cfg, err)
		}
	}
	cfg := Config{Seed: 5}
	s := mustNew(t, cfg)
	if cfg.MaxSteps != 0 {
		t.Errorf("New changed the caller's Config")
	}
	if got := s.Config().MaxSteps; got != DefaultMaxSteps {
		t.Errorf("MaxSteps = %d, want default %d", got, DefaultMaxSteps)
	}
}

// Goal: each stream's draws depend only on (seed, name). Method: draw from "workload" in two runs,
// one of which first draws heavily from every other stream, and compare.
func TestStreamsAreIndependent(t *testing.T) {
	a, b := mustNew(t, Config{Seed: 42}), mustNew(t, Config{Seed: 42})
	if a.Rand(StreamWorkload) != a.Rand(StreamWorkload) {
		t.Fatalf("Rand returned two generators for one name")
	}
	for _, name := range []string{StreamFaults, StreamScheduling, StreamJitter, StreamAPIServer, StreamNetwork, "custom"} {
		for range 1000 {
			b.Rand(name).Uint64()
		}
	}
	var got, want []uint64
	for range 100 {
		want = append(want, a.Rand(StreamWorkload).Uint64())
		got = append(got, b.Rand(StreamWorkload).Uint64())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("workload draws shifted by other streams (-want +got):\n%s", diff)
	}
	c := mustNew(t, Config{Seed: 43})
	if c.Rand(StreamWorkload).Uint64() == want[0] {
		t.Errorf("seeds 42 and 43 start the workload stream alike")
	}
	if a.Rand(StreamJitter).Uint64() == mustNew(t, Config{Seed: 42}).Rand(StreamNetwork).Uint64() {
		t.Errorf("jitter and network streams start alike")
	}
}

func TestHeaderListsKnobsInOrder(t *testing.T) {
	s := mustNew(t, Config{Seed: 9, Policy: PolicyPCT})
	s.SetKnob("objects", "100")
	s.SetKnob("resync", "30s")
	s.SetKnob("objects", "120")
	h := s.Header()
	for _, want := range []string{"seed=9\npolicy=pct\npct.depth=3\n", "pct.change_points=", "objects=120\nresync=30s\n"} {
		if !strings.Contains(h, want) {
			t.Errorf("Header() =\n%s\nwant it to contain %q", h, want)
		}
	}
	if !strings.HasSuffix(h, "objects=120\nresync=30s\n") {
		t.Errorf("Header() =\n%s\nwant caller knobs last, in first-set order", h)
	}
}

func TestParsePolicy(t *testing.T) {
	for p := PolicyRandom; p <= PolicyPCT; p++ {
		got, err := ParsePolicy(p.String())
		if err != nil || got != p {
			t.Errorf("ParsePolicy(%q) = %v, %v, want %v", p.String(), got, err, p)
		}
	}
	if _, err := ParsePolicy("lifo"); err == nil {
		t.Errorf("ParsePolicy(\"lifo\") = nil error")
	}
	if got := Policy(0).String(); got != "Policy(0)" {
		t.Errorf("Policy(0).String() = %q", got)
	}
}

// Goal: a panic in an action is a returned *RunError with the seed, step, time, actor, action,
// panic value, stack and a repro line; the Sim stays stopped afterwards.
func TestPanicBecomesRunError(t *testing.T) {
	s := mustNew(t, Config{Seed: 77})
	n := 0
	s.AddActor(always("counter", func() {
		n++
		if n == 3 {
			panic("boom")
		}
	}))
	err := s.RunFor(0)
	var re *RunError
	if !errors.As(err, &re) {
		t.Fatalf("RunFor = %v, want a *RunError", err)
	}
	if re.Seed != 77 || re.Step != 3 || re.Actor != "counter" || re.Action != "run" || re.Panic != "boom" || len(re.Stack) == 0 {
		t.Errorf("RunError = %+v", re)
	}
	msg := re.Error()
	for _, want := range []string{"seed 77", "step 3", "boom", "repro: rerun with sim.Config{Seed: 77, Policy: sim.PolicyRandom}"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not contain %q", msg, want)
		}
	}
	if _, err2 := s.Step(); err2 != re {
		t.Errorf("Step after a RunError = %v, want the same error", err2)
	}
}

func TestLimits(t *testing.T) {
	s := mustNew(t, Config{Seed: 1, MaxSteps: 100})
	s.AddActor(always("spin", func() {}))
	if err := s.RunFor(time.Second); !errors.Is(err, ErrMaxSteps) || !strings.Contains(err.Error(), "seed 1") {
		t.Errorf("RunFor with a spinning actor = %v, want ErrMaxSteps naming the seed", err)
	}

	s = mustNew(t, Config{Seed: 1, MaxSimTime: time.Hour})
	s.Clock().NewTicker(time.Second)
	if err := s.RunUntilQuiescent(); !errors.Is(err, ErrMaxSimTime) {
		t.Errorf("RunUntilQuiescent with a live ticker = %v, want ErrMaxSimTime", err)
	}
	if got := s.Now(); got != time.Hour {
		t.Errorf("stopped at %v, want the 1h limit", got)
	}
	if err := s.RunFor(2 * time.Hour); !errors.Is(err, ErrMaxSimTime) {
		t.Errorf("RunFor past MaxSimTime = %v, want ErrMaxSimTime", err)
	}
}

// Goal: RunUntil replaces Eventually: it stops as soon as the condition holds, and otherwise says
// why it stopped.
func TestRunUntil(t *testing.T) {
	s := mustNew(t, Config{Seed: 2})
	done := false
	s.AfterFunc(3*time.Second, "w", "finish", func() { done = true })
	if err := s.RunUntil(func() bool { return done }, 10*time.Second); err != nil {
		t.Fatalf("RunUntil = %v", err)
	}
	if got := s.Now(); got != 3*time.Second {
		t.Errorf("stopped at %v, want 3s", got)
	}

	s.Clock().NewTicker(time.Second)
	err := s.RunUntil(func() bool { return false }, 5*time.Second)
	if !errors.Is(err, ErrBudget) {
		t.Fatalf("RunUntil never true = %v, want ErrBudget", err)
	}
	for _, want := range []string{"budget 5s", "stopped at sim time +8.000s", "in this call", "seed 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not contain %q", err, want)
		}
	}

	idle := mustNew(t, Config{Seed: 2})
	if err := idle.RunUntil(func() bool { return false }, time.Minute); !errors.Is(err, ErrIdle) {
		t.Errorf("RunUntil on an idle run = %v, want ErrIdle", err)
	}
}

// Goal: RunUntil's error says where the run stopped when it returned, not where it stands when
// the text is read.
func TestRunUntilErrorIsTheStop(t *testing.T) {
	s := mustNew(t, Config{Seed: 7, Repro: "go test -run X"})
	s.Clock().NewTicker(time.Second)
	if err := s.RunFor(1500 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	steps := s.StepCount()
	err := s.RunUntil(func() bool { return false }, 2*time.Second)
	inCall := s.StepCount() - steps
	want := fmt.Sprintf("%v: budget 2s from +1.500s, stopped at sim time +3.500s after %d steps (%d in this call); seed 7; go test -run X",
		ErrBudget, s.StepCount(), inCall)
	if err := s.RunFor(10 * time.Second); err != nil { // the run goes on before the text is read
		t.Fatal(err)
	}
	if !errors.Is(err, ErrBudget) || err.Error() != want {
		t.Errorf("RunUntil = %q, want %q (ErrBudget)", err, want)
	}
	if inCall != 2 {
		t.Errorf("%d steps in the call, want 2 (ticks at 2s and 3s)", inCall)
	}
}

// Goal: fault sites activate by (seed, site) alone, every decision is traced, and disabling
// faults makes Fault return false silently.
func TestFaults(t *testing.T) {
	sites := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
	activeIn := func(s *Sim, order []string) map[string]bool {
		m := map[string]bool{}
		for _, site := range order {
			s.Fault(site)
			m[site] = s.sites[site].active
		}
		return m
	}
	reversed := make([]string, len(sites))
	for i, site := range sites {
		reversed[len(sites)-1-i] = site
	}
	for seed := range uint64(20) {
		a := activeIn(mustNew(t, Config{Seed: seed}), sites)
		b := activeIn(mustNew(t, Config{Seed: seed}), reversed)
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("seed %d: activation depends on order of first use (-forward +reverse):\n%s", seed, diff)
		}
	}

	s := mustNew(t, Config{Seed: 1, FaultSiteProbability: 1, FaultHitProbability: 0.5})
	fires := 0
	for range 1000 {
		if s.Fault("x") {
			fires++
		}
	}
	if fires < 400 || fires > 600 {
		t.Errorf("active site fired %d of 1000 hits, want about 500", fires)
	}
	if got, want := s.Trace().Len(), int64(1001); got != want {
		t.Errorf("trace has %d events, want %d (one activation and one per hit)", got, want)
	}
	s.SetFaultsEnabled(false)
	n := s.Trace().Len()
	if s.Fault("x") || s.Fault("new") {
		t.Errorf("Fault fired while disabled")
	}
	if got := s.Trace().Len(); got != n {
		t.Errorf("disabled faults recorded %d events", got-n)
	}
	off := mustNew(t, Config{Seed: 1, DisableFaults: true, FaultSiteProbability: 1, FaultHitProbability: 1})
	if off.Fault("x") {
		t.Errorf("Fault fired with Config.DisableFaults")
	}
}

// Goal: retention is bounded and the hash does not depend on it.
func TestTraceRetentionAndHash(t *testing.T) {
	run := func(level TraceLevel, maxEvents int) *Sim {
		s := mustNew(t, Config{Seed: 4, Trace: level, MaxTraceEvents: maxEvents, MaxSteps: 50})
		i := 0
		s.AddActor(always("w", func() { i++; s.Emit("w", "note", FInt("i", int64(i)), F("msg", "two words")) }))
		if err := s.RunFor(0); !errors.Is(err, ErrMaxSteps) {
			t.Fatalf("RunFor = %v", err)
		}
		return s
	}
	full, small, hashOnly, none := run(TraceFull, 0), run(TraceFull, 10), run(TraceHashOnly, 0), run(TraceNone, 0)
	if full.Trace().Hash() != small.Trace().Hash() || full.Trace().Hash() != hashOnly.Trace().Hash() {
		t.Errorf("hash depends on retention")
	}
	if got := len(small.Trace().Events()); got != 10 || small.Trace().Dropped() != 90 {
		t.Errorf("kept %d events, dropped %d; want 10 and 90", got, small.Trace().Dropped())
	}
	if got := small.Trace().Events()[9].String(); got != `    50        +0.000s  w            note          i=50 msg="two words"` {
		t.Errorf("last event = %q", got)
	}
	if !strings.HasPrefix(small.Trace().String(), "... 90 earlier events not kept\n") {
		t.Errorf("text does not say events were dropped:\n%s", small.Trace())
	}
	if len(hashOnly.Trace().Events()) != 0 || none.Trace().Hash() != "" || none.Trace().Len() != 100 {
		t.Errorf("hash-only kept events, or none hashed")
	}
	var b strings.Builder
	if err := small.Trace().WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if want := `{"step":50,"time_ns":0,"time":"+0.000s","actor":"w","kind":"note","fields":[["i","50"],["msg","two words"]]}`; !strings.HasSuffix(b.String(), want+"\n") {
		t.Errorf("JSON ends with\n%s\nwant\n%s", b.String()[len(b.String())-150:], want)
	}
}

func TestFormatSimTime(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "+0.000s", 1250 * time.Millisecond: "+1.250s", 1: "+0.000000001s",
		24 * time.Hour: "+86400.000s", -1500 * time.Millisecond: "-1.500s",
	} {
		if got := FormatSimTime(d); got != want {
			t.Errorf("FormatSimTime(%d) = %q, want %q", d, got, want)
		}
	}
}

// Goal: FIFO runs the longest-enabled action and rotates actions that stay enabled.
func TestFIFOOrder(t *testing.T) {
	s := mustNew(t, Config{Seed: 1, Policy: PolicyFIFO, MaxSteps: 7})
	var order []string
	s.AddActor(always("a", func() { order = append(order, "a") }))
	s.AddActor(always("b", func() { order = append(order, "b") }))
	late := false
	s.AddActor(funcActor{"c", func(add func(Action)) {
		if late {
			add(Action{Name: "run", Run: func() { order = append(order, "c") }})
		}
	}})
	s.AfterFunc(0, "t", "enable", func() { late = true; order = append(order, "t") })
	_ = s.RunFor(0)
	if diff := cmp.Diff([]string{"t", "a", "b", "c", "a", "b", "c"}, order); diff != "" {
		t.Errorf("FIFO order (-want +got):\n%s", diff)
	}
}

// Goal: subscribers see every event as it is recorded, in trace order.
func TestSubscribeSeesEveryEvent(t *testing.T) {
	s := mustNew(t, Config{Seed: 1, FaultSiteProbability: 1})
	var seen []string
	s.Subscribe(func(e Event) { seen = append(seen, e.String()) })
	s.AfterFunc(time.Second, "w", "work", func() { s.Emit("w", "note", F("k", "v")); s.Fault("site") })
	if err := s.RunUntilQuiescent(); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, e := range s.Trace().Events() {
		want = append(want, e.String())
	}
	if diff := cmp.Diff(want, seen); diff != "" || len(seen) != 4 {
		t.Errorf("subscriber saw (-trace +seen):\n%s", diff)
	}
}

// Goal: a kind of 14 or more characters never runs into its first field, and shorter kinds keep
// the column layout (so existing trace hashes do not change).
func TestEventTextSeparatesLongKinds(t *testing.T) {
	long := Event{Step: 3, Actor: "inf1/reflector", Kind: "relist-backoff", Fields: []Field{F("delay", "1s")}}
	if got := long.String(); !strings.Contains(got, "relist-backoff delay=1s") {
		t.Errorf("long kind: got %q, want the kind and its first field apart", got)
	}
	short := Event{Step: 3, Actor: "a", Kind: "list", Fields: []Field{F("rv", "0")}}
	if got, want := short.String(), "     3        +0.000s  a            list          rv=0"; got != want {
		t.Errorf("short kind: got %q, want %q", got, want)
	}
}

// Goal: a host's AfterEachStep hook runs at the end of every step, actions and timers alike,
// inside the step (its events carry the step's number), and names are unique.
func TestAfterEachStep(t *testing.T) {
	s, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ran []int64
	if err := s.AfterEachStep("host", func() {
		ran = append(ran, s.StepCount())
		s.Emit("host", "settled")
	}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		name string
		fn   func()
	}{{"host", func() {}}, {"", func() {}}, {"other", nil}} {
		if err := s.AfterEachStep(bad.name, bad.fn); err == nil || !strings.HasPrefix(err.Error(), "sim: AfterEachStep") {
			t.Errorf("AfterEachStep(%q, fn nil=%v) = %v", bad.name, bad.fn == nil, err)
		}
	}
	s.AfterFunc(time.Second, "t", "fire", func() {})
	n := 0
	s.AddActor(funcActor{"a", func(add func(Action)) {
		if n < 2 {
			add(Action{Name: "act", Run: func() { n++ }})
		}
	}})
	if err := s.RunUntilQuiescent(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ran, []int64{1, 2, 3}) {
		t.Errorf("hook ran after steps %v, want [1 2 3]", ran)
	}
	for _, e := range s.Trace().Events() {
		if e.Kind == "settled" && e.Step == 0 {
			t.Errorf("hook event outside a step: %v", e)
		}
	}
}
