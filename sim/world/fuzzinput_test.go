package world_test

import (
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

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
)

// keyTracker is a user's controller in miniature: it keeps the keys of the objects it was
// told about. With ignoreTombstones (the planted bug) it drops a delete whose object is a
// DeletedFinalStateUnknown, so a delete missed during a 410 leaves a key behind.
type keyTracker struct {
	keys             map[string]bool
	ignoreTombstones bool
}

func (k *keyTracker) OnAdd(obj any, _ bool)  { k.keys[key(obj)] = true }
func (k *keyTracker) OnUpdate(_, newObj any) { k.keys[key(newObj)] = true }
func (k *keyTracker) OnDelete(obj any) {
	if _, tomb := obj.(informer.DeletedFinalStateUnknown); tomb && k.ignoreTombstones {
		return
	}
	k.keys[key(obj)] = false
}

func key(obj any) string {
	if t, ok := obj.(informer.DeletedFinalStateUnknown); ok {
		return t.Key
	}
	k, _ := informer.MetaNamespaceKeyFunc(obj)
	return k
}

// fuzzControllerRun is the run a fuzz input decodes to (world.FuzzSeed, world.Fuzz): one
// informer, the tracker as its handler, a workload with every fault kind the input may choose;
// the tracker's keys must equal the apiserver's objects once the world converges (a check).
func fuzzControllerRun(data []byte, fuzzName string, ignoreTombstones bool) (*world.World, *world.Generator, error) {
	seed, choices := world.FuzzSeed(data)
	w, err := world.NewFromConfig(sim.Config{Seed: seed, MaxSteps: 200_000, Repro: world.FuzzRepro(fuzzName, data)}, fakeapi.Config{}, world.Config{})
	if err != nil {
		return nil, nil, err
	}
	inf, err := w.AddInformer("inf1", world.InformerSpec{Namespace: "default"})
	if err != nil {
		return nil, nil, err
	}
	tr := &keyTracker{keys: map[string]bool{}, ignoreTombstones: ignoreTombstones}
	if _, err := w.AddHandler(inf, "tracker", tr, world.HandlerOptions{}); err != nil {
		return nil, nil, err
	}
	if err := w.AddCheck("tracker keys", func() error {
		list, err := w.Server().Snapshot(world.DefaultResource(), "default", metav1.ListOptions{}) // not a request: no fault reaches it
		if err != nil {
			return err
		}
		want := map[string]bool{}
		for _, o := range list.Items {
			want[o.GetNamespace()+"/"+o.GetName()] = true
		}
		var got []string
		for k, live := range maps.All(tr.keys) {
			if live {
				got = append(got, k)
			}
		}
		slices.Sort(got)
		if w := slices.Sorted(maps.Keys(want)); !slices.Equal(got, w) {
			return fmt.Errorf("the tracker holds %v, the apiserver %v", got, w)
		}
		return nil
	}); err != nil {
		return nil, nil, err
	}
	if err := inf.Start(); err != nil {
		return nil, nil, err
	}
	var faults []world.OpKind
	for _, k := range world.OpKinds() {
		if k.Fault() {
			faults = append(faults, k)
		}
	}
	g, err := w.Fuzz(choices, world.GenConfig{Ops: 40, FaultOps: true, FaultOpKinds: faults, MaxInterval: 50 * time.Millisecond})
	if err != nil {
		return nil, nil, err
	}
	return w, g, w.RunUntilConverged(time.Hour)
}

// plantEnv turns the planted bug on in FuzzUserController (to measure how fast go test -fuzz
// finds it): INFORMERSIM_PLANT=tombstone.
const plantEnv = "INFORMERSIM_PLANT"

// FuzzUserController fuzzes a user's controller through world.Fuzz: the input is the choice
// stream. Plain go test replays the corpus in testdata/fuzz/FuzzUserController; with
// INFORMERSIM_PLANT=tombstone the controller ignores tombstones and go test -fuzz finds it.
func FuzzUserController(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x07some choices"))
	// Long random inputs: a run of forty ops for the mutations to start from (the fuzzer's
	// own mutations grow an input a few bytes at a time).
	r := rand.New(rand.NewPCG(5, 6))
	for range 4 {
		b := make([]byte, 400)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		f.Add(b)
	}
	plant := os.Getenv(plantEnv) == "tombstone"
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, _, err := fuzzControllerRun(data, "FuzzUserController", plant); err != nil {
			t.Fatal(err)
		}
	})
}

// Goal: every input decodes to a valid run (any bytes: the correct controller converges and
// its check holds), the same input gives the same trace, the workload ends with the input,
// and the bytes are what choose: different inputs give different ops.
func TestFuzzInputDecodesToValidRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	inputs := [][]byte{nil, {0}, {0xff}, []byte(strings.Repeat("\xff", 400)), []byte(strings.Repeat("\x00", 400))}
	for range 60 {
		// One seed (the first eight bytes) for all: the choices after it must make the runs.
		b := make([]byte, 8+r.IntN(300))
		for i := range b[8:] {
			b[8+i] = byte(r.Uint32())
		}
		inputs = append(inputs, b)
	}
	opLists, long := map[string]bool{}, 0
	kinds := map[world.OpKind]bool{}
	for _, in := range inputs {
		w, g, err := fuzzControllerRun(in, "FuzzX", false)
		if err != nil {
			t.Fatalf("input %x: %v", in, err)
		}
		ops := g.Ops()
		if len(ops) == 0 || g.Issued() > 40 || !g.Finished() {
			t.Fatalf("input of %d bytes: %d ops issued, finished %v", len(in), g.Issued(), g.Finished())
		}
		var s []string
		for _, o := range ops {
			s = append(s, o.Op.String())
			kinds[o.Op.Kind] = true
		}
		if len(in) >= 80 && len(in) < 400 { // random and long enough to choose several ops
			opLists[strings.Join(s, ";")] = true
			long++
		}
		w2, _, _ := fuzzControllerRun(in, "FuzzX", false)
		if w.Sim().Trace().Hash() != w2.Sim().Trace().Hash() {
			t.Fatalf("input %x: two runs, two trace hashes", in)
		}
	}
	if len(opLists) != long || long < 40 {
		t.Errorf("%d random inputs gave only %d different workloads: the bytes do not choose", long, len(opLists))
	}
	faults := 0
	for k := range kinds {
		if k.Fault() {
			faults++
		}
	}
	if faults < 3 {
		t.Errorf("the inputs chose only %d fault kinds: %v", faults, kinds)
	}
	w, _ := world.New(1, world.Config{})
	if _, err := w.Fuzz(nil, world.GenConfig{FaultPoints: true}); err == nil {
		t.Error("Fuzz took FaultPoints, which the input does not choose")
	}
	if _, err := w.Fuzz(nil, world.GenConfig{Ops: -1}); err == nil || !strings.HasPrefix(err.Error(), "world: Fuzz: ") {
		t.Errorf("Fuzz with negative Ops: %v", err)
	}
}

// Goal: FuzzRepro names the file go test -fuzz writes for a failing input (checked against the
// corpus files Go wrote here), so the replay line works while fuzzing; and the input found by
// go test -fuzz with the planted bug on (testdata/fuzz/FuzzUserController/plant-tombstone, kept
// out of the fuzz corpus under another name) fails the check with that line, while the correct
// controller passes on it.
func TestFuzzReproAndThePlantedBugsInput(t *testing.T) {
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
		if want := "go test -run=FuzzUserController/" + filepath.Base(f) + " ./sim/world"; world.FuzzRepro("FuzzUserController", data) != want {
			t.Errorf("FuzzRepro = %q, want %q", world.FuzzRepro("FuzzUserController", data), want)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no corpus file of FuzzUserController to check FuzzRepro against")
	}
	b, err := os.ReadFile("testdata/fuzz-plant-tombstone")
	if err != nil {
		t.Fatal(err)
	}
	data := corpusBytes(t, string(b))
	if _, _, err := fuzzControllerRun(data, "FuzzUserController", false); err != nil {
		t.Fatalf("the correct controller fails on the input: %v", err)
	}
	_, g, err := fuzzControllerRun(data, "FuzzUserController", true)
	if err == nil || !strings.Contains(err.Error(), `check "tracker keys" failed`) {
		t.Fatalf("the planted bug's input: %v", err)
	}
	if want := world.FuzzRepro("FuzzUserController", data); !strings.Contains(err.Error(), want) {
		t.Errorf("the failure does not name Go's replay line %q: %v", want, err)
	}
	t.Logf("the input (%d bytes) decodes to %d ops; failure: %v", len(data), len(g.Ops()), err)
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
