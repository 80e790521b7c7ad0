package world

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
)

// This file turns a fuzzer's input (go test -fuzz) into a run of a user's controller: the input
// is the choice stream, in the style of Hypothesis. Each choice the workload makes (which op,
// which object, its labels, the pause before it, a fault op and its fields) reads the next
// eight bytes of the input, so every input decodes to a valid run, a mutated byte changes one
// choice, and a shorter input is a shorter run (the workload ends with the input's bytes). The
// world's seed, which drives the schedule, the latencies and the jitter, is the input's first
// eight bytes (FuzzSeed).

// FuzzSeed splits a fuzz input into the world's seed (its first eight bytes, big-endian, zeros
// past the end) and the rest, the workload's choices for Fuzz.
func FuzzSeed(data []byte) (seed uint64, rest []byte) {
	var b [8]byte
	n := copy(b[:], data)
	return binary.BigEndian.Uint64(b[:]), data[n:]
}

// Fuzz starts a workload like Generate's whose every choice is read from data, a fuzzer's
// input, instead of the "workload" stream: cfg is Generate's (Ops is the most ops the input may
// issue, default DefaultGenOps; FaultOps and FaultOpKinds let it choose faults). The workload
// ends once the input's bytes are read, after at least one op, or at cfg.Ops. Fault points
// (cfg.FaultPoints) draw from the seed, not from the input, so Fuzz refuses them: the input
// would not say the run. The returned Generator records its ops (Ops), for writing the run out
// as a scenario file.
func (w *World) Fuzz(data []byte, cfg GenConfig) (*Generator, error) {
	if cfg.FaultPoints {
		return nil, errors.New("world: Fuzz: FaultPoints draw from the seed, not from the fuzz input; use FaultOps (and FaultOpKinds) to let the input choose faults")
	}
	g, err := w.newGenerator(cfg, "Fuzz")
	if err != nil {
		return nil, err
	}
	g.choices = &choiceSource{data: data}
	g.rnd = rand.New(g.choices)
	w.s.SetKnob("workload-input", strconv.Itoa(len(data))+" bytes (fuzz)")
	g.start()
	return g, nil
}

// choiceSource is a rand.Source reading the input eight bytes a draw (big-endian). Past the
// end (the draws of the input's last op) it reads a fixed PCG stream, not zeros: math/rand's
// bounded draws reject some values and draw again, and an all-zero source would be rejected
// for ever.
type choiceSource struct {
	data []byte
	pos  int
	past *rand.PCG
}

func (c *choiceSource) Uint64() uint64 {
	if c.pos >= len(c.data) {
		if c.past == nil {
			c.past = rand.NewPCG(0, 0)
		}
		return c.past.Uint64()
	}
	var b [8]byte
	c.pos += copy(b[:], c.data[c.pos:])
	return binary.BigEndian.Uint64(b[:])
}

func (c *choiceSource) exhausted() bool { return c.pos >= len(c.data) }

// FuzzRepro is the line that replays a failing input of the fuzz target fuzzName (the name of
// the FuzzXxx function, taking one []byte) found by go test -fuzz: Go writes the input to
// testdata/fuzz/<fuzzName>/<hash> and replays it with go test -run=<fuzzName>/<hash>; FuzzRepro
// computes that hash from data as Go does (the first 16 hex digits of the SHA-256 of the corpus
// file), so the run's errors name Go's own replay line, which works while fuzzing, where
// INFORMERSIM_SEED does not. Set it as sim.Config.Repro.
func FuzzRepro(fuzzName string, data []byte) string {
	file := "go test fuzz v1\n" + fmt.Sprintf("[]byte(%q)\n", data)
	sum := sha256.Sum256([]byte(file))
	return fmt.Sprintf("go test -run=%s/%x %s", fuzzName, sum[:8], packageDir())
}
