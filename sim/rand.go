package sim

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
)

// Names of the random streams every run has. Each concern draws from its own stream so that
// changing how often one concern draws (one more workload op, one more fault point) does not
// shift the draws of any other.
const (
	StreamWorkload   = "workload"   // the workload generator: which op, which object
	StreamFaults     = "faults"     // fault point hits
	StreamScheduling = "scheduling" // the scheduling policy
	StreamJitter     = "jitter"     // informer jitter: backoff, resync jitter
	StreamAPIServer  = "apiserver"  // fake apiserver choices: UIDs, page sizes
	StreamNetwork    = "network"    // latency and delivery of responses and watch events
)

// standardStreams are created by New in this order, so they exist in every run.
var standardStreams = [...]string{
	StreamWorkload, StreamFaults, StreamScheduling, StreamJitter, StreamAPIServer, StreamNetwork,
}

// deriveSeed maps (seed, domain, name) to the two words of a PCG seed. SHA-256 rather than
// arithmetic mixing so nearby seeds and similar names give unrelated streams; it runs once per
// stream or fault site, never per draw.
func deriveSeed(seed uint64, domain, name string) (uint64, uint64) {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(domain))
	h.Write([]byte{0})
	h.Write([]byte(name))
	sum := h.Sum(nil)
	return binary.LittleEndian.Uint64(sum[0:8]), binary.LittleEndian.Uint64(sum[8:16])
}

// newStream returns a generator whose draws depend only on the seed and the name.
func newStream(seed uint64, domain, name string) *rand.Rand {
	s1, s2 := deriveSeed(seed, domain, name)
	return rand.New(rand.NewPCG(s1, s2))
}

// Rand returns the random stream called name, creating it on first use. The same name always
// returns the same *rand.Rand, and its draws depend only on the seed and the name, never on what
// other streams drew. The standard names are the Stream constants; any other name is allowed.
func (s *Sim) Rand(name string) *rand.Rand {
	if r, ok := s.streams[name]; ok {
		return r
	}
	r := newStream(s.cfg.Seed, "stream", name)
	s.streams[name] = r
	return r
}
