package world

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/informersim/informersim/sim"
)

// Goal: worlds are independent of one another, so a seed sweep may run several at once, one per
// goroutine (BenchmarkSweep/parallel): each seed gets the very run it gets alone. Method: seeds
// 1 to 24 of swarmWorld one after another, then again by four goroutines taking seeds from a
// shared counter; each seed's trace hash and step count must match. `make test-race` runs this
// test under the race detector, which would report any memory two worlds share unguarded.
func TestWorldsRunInParallel(t *testing.T) {
	const seeds, workers = 24, 4
	type result struct {
		hash  string
		steps int64
		err   error
	}
	run := func(seed uint64) result {
		w, err := swarmWorld(seed, sim.TraceHashOnly)
		if err != nil {
			return result{err: err}
		}
		return result{hash: w.Sim().Trace().Hash(), steps: w.Sim().StepCount()}
	}
	var alone [seeds]result
	for i := range alone {
		alone[i] = run(uint64(i + 1))
	}
	var together [seeds]result
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < seeds; i = next.Add(1) - 1 {
				together[i] = run(uint64(i + 1))
			}
		}()
	}
	wg.Wait()
	for i := range alone {
		if alone[i].err != nil || together[i].err != nil {
			t.Fatalf("seed %d: %v alone, %v in parallel", i+1, alone[i].err, together[i].err)
		}
		if alone[i] != together[i] {
			t.Errorf("seed %d: %s in %d steps alone, %s in %d steps in parallel", i+1, alone[i].hash, alone[i].steps, together[i].hash, together[i].steps)
		}
	}
}
