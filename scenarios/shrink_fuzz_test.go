package scenarios_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
)

// A user's controller fuzzed through world.Fuzz, its failures written out as ops files and
// shrunk (scenarios.WriteOpsFailure, ShrinkOps): the whole path a user's own fuzz target takes.
// It lives here, not in sim/world, because it uses both world and scenarios (sim never
// imports scenarios).

// The planted bugs of FuzzUserController's controller (INFORMERSIM_PLANT), each a bug real
// controllers have had, and each hinging on a hazard a fuzz input must reach.
const (
	// plantTombstone drops a delete whose object is a DeletedFinalStateUnknown, so a delete
	// missed while the informer was away (a 410, then a relist) leaves its key behind.
	plantTombstone = "tombstone"
	// plantMutate stamps, in place, an object that a relist delivers unchanged (OnUpdate with
	// the old resourceVersion): the informer's cached object, which is read-only.
	plantMutate = "mutate"
	// plantStaleRead computes its status from a LIST at resourceVersion "0" (any replica's
	// watch cache, however far behind) instead of a consistent read, so a status computed on a
	// lagging replica after the last event stays wrong.
	plantStaleRead = "stale-read"
	// plantInitialList skips the adds of an informer's initial list, as if every object listed
	// at start had been handled before: true of a first start on an empty namespace, false
	// after a restart, when the restarted tracker never learns of the objects that were there.
	plantInitialList = "initial-list"
)

// keyTracker is a user's controller in miniature: it keeps the keys of the objects it was
// told about, and, after each event, its status: how many objects the namespace holds, from a
// LIST (retried after 100ms when refused). plant is one of the planted bugs, or "".
type keyTracker struct {
	w      *world.World
	plant  string
	keys   map[string]bool
	status int
	retry  bool // a retry of a refused LIST is pending
}

func (k *keyTracker) OnAdd(obj any, initial bool) {
	if initial && k.plant == plantInitialList {
		return
	}
	k.keys[key(obj)] = true
	k.reconcile()
}
func (k *keyTracker) OnUpdate(oldObj, newObj any) {
	if o, n := oldObj.(*unstructured.Unstructured), newObj.(*unstructured.Unstructured); k.plant == plantMutate && o.GetResourceVersion() == n.GetResourceVersion() {
		n.SetAnnotations(map[string]string{"tracked": "yes"}) // the planted bug: it is the cache's object
	}
	k.keys[key(newObj)] = true
	k.reconcile()
}
func (k *keyTracker) OnDelete(obj any) {
	if _, tomb := obj.(informer.DeletedFinalStateUnknown); tomb && k.plant == plantTombstone {
		return
	}
	k.keys[key(obj)] = false
	k.reconcile()
}

// reconcile recomputes the status from a LIST: a consistent read (resourceVersion ""), or,
// planted, any replica's cache (resourceVersion "0").
func (k *keyTracker) reconcile() {
	rv := ""
	if k.plant == plantStaleRead {
		rv = "0"
	}
	list, err := k.w.Server().Resource(world.DefaultResource()).Namespace("default").List(context.Background(), metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		if !k.retry {
			k.retry = true
			if _, err := k.w.After(100*time.Millisecond, "tracker", "retry", func() { k.retry = false; k.reconcile() }); err != nil {
				panic(err)
			}
		}
		return
	}
	k.status = len(list.Items)
}

func key(obj any) string {
	if t, ok := obj.(informer.DeletedFinalStateUnknown); ok {
		return t.Key
	}
	k, _ := informer.MetaNamespaceKeyFunc(obj)
	return k
}

// trackerClient is the name under which the fuzz world registers the tracker as a client of
// the apiserver (world.World.AddClient), so that its restart is the op
// crash-restart client=tracker.
const trackerClient = "tracker"

// fuzzWorld is the world a fuzz input runs in: two replicas serving lists and watches in turn,
// one informer, the tracker as its handler; once the world converges, the tracker's keys and
// its status must equal the apiserver's objects (two checks). The tracker is the world's client
// trackerClient, whose crash-restart restarts it, so that an input places a crash among its
// ops as it places a watch close (fuzzFaultKinds), and a replay, a written-out run and a shrink
// carry it like any op.
func fuzzWorld(seed uint64, repro, plant string) (*world.World, error) {
	w, restart, err := trackerWorld(seed, repro, plant)
	if err != nil {
		return nil, err
	}
	if err := w.AddClient(trackerClient, func(op world.Op) error {
		if op.Kind != world.OpCrashRestart {
			return fmt.Errorf("the tracker takes only %s, not %s", world.OpCrashRestart, op.Kind)
		}
		if err := restart(w); err != nil {
			panic(err) // a new informer of a running world: only a bug of the test gets here
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return w, nil
}

// fuzzFaultKinds are the fault kinds a fuzz input chooses from: the world's apiserver faults,
// then crash-restart aimed at the tracker (the one client fault it takes), appended, so that it
// takes the one fault value that folded onto another kind before (world.Fuzz): an input without
// that value decodes as it did when the tracker was not a client.
func fuzzFaultKinds(w *world.World) []world.OpKind {
	return append(slices.DeleteFunc(w.FaultKinds(), world.OpKind.ClientFault), world.OpCrashRestart)
}

// trackerWorld is fuzzWorld before the tracker is its client, and the function that restarts
// the tracker (the client's crash-restart; a campaign's PerturbTarget.Restart): its informer
// stops and a new one starts with a new tracker (what a crashed controller's process does),
// which the checks then look at.
func trackerWorld(seed uint64, repro, plant string) (*world.World, func(*world.World) error, error) {
	w, err := world.NewFromConfig(sim.Config{Seed: seed, MaxSteps: 200_000, Repro: repro},
		fakeapi.Config{Replicas: 2, Routing: fakeapi.RoutingRoundRobin}, world.Config{})
	if err != nil {
		return nil, nil, err
	}
	var tr *keyTracker
	var inf *world.Informer
	starts := 0
	start := func(w *world.World) error {
		if inf != nil {
			inf.Stop()
		}
		starts++
		var err error
		if inf, err = w.AddInformer(fmt.Sprintf("inf%d", starts), world.InformerSpec{Namespace: "default"}); err != nil {
			return err
		}
		tr = &keyTracker{w: w, plant: plant, keys: map[string]bool{}}
		if _, err := w.AddHandler(inf, "tracker", tr, world.HandlerOptions{}); err != nil {
			return err
		}
		return inf.Start()
	}
	if err := start(w); err != nil {
		return nil, nil, err
	}
	w, err = trackerChecks(w, func() *keyTracker { return tr })
	return w, start, err
}

// trackerChecks adds the two checks on the tracker cur returns.
func trackerChecks(w *world.World, cur func() *keyTracker) (*world.World, error) {
	live := func() ([]string, error) {
		list, err := w.Server().Snapshot(world.DefaultResource(), "default", metav1.ListOptions{}) // not a request: no fault reaches it
		if err != nil {
			return nil, err
		}
		var out []string
		for _, o := range list.Items {
			out = append(out, o.GetNamespace()+"/"+o.GetName())
		}
		slices.Sort(out)
		return out, nil
	}
	if err := w.AddCheck("tracker keys", func() error {
		want, err := live()
		if err != nil {
			return err
		}
		var got []string
		for k, isLive := range maps.All(cur().keys) {
			if isLive {
				got = append(got, k)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			return fmt.Errorf("the tracker holds %v, the apiserver %v", got, want)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if err := w.AddCheck("tracker status", func() error {
		want, err := live()
		if err != nil {
			return err
		}
		if cur().status != len(want) {
			return fmt.Errorf("the tracker's status counts %d objects, the apiserver holds %d", cur().status, len(want))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return w, nil
}

// fuzzControllerRun is the run a fuzz input decodes to (world.FuzzSeed, world.Fuzz): the fuzz
// world with a workload whose every choice, fault kinds included, the input makes.
func fuzzControllerRun(data []byte, fuzzName, plant string) (*world.World, *world.Generator, error) {
	return fuzzControllerRunAppended(data, fuzzName, plant)
}

// fuzzControllerRunAppended is fuzzControllerRun with appended after fuzzFaultKinds, as a
// kind added at the end of the op table would be.
func fuzzControllerRunAppended(data []byte, fuzzName, plant string, appended ...world.OpKind) (*world.World, *world.Generator, error) {
	seed, choices := world.FuzzSeed(data)
	w, err := fuzzWorld(seed, world.FuzzRepro(fuzzName, data), plant)
	if err != nil {
		return nil, nil, err
	}
	g, err := w.Fuzz(choices, world.GenConfig{Ops: 40, FaultOps: true, FaultOpKinds: append(fuzzFaultKinds(w), appended...), MaxInterval: 50 * time.Millisecond})
	if err != nil {
		return nil, nil, err
	}
	return w, g, w.RunUntilConverged(time.Hour)
}

// stableUnderAnAppendedKind reports whether data decodes to the same ops with a kind appended to
// the fault kinds (patch, standing in for a kind added at the end of the op table): whether it
// holds no fault byte of the value naming the next position (world.Fuzz), so that adding a kind
// leaves its run as it is.
func stableUnderAnAppendedKind(t *testing.T, data []byte) bool {
	t.Helper()
	_, g1, err1 := fuzzControllerRun(data, "FuzzUserController", "")
	_, g2, err2 := fuzzControllerRunAppended(data, "FuzzUserController", "", world.OpPatch)
	if err1 != nil || err2 != nil {
		t.Fatalf("input %x: the correct controller fails: %v, %v", data, err1, err2)
	}
	return slices.EqualFunc(g1.Ops(), g2.Ops(), func(a, b world.GeneratedOp) bool { return a.Op.String() == b.Op.String() && a.Time == b.Time })
}

// replayControllerRun runs ops (with sleeps between them, from time 0, crash-restarts of the
// tracker included) in the fuzz world of seed: the replay scenarios.ShrinkOps shrinks a failing
// fuzz run with.
func replayControllerRun(seed uint64, ops []world.Op, plant string) error {
	w, err := fuzzWorld(seed, "", plant)
	if err != nil {
		return err
	}
	if _, err := w.Script(0, ops...); err != nil {
		return err
	}
	return w.RunUntilConverged(time.Hour)
}

// plantEnv turns a planted bug on in FuzzUserController (to measure how fast go test -fuzz
// finds it): INFORMERSIM_PLANT=tombstone, mutate, stale-read or initial-list.
const plantEnv = "INFORMERSIM_PLANT"

// seedsEnv=none leaves FuzzUserController's own seed inputs out (f.Add), to measure what the
// decoding alone gives the fuzzer (move testdata/fuzz/FuzzUserController aside as well).
const seedsEnv = "INFORMERSIM_FUZZ_SEEDS"

// FuzzUserController fuzzes a user's controller through world.Fuzz: the input is the choice
// stream. Plain go test replays its seeds and the corpus in testdata/fuzz/FuzzUserController
// (inputs that reach each hazard: TestFuzzCorpusReachesEveryHazard); INFORMERSIM_PLANT plants
// a bug (tombstone, mutate, stale-read, initial-list) for go test -fuzz to find. A failure names Go's replay
// line, and writes the run's ops as a scenario file and its shrunk form (scenarios.
// WriteOpsFailure), naming both.
func FuzzUserController(f *testing.F) {
	f.Add([]byte{})
	if os.Getenv(seedsEnv) != "none" {
		f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x07some choices"))
		// Inputs of forty ops for the mutations to start from (the fuzzer's own mutations
		// grow an input a few bytes at a time).
		r := rand.New(rand.NewPCG(5, 6))
		for range 4 {
			b := make([]byte, 8+120)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			f.Add(b)
		}
	}
	plant := os.Getenv(plantEnv)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, g, err := fuzzControllerRun(data, "FuzzUserController", plant)
		if err != nil {
			t.Fatal(fuzzFailure(t, data, plant, g, err))
		}
	})
}

// fuzzFailure is the message of a failing fuzz input: the failure (with Go's replay line), then
// the run's ops as a scenario file and shrunk (scenarios.WriteOpsFailure).
func fuzzFailure(t *testing.T, data []byte, plant string, g *world.Generator, failure error) string {
	t.Helper()
	if g == nil {
		return failure.Error()
	}
	seed, _ := world.FuzzSeed(data)
	repro := world.FuzzRepro("FuzzUserController", data)
	controller := "FuzzUserController's keyTracker, client " + trackerClient
	if plant != "" {
		controller += " (" + plantEnv + "=" + plant + ")"
	}
	files, err := scenarios.WriteOpsFailure(seed, g.Ops(), failure,
		func(seed uint64, ops []world.Op) error { return replayControllerRun(seed, ops, plant) },
		scenarios.OpsShrinkOptions{Name: strings.ReplaceAll(strings.TrimPrefix(strings.Fields(repro)[2], "-run="), "/", "-"), Controller: controller, Replay: repro, MaxRuns: 2000})
	if err != nil {
		return failure.Error() + "\n" + err.Error()
	}
	return failure.Error() + "\n" + files
}

// Goal: FuzzRepro names the file go test -fuzz writes for a failing input (checked against the
// corpus files here, which Go's naming must match), so the replay line works while fuzzing;
// and each input go test -fuzz found with a bug planted (testdata/fuzz-plant-*, kept out of
// the fuzz corpus) passes with the correct controller, fails with the planted one, its oracle
// or check, naming that line, and shrinks (scenarios.ShrinkOps) to at most three ops that
// still fail so, as the ops file reads back (scenarios.OpsOfFile); the restart's plant
// (initial-list) keeps the op crash-restart client=tracker, and passes without it.
func TestFuzzReproAndThePlantedBugsInputs(t *testing.T) {
	files, _ := filepath.Glob("testdata/fuzz/FuzzUserController/*")
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b))[:16]; got != filepath.Base(f) {
			t.Errorf("%s: hash %s", f, got)
		}
		data := corpusBytes(t, string(b))
		if want := "go test -run=FuzzUserController/" + filepath.Base(f) + " ./scenarios"; world.FuzzRepro("FuzzUserController", data) != want {
			t.Errorf("FuzzRepro = %q, want %q", world.FuzzRepro("FuzzUserController", data), want)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no corpus file of FuzzUserController to check FuzzRepro against")
	}
	for plant, sig := range map[string]string{plantTombstone: `check "tracker keys"`, plantMutate: "oracle " + world.OracleReadOnlyObjects,
		plantStaleRead: `check "tracker status"`, plantInitialList: `check "tracker keys"`} {
		b, err := os.ReadFile("testdata/fuzz-plant-" + plant)
		if err != nil {
			t.Fatal(err)
		}
		data := corpusBytes(t, string(b))
		if _, _, err := fuzzControllerRun(data, "FuzzUserController", ""); err != nil {
			t.Fatalf("%s: the correct controller fails on the input: %v", plant, err)
		}
		if !stableUnderAnAppendedKind(t, data) {
			t.Errorf("%s: the input decodes to another run once a fault kind is added at the end of the op table", plant)
		}
		_, g, err := fuzzControllerRun(data, "FuzzUserController", plant)
		if err == nil || scenarios.FailureSignature(err) != sig {
			t.Fatalf("%s: the planted bug's input: %v, want %s", plant, err, sig)
		}
		if want := world.FuzzRepro("FuzzUserController", data); !strings.Contains(err.Error(), want) {
			t.Errorf("%s: the failure does not name Go's replay line %q: %v", plant, want, err)
		}
		seed, _ := world.FuzzSeed(data)
		replay := func(seed uint64, ops []world.Op) error { return replayControllerRun(seed, ops, plant) }
		shrunk, err := scenarios.ShrinkOps(seed, g.Ops(), err, replay, scenarios.OpsShrinkOptions{Name: "plant-" + plant})
		if err != nil {
			t.Fatalf("%s: %v", plant, err)
		}
		s2, ops, err := scenarios.OpsOfFile("shrunk", shrunk.Text)
		if err != nil || s2 != seed {
			t.Fatalf("%s: the shrunk file reads back as seed %d (%v):\n%s", plant, s2, err, shrunk.Text)
		}
		if got := scenarios.FailureSignature(replay(seed, ops)); got != sig || !shrunk.Minimal || shrunk.Ops[1] > 3 {
			t.Errorf("%s: shrunk to %d ops (minimal %v), which fail with %q, want at most 3 failing with %s:\n%s", plant, shrunk.Ops[1], shrunk.Minimal, got, sig, shrunk.Text)
		}
		if plant == plantInitialList {
			// Its bug shows only after a restart: the shrunk ops keep the tracker's
			// crash-restart, and pass without it.
			without := slices.DeleteFunc(slices.Clone(ops), func(op world.Op) bool { return op.Kind == world.OpCrashRestart })
			if len(without) == len(ops) || ops[slices.IndexFunc(ops, func(op world.Op) bool { return op.Kind == world.OpCrashRestart })].Client != trackerClient {
				t.Errorf("%s: the shrunk ops hold no crash-restart client=%s:\n%s", plant, trackerClient, shrunk.Text)
			} else if err := replay(seed, without); err != nil {
				t.Errorf("%s: the shrunk ops fail without their crash-restart too: %v", plant, err)
			}
		}
		t.Logf("%s: %d bytes, %d ops, shrunk to %d in %d runs:\n%s", plant, len(data), shrunk.Ops[0], shrunk.Ops[1], shrunk.Runs, shrunk.Text)
	}
}

// corpusBytes reads a go test fuzz v1 file holding one []byte.
func corpusBytes(t *testing.T, file string) []byte {
	t.Helper()
	line, ok := strings.CutPrefix(file, "go test fuzz v1\n[]byte(")
	if !ok {
		t.Fatalf("not a one-[]byte corpus file: %q", file)
	}
	line = strings.TrimSuffix(strings.TrimSpace(line), ")")
	var s string
	if _, err := fmt.Sscanf(line, "%q", &s); err != nil {
		t.Fatal(errors.Join(err, fmt.Errorf("corpus line %q", line)))
	}
	return []byte(s)
}

// corpusEnv=write makes TestFuzzCorpusReachesEveryHazard (re)write FuzzUserController's
// corpus: for each hazard the fuzz world can reach, the shortest of a fixed series of random
// inputs that reaches it.
const corpusEnv = "INFORMERSIM_WRITE_CORPUS"

// fuzzWorldHazards are the hazards FuzzUserController's world can reach: its workload writes
// without preconditions (no conflict), its one handler is not slow, joins before the start and
// asks no resync; its restarts (crash-restart client=tracker) start a new informer.
var fuzzWorldHazards = []string{world.HazardWatchExpired, world.HazardRelist, world.HazardTombstone, world.HazardStaleList,
	world.HazardBookmark, world.HazardWatchEnd, world.HazardCompaction, world.HazardRestart}

// Goal: FuzzUserController's corpus (testdata/fuzz/FuzzUserController, which plain go test
// replays and go test -fuzz mutates) holds, for each hazard its world can reach, an input that
// reaches it, each passing with the correct controller and decoding to the same run once a
// fault kind is added at the end of the op table; removing one, or a decoding that no longer
// reaches a hazard from it, fails this test.
func TestFuzzCorpusReachesEveryHazard(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzUserController")
	if os.Getenv(corpusEnv) == "write" {
		writeHazardCorpus(t, dir)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus in %s (%v): %s=write writes it", dir, err, corpusEnv)
	}
	reached := world.Hazards{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data := corpusBytes(t, string(b))
		w, _, err := fuzzControllerRun(data, "FuzzUserController", "")
		if err != nil {
			t.Fatalf("%s: the correct controller fails: %v", f, err)
		}
		if !stableUnderAnAppendedKind(t, data) {
			t.Errorf("%s decodes to another run once a fault kind is added at the end of the op table: rewrite the corpus (make fuzz-corpus)", f)
		}
		h := world.CountHazards(w.Sim().Trace().Events())
		t.Logf("%s: %s", filepath.Base(f), h)
		reached.Add(h)
	}
	for _, k := range fuzzWorldHazards {
		if reached[k] == 0 {
			t.Errorf("no corpus input reaches %s: %s", k, reached)
		}
	}
}

// writeHazardCorpus replaces dir's files by, for each of fuzzWorldHazards, the shortest input of
// a fixed random series that reaches it (with the correct controller) and decodes to the same
// run once a fault kind is appended (stableUnderAnAppendedKind), named as go test -fuzz names
// corpus files.
func writeHazardCorpus(t *testing.T, dir string) {
	t.Helper()
	old, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(22, 3))
	best := map[string][]byte{}
	for n := 12; n <= 200 && len(best) < len(fuzzWorldHazards); n += 4 {
		for range 50 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			w, _, err := fuzzControllerRun(b, "FuzzUserController", "")
			if err != nil {
				t.Fatalf("input %x: the correct controller fails: %v", b, err)
			}
			h := world.CountHazards(w.Sim().Trace().Events())
			for _, k := range fuzzWorldHazards {
				if _, ok := best[k]; !ok && h[k] > 0 && stableUnderAnAppendedKind(t, b) {
					best[k] = b
				}
			}
		}
	}
	written := map[string]bool{}
	for _, k := range fuzzWorldHazards {
		b, ok := best[k]
		if !ok {
			t.Fatalf("no input of up to 200 bytes reached %s", k)
		}
		file := "go test fuzz v1\n" + fmt.Sprintf("[]byte(%q)\n", b)
		name := fmt.Sprintf("%x", sha256.Sum256([]byte(file)))[:16]
		if !written[name] {
			written[name] = true
			if err := os.WriteFile(filepath.Join(dir, name), []byte(file), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: %d bytes, %s", k, len(b), name)
	}
}

// Goal: the decoding gives a fuzzer leverage: of 300 random inputs as short as a fuzzer's
// first mutations (8 to 128 bytes), at least one in ten delivers a tombstone (a delete while
// the informer was away) and one in five relists, and each fails the tombstone-ignoring
// controller. (Eight bytes a choice, no bias, reached no tombstone in 500 such inputs.)
func TestFuzzDecodingLeansToHazards(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	const n = 300
	reached := map[string]int{}
	tombstoneCaught := 0
	for range n {
		b := make([]byte, 8+r.IntN(121))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		w, _, err := fuzzControllerRun(b, "FuzzX", "")
		if err != nil {
			t.Fatalf("input %x: %v", b, err)
		}
		h := world.CountHazards(w.Sim().Trace().Events())
		for k, v := range h {
			if v > 0 {
				reached[k]++
			}
		}
		if h[world.HazardTombstone] > 0 {
			if _, _, err := fuzzControllerRun(b, "FuzzX", plantTombstone); err != nil {
				tombstoneCaught++
			}
		}
	}
	t.Logf("of %d random inputs: %v reached; the planted tombstone bug failed %d", n, reached, tombstoneCaught)
	if reached[world.HazardTombstone] < n/10 || reached[world.HazardRelist] < n/5 {
		t.Errorf("of %d random inputs, %d delivered a tombstone and %d relisted: want a tenth and a fifth", n, reached[world.HazardTombstone], reached[world.HazardRelist])
	}
	if tombstoneCaught < reached[world.HazardTombstone]*3/4 {
		t.Errorf("the tombstone-ignoring controller failed on %d of the %d inputs delivering a tombstone", tombstoneCaught, reached[world.HazardTombstone])
	}
}
