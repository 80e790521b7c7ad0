package world

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// This file turns a fuzzer's input (go test -fuzz) into a run of a user's controller: the input
// is the choice stream, in the style of Hypothesis. Each choice the workload makes reads the
// next byte of the input: what the op is (a write of which object, or a fault of which kind),
// the write's kind and labels, a fault's fields, the pause before the next op. So every input
// decodes to a valid run, a mutated byte changes one choice, an inserted or removed byte
// shifts the ones after it by one choice, and a shorter input is a shorter run (the workload
// ends with the input's bytes). The decoding leans towards hazards, since a fuzzer finds a bug
// only as fast as random bytes reach what triggers it: a quarter of the op bytes are fault ops,
// the first eleven fault kinds each as likely as any other (fuzzFoldKinds); a third of the
// writes to a live object delete it; a quarter of the pauses are the shortest one, so a delete
// lands inside the window a watch close or a 410 opens (deleted while disconnected: the
// tombstone) in a few bytes. The world's seed, which drives the schedule, the latencies and the
// jitter, is the input's first eight bytes (FuzzSeed).
//
// A fault byte's value names a position in GenConfig.FaultOpKinds, so that a kind appended to
// the op table (and so to World.FaultKinds, which fuzz targets pass) leaves every input
// decoding to the run it decoded to, except those holding a fault byte of the one value that
// names the new kind's position (nextFuzz; TestFuzzDecodingStableUnderAnAppendedKind): a
// corpus keeps reaching what it reached (scenarios' corpus is written to hold no such byte).
//
// A fuzz input decodes this way only: Generate's seeded workload keeps its own draws (the
// course's generated runs and the pinned hashes depend on them).

// FuzzSeed splits a fuzz input into the world's seed (its first eight bytes, big-endian, zeros
// past the end) and the rest, the workload's choices for Fuzz.
func FuzzSeed(data []byte) (seed uint64, rest []byte) {
	var b [8]byte
	n := copy(b[:], data)
	return binary.BigEndian.Uint64(b[:]), data[n:]
}

// Fuzz starts a workload like Generate's whose every choice is read from data, a fuzzer's
// input, instead of the "workload" stream: cfg is Generate's (Ops is the most ops the input may
// issue, default DefaultGenOps; FaultOps and FaultOpKinds, at most 64 kinds, let it choose
// faults: a fault byte names a position of FaultOpKinds, the first eleven five or six values of
// 64 each, every later one a single value, so that a kind appended to the list leaves the other
// values as they were; not each kind as likely as its share of the list, as in Generate). The
// workload ends once the input's bytes are read, after at least one op, or at cfg.Ops. Fault points
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
	if len(g.cfg.FaultOpKinds) > fuzzFaultValues {
		return nil, fmt.Errorf("world: Fuzz: FaultOpKinds: %d kinds, at most %d: a fault byte has %d values, one a position of the list", len(g.cfg.FaultOpKinds), fuzzFaultValues, fuzzFaultValues)
	}
	for _, k := range g.cfg.FaultOpKinds {
		if !slices.Contains(w.FaultKinds(), k) && k != OpPatch {
			return nil, fmt.Errorf("world: Fuzz: FaultOpKinds: %v needs a control plane the world does not run (Config.ControlPlane): every such op would be refused; World.FaultKinds lists the kinds it takes", k)
		}
	}
	g.choices = &choiceSource{data: data}
	g.rnd = rand.New(g.choices)
	w.s.SetKnob("workload-input", strconv.Itoa(len(data))+" bytes (fuzz)")
	g.start()
	return g, nil
}

// FaultKinds lists the fault kinds (OpKind.Fault) the world can take, for GenConfig.FaultOpKinds:
// every one whose target the world has (those of the control plane's components only when the
// world runs one).
func (w *World) FaultKinds() []OpKind {
	var out []OpKind
	for _, k := range OpKinds() {
		if row := opRows[k]; k.Fault() && (row.target == nil || row.target(w, Op{Kind: k}) == nil) {
			out = append(out, k)
		}
	}
	return out
}

// choiceSource is a rand.Source reading the input one byte a draw, so that one byte is one
// choice. A byte b reads as b in the top eight bits (math/rand's bounded draw of n choices
// scales the top bits: IntN(n) is about b*n/256), a fixed middle and b in the low eight bits
// (a power-of-two n masks the low bits: IntN(4) is b%4). The fixed middle keeps the product
// away from the few values a bounded draw rejects. Past the end (the draws of the input's
// last op) it reads a fixed PCG stream, not zeros, which a bounded draw may reject for ever.
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
	b := uint64(c.data[c.pos])
	c.pos++
	return b<<56 | 0x0080_8080_8080_8000 | b
}

// next reads one choice byte (past the end, the low byte of the PCG stream).
func (c *choiceSource) next() byte { return byte(c.Uint64()) }

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

// fuzzFaultValues is how many values of an op byte are a fault op (a quarter of them).
const fuzzFaultValues = 64

// fuzzFoldKinds is how many positions of FaultOpKinds the fault values fold onto: the eleven
// apiserver fault kinds the op table held when this decoding was fixed, which every world takes
// and World.FaultKinds lists first. It never changes (fuzzPosition).
const fuzzFoldKinds = 11

// fuzzPosition is the position in a list of n fault kinds that fault value f (0 to 63) names.
// The first eleven positions (fuzzFoldKinds) are values 0 to 10; a position p past them is
// value 63-(p-11), from the top down; every other value folds onto the first eleven, f mod 11
// (f mod n with fewer than eleven kinds). So a kind appended at position n takes the one value
// that folded before and every other value names what it named: an input holding no fault byte
// of that value decodes to the run it decoded to. The top values fold onto resume-replica,
// freeze-replica, lag-replica, trigger-bookmarks and slow-consumer first: the first kinds
// appended take their values from those, not from the watch closes, compactions and failed
// requests that make the relists and tombstones (TestFuzzDecodingLeansToHazards).
func fuzzPosition(f, n int) int {
	base := min(n, fuzzFoldKinds)
	if f < base {
		return f
	}
	if p := base + fuzzFaultValues - 1 - f; p < n {
		return p
	}
	return f % base
}

// nextFuzz draws one op from the fuzz input: one byte says what it is. With FaultOps, a quarter
// of its values are a fault op, whose fields the kind's draw reads from the bytes after it:
// value f (0 to 63) is FaultOpKinds' kind at position fuzzPosition(f): the first eleven kinds
// about as likely as each other (five or six values each), a kind past them one value in 64;
// without FaultOpKinds, a watch close, clean or 410, or a compaction, each as likely. The
// other values name the object of a write (three slots for each hot name, one for each cold
// one, as Generate favours the hot ones), and one more byte says the write: a create if the
// object is not live, else a delete in three or an update, and the label v's value.
func (g *Generator) nextFuzz() Op {
	b := int(g.choices.next())
	writes := 256
	if g.cfg.FaultOps {
		writes = 256 - fuzzFaultValues
		if b >= writes {
			f := b - writes
			if kinds := g.cfg.FaultOpKinds; kinds != nil {
				return opRows[kinds[fuzzPosition(f, len(kinds))]].draw(g, g.rnd)
			}
			return []Op{{Kind: OpCloseWatches}, {Kind: OpCloseWatches, Code: 410}, {Kind: OpCompact}}[f%3]
		}
	}
	hot, cold := g.cfg.HotNames, g.cfg.ColdNames
	var name string
	switch slot := b * (3*hot + cold) / writes; {
	case slot < 3*hot:
		name = "hot-" + strconv.Itoa(slot%hot)
	default:
		name = "cold-" + strconv.Itoa(slot-3*hot)
	}
	ns := g.cfg.Namespaces[0]
	if len(g.cfg.Namespaces) > 1 {
		ns = g.cfg.Namespaces[int(g.choices.next())%len(g.cfg.Namespaces)]
	}
	w := int(g.choices.next())
	key := objName{ns, name}
	op := Op{Resource: g.cfg.Resource, Namespace: ns, Name: name, Labels: map[string]string{"v": strconv.Itoa(w % 3)}}
	live := g.exists[key]
	switch {
	case !live:
		op.Kind = OpCreate
		g.exists[key] = true
	case w/3%3 == 0:
		op.Kind = OpDelete
		delete(g.exists, key)
	default:
		op.Kind = OpUpdate
	}
	return g.shape(op, key, live)
}

// fuzzInterval reads the pause before the next op from one byte of the fuzz input: a quarter
// of its values are MinInterval (a write right after a fault lands while the informer is
// away), the rest spread evenly over [MinInterval, MaxInterval].
func (g *Generator) fuzzInterval() time.Duration {
	lo, hi := g.cfg.MinInterval, g.cfg.MaxInterval
	b := int64(g.choices.next())
	if b < 64 || hi == lo {
		return lo
	}
	return lo + time.Duration(int64(hi-lo)*(b-64)/191)
}
