package world

import (
	"testing"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
)

// Goal: skipping the fields of events nobody reads (sim.Sim.Narrated false: TraceNone, no
// subscriber) changes nothing but the fields: the same seeds run the same steps and emit the
// same number of events as with the trace hashed. Method: swarmWorld under both levels.
func TestUnnarratedRunsMatchNarratedOnes(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		hashed, err := swarmWorld(seed, sim.TraceHashOnly)
		if err != nil {
			t.Fatalf("seed %d hashed: %v", seed, err)
		}
		bare, err := swarmWorld(seed, sim.TraceNone)
		if err != nil {
			t.Fatalf("seed %d bare: %v", seed, err)
		}
		if bare.Sim().Narrated() || !hashed.Sim().Narrated() {
			t.Fatalf("seed %d: Narrated() = %v bare, %v hashed", seed, bare.Sim().Narrated(), hashed.Sim().Narrated())
		}
		if hs, bs := hashed.Sim().StepCount(), bare.Sim().StepCount(); hs != bs {
			t.Fatalf("seed %d: %d steps hashed, %d bare", seed, hs, bs)
		}
		if hl, bl := hashed.Sim().Trace().Len(), bare.Sim().Trace().Len(); hl != bl {
			t.Fatalf("seed %d: %d events hashed, %d bare", seed, hl, bl)
		}
	}
}

// Goal: an apiserver that keeps no records (fakeapi.Config.MaxRecords -1, what a sweep that
// reads none may choose; BenchmarkSweep/norecords) runs the same world: records are kept for
// the reader, never read by the run. Method: swarmWorld with and without records, trace hashed,
// 20 seeds; the hashes must match.
func TestRunsWithoutRecordsAreTheSameRuns(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		kept, err := swarmWorld(seed, sim.TraceHashOnly)
		if err != nil {
			t.Fatalf("seed %d with records: %v", seed, err)
		}
		none, err := swarmWorldOn(seed, sim.TraceHashOnly, fakeapi.Config{MaxRecords: -1})
		if err != nil {
			t.Fatalf("seed %d without records: %v", seed, err)
		}
		if len(none.Server().Requests()) != 0 {
			t.Fatalf("seed %d: records kept with MaxRecords -1", seed)
		}
		if a, b := kept.Sim().Trace().Hash(), none.Sim().Trace().Hash(); a != b {
			t.Fatalf("seed %d: trace hash %s with records, %s without", seed, a, b)
		}
	}
}
