package goseed

import "strconv"

// A patch changes one text of one file of the standard library. The text must occur in the file
// exactly once after the line that starts with after (the start of the file when after is
// empty); it is replaced by with. why says what the patch decides, for the error a Go release
// without the text gets.
type patch struct {
	file  string // under GOROOT/src
	after string
	text  string
	with  string
	why   string
}

// reseed is what the map writes below gain before they hash their key: a map written while it
// holds nothing takes the fixed hash seed. The compiler sets a new map's seed from the runtime's
// random source in the caller's own code (small maps), where no overlay reaches; every entry of
// a map is written through one of these functions, after that seed, so the seed in force when
// the entries go in is always the fixed one.
const reseed = "\tif m.used == 0 {\n\t\tm.seed = informersimHashSeed()\n\t}\n\thash := typ.Hasher("

var patches = []patch{
	{file: "runtime/alg.go", after: "func alginit()", text: "hashkey[i] = uintptr(bootstrapRand())",
		with: "hashkey[i] = uintptr(informersimHashKey(i))",
		why:  "the keys of the fallback hash are fixed instead of drawn at start-up"},
	{file: "runtime/alg.go", after: "func initAlgAES()", text: "key[i] = bootstrapRand()",
		with: "key[i] = informersimHashKey(i)",
		why:  "the keys of the AES hash are fixed instead of drawn at start-up"},
	{file: "runtime/select.go", after: "func selectgo(", text: "j := cheaprandn(uint32(norder + 1))",
		with: "j := informersimSelectRandn(gp, uint32(norder+1))",
		why:  "the order a select polls its cases in is drawn from the run's seed"},
	{file: "runtime/runtime2.go", after: "type g struct", text: "\ttrackingSeq     uint8 // used to decide whether to track this G\n",
		with: "\ttrackingSeq     uint8 // used to decide whether to track this G\n\tinformersimSelects uint64 // selects this goroutine made: its draws of a poll order\n\tinformersimBorn uint32 // the run's count of goroutines made when it was made (0: outside a run)\n\tinformersimTimers uint32 // timers it put in the bubble's heap during the run\n",
		why:  "a goroutine counts its selects, which with the run's seed draw their poll order"},
	{file: "runtime/proc.go", after: "func newproc1(", text: "\tnewg.trackingSeq = uint8(cheaprand())\n",
		with: "\tnewg.trackingSeq = uint8(cheaprand())\n\tinformersimNewG(newg, callergp)\n",
		why:  "a new goroutine (a reused g included) starts its counts of selects and timers at zero and is numbered in its run"},
	{file: "runtime/time.go", after: "func (t *timer) maybeAdd()", text: "t.rand = cheaprand()",
		with: "t.rand = informersimTimerRand()",
		why:  "timers of the bubble due at the same instant fire in an order drawn from the run's seed"},
	{file: "runtime/runtime.go", after: "func syscall_runtimeSetenv(", text: "\tif key == \"GODEBUG\" {\n",
		with: "\tif key == \"" + EnvSeed + "\" {\n\t\tinformersimSetSeed(value)\n\t}\n\tif key == \"GODEBUG\" {\n",
		why:  "os.Setenv of " + EnvSeed + " gives the runtime the run's seed"},
	{file: "runtime/proc.go", after: "func retake(", text: "\t\tpd := &pp.sysmontick\n\t\tsysretake := false\n",
		with: "\t\tpd := &pp.sysmontick\n\t\tsysretake := false\n\t\tif informersimRunning.Load() {\n\t\t\tcontinue\n\t\t}\n",
		why:  "during a run, no goroutine is preempted or loses its processor for having run or sat in a system call too long by the clock"},
	{file: "runtime/proc.go", after: "func runqput(", text: "\tif !haveSysmon && next {\n",
		with: "\tif (!haveSysmon || informersimRunning.Load()) && next {\n",
		why:  "during a run, a goroutine made ready joins the end of the run queue instead of running next, as without sysmon"},
	{file: "internal/sync/mutex.go", after: "func (m *Mutex) lockSlow()", text: "starving = starving || runtime_nanotime()-waitStartTime > starvationThresholdNs\n",
		with: "starving = starving || runtime_nanotime()-waitStartTime > starvationThresholdNs && !informersimRunning()\n",
		why:  "during a run, a mutex does not turn to starvation mode after a millisecond of the clock"},
	{file: "math/rand/rand.go", text: "//go:linkname runtime_rand runtime.rand\n",
		with: "//go:linkname runtime_rand runtime.informersim_rand\n",
		why:  "during a run, math/rand's functions draw, in the goroutines of the run's bubble, from a stream the run's seed starts"},
	{file: "math/rand/v2/rand.go", text: "//go:linkname runtime_rand runtime.rand\n",
		with: "//go:linkname runtime_rand runtime.informersim_rand\n",
		why:  "during a run, math/rand/v2's functions draw, in the goroutines of the run's bubble, from a stream the run's seed starts"},
	{file: "internal/sync/hashtriemap.go", after: "func (ht *HashTrieMap[K, V]) initSlow()", text: "ht.seed = uintptr(runtime_rand())",
		with: "ht.seed = uintptr(0x73796e632d6d6170) // informersim: the same in every process",
		why:  "a sync.Map's hash seed, which orders its Range, is fixed"},
	{file: "runtime/panic.go", after: "func gopanic(", text: "\tgp := getg()\n\tif gp.m.curg != gp {\n",
		with: "\tinformersimCacheModified(e)\n\tgp := getg()\n\tif gp.m.curg != gp {\n",
		why:  "during a run, client-go's cache mutation detector's panic is reported to the harness and ends only the detector's goroutine"},
	{file: "reflect/deepequal.go", text: "import (\n\t\"internal/bytealg\"\n",
		with: "import (\n\t\"internal/bytealg\"\n\t\"internal/runtime/sys\"\n",
		why:  "DeepEqual can tell the function it asks first where it was called from (AnswerDeepEqual)"},
	{file: "reflect/deepequal.go", text: "func DeepEqual(x, y any) bool {\n\tif x == nil || y == nil {\n\t\treturn x == y\n\t}\n",
		with: "//go:noinline\nfunc DeepEqual(x, y any) bool {\n\tif h := informersimDeepEqual.Load(); h != nil {\n\t\tif equal, decided := (*h)(x, y, sys.GetCallerPC()); decided {\n\t\t\treturn equal\n\t\t}\n\t}\n\tif x == nil || y == nil {\n\t\treturn x == y\n\t}\n",
		why:  "the harness may answer client-go's cache mutation detector's comparisons at a fraction of their cost (AnswerDeepEqual)"},
	{file: "internal/runtime/maps/table.go", after: "func (it *Iter) Init(", text: "\tit.entryOffset = rand()\n\tit.dirOffset = rand()\n",
		with: "\tinformersimCountRange(typ, m)\n\tit.entryOffset, it.dirOffset = informersimIterOffsets(m)\n",
		why:  "where a range over a map starts is drawn from the run's seed; a range whose order follows addresses is counted"},
	{file: "internal/runtime/maps/map.go", after: "func (m *Map) PutSlot(", text: "\thash := typ.Hasher(", with: reseed,
		why: "a map written while empty takes the fixed hash seed"},
	{file: "internal/runtime/maps/runtime.go", after: "func runtime_mapassign(", text: "\thash := typ.Hasher(", with: reseed,
		why: "a map written while empty takes the fixed hash seed"},
	{file: "internal/runtime/maps/runtime_fast32.go", after: "func runtime_mapassign_fast32(", text: "\thash := typ.Hasher(", with: reseed,
		why: "a map written while empty takes the fixed hash seed"},
	{file: "internal/runtime/maps/runtime_fast32.go", after: "func runtime_mapassign_fast32ptr(", text: "\thash := typ.Hasher(", with: reseed,
		why: "a map written while empty takes the fixed hash seed"},
	{file: "internal/runtime/maps/runtime_fast64.go", after: "func runtime_mapassign_fast64(", text: "\thash := typ.Hasher(", with: reseed,
		why: "a map written while empty takes the fixed hash seed"},
	{file: "internal/runtime/maps/runtime_fast64.go", after: "func runtime_mapassign_fast64ptr(", text: "\thash := typ.Hasher(", with: reseed,
		why: "a map written while empty takes the fixed hash seed"},
	{file: "internal/runtime/maps/runtime_faststr.go", after: "func runtime_mapassign_faststr(", text: "\thash := typ.Hasher(", with: reseed,
		why: "a map written while empty takes the fixed hash seed"},
}

// added are the files the overlay adds to the standard library, by path under GOROOT/src.
var added = map[string]string{
	"runtime/informersim_seed.go": `// Code written by informersim's overlay (package goseed): the runtime's share of the run's
// seed. Not part of Go.

package runtime

import (
	"internal/runtime/atomic"
	"internal/runtime/maps"
	"unsafe"
)

// informersimSeed is the seed of the run going on, given by os.Setenv of ` + EnvSeed + `;
// informersimRunning is set while a run goes on (the variable holds a seed), cleared when it
// ends (the variable is set empty); informersimReports is the file descriptor that follows the
// seed after a comma, where the panics of client-go's mutation detector are reported (-1: none).
var (
	informersimSeed    uint64
	informersimRunning atomic.Bool
	informersimReports int64 = -1
)

//go:linkname internal_sync_informersimRunning internal/sync.informersimRunning
func internal_sync_informersimRunning() bool { return informersimRunning.Load() }

// informersimInBubble reports whether a run goes on and the running goroutine belongs to a
// testing/synctest bubble (the run's).
//
//go:linkname internal_runtime_maps_informersimInBubble internal/runtime/maps.informersimInBubble
func internal_runtime_maps_informersimInBubble() bool {
	if !informersimRunning.Load() {
		return false
	}
	cg := getg().m.curg
	return cg != nil && cg.bubble != nil
}

// informersimSetSeed takes a new seed, written in decimal and maybe followed by a comma and the
// file descriptor of reports, and a run begins; an empty value ends the run; anything else is
// ignored.
func informersimSetSeed(value string) {
	if value == "" {
		informersimRunning.Store(false)
		return
	}
	var n, fd uint64
	comma := false
	for i := 0; i < len(value); i++ {
		c := value[i]
		switch {
		case c == ',' && !comma:
			comma = true
		case c >= '0' && c <= '9' && comma:
			fd = fd*10 + uint64(c-'0')
		case c >= '0' && c <= '9':
			n = n*10 + uint64(c-'0')
		default:
			return
		}
	}
	informersimReports = -1
	if comma {
		informersimReports = int64(fd)
	}
	informersimSeed = n
	informersimRandState = informersimMix(n ^ 0x72616e642d736564)
	maps.InformersimSetSeed(n)
	informersimGoroutines = 0
	informersimRunning.Store(true)
}

// informersimRandState is the stream the goroutines of a run's bubble draw from through
// math/rand: one goroutine runs at a time during a run, in an order the run decides, so the
// draws are too. The runtime's own draws (a new map's seed, which the first write sets again)
// stay out of it, so that a map made lazily by the first run of a process does not shift them.
var informersimRandState uint64

// informersim_rand is math/rand's source of randomness in place of rand.
//
//go:linkname informersim_rand
func informersim_rand() uint64 {
	if informersimRunning.Load() {
		if cg := getg().m.curg; cg != nil && cg.bubble != nil {
			return informersimRand()
		}
	}
	return rand()
}

//go:nosplit
func informersimRand() uint64 {
	informersimRandState += 0x9e3779b97f4a7c15
	x := informersimRandState
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// informersimMix is splitmix64's finaliser: a bijection that spreads every bit of its input.
func informersimMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// informersimTimerRand is the tie-breaker of a timer of the bubble that joins the heap: timers
// due at the same instant fire in the order of these numbers. During a run it is drawn from the
// run's seed, the goroutine that puts the timer in the heap (numbered by when the run made it)
// and how many it put there before: a function of what that goroutine did, not of what others
// did before it (a controller-runtime worker sets a timer the first time a process reconciles
// that it does not set later; a count shared by all goroutines would shift every later draw).
// Outside a run it is the runtime's own draw.
func informersimTimerRand() uint32 {
	if !informersimRunning.Load() {
		return cheaprand()
	}
	var who uint64
	if cg := getg().m.curg; cg != nil {
		cg.informersimTimers++
		who = uint64(cg.informersimBorn)<<32 | uint64(cg.informersimTimers)
	}
	return uint32(informersimMix(informersimSeed ^ 0x74696d65722d6f72 ^ informersimMix(who)))
}

// informersimGoroutines counts the goroutines made by the run's bubble since the run began.
var informersimGoroutines uint32

// informersimNewG starts a new goroutine's counts, and numbers it when a goroutine of a run's
// bubble makes it during the run.
func informersimNewG(newg, parent *g) {
	newg.informersimSelects = 0
	newg.informersimTimers = 0
	newg.informersimBorn = 0
	if informersimRunning.Load() && parent != nil && parent.bubble != nil {
		informersimGoroutines++
		newg.informersimBorn = informersimGoroutines
	}
}

// informersimSelectRandn is a number below n drawn from the run's seed and the goroutine's
// count of selects: a function of what the goroutine did, not of when it ran.
func informersimSelectRandn(gp *g, n uint32) uint32 {
	gp.informersimSelects++
	x := informersimMix(informersimSeed ^ informersimMix(gp.informersimSelects))
	return uint32((uint64(uint32(x)) * uint64(n)) >> 32)
}

// informersimCacheModified ends the goroutine of client-go's cache mutation detector when it
// panics during a run, in a bubble, after writing its message to the reports: the detector's
// panic ("cache TYPE modified") would end the whole test process, where the harness fails only
// the run (it reads the reports). Any other panic goes on.
func informersimCacheModified(e any) {
	s, ok := e.(string)
	if !ok || !informersimRunning.Load() || informersimReports < 0 || getg().bubble == nil {
		return
	}
	if len(s) < len("cache  modified") || s[:6] != "cache " || s[len(s)-9:] != " modified" {
		return
	}
	line := s + "\n"
	write(uintptr(informersimReports), unsafe.Pointer(unsafe.StringData(line)), int32(len(line)))
	Goexit()
}

// informersimHashKey is the i-th word of the hash keys, the same in every process.
func informersimHashKey(i int) uint64 {
	return informersimMix(uint64(i) + 0x696e666f726d6572)
}
`,
	"reflect/informersim_deepequal.go": `// Code written by informersim's overlay (package goseed): a way for the harness to answer
// calls of DeepEqual. Not part of Go.

package reflect

import (
	"internal/runtime/maps"
	"sync/atomic"
)

// InformersimAddressKeyedRanges returns how many ranges the goroutines of the run going on (or
// the last) made over maps whose order follows the addresses of their keys, which no seed
// decides, and the first of their map types.
func (t *rtype) InformersimAddressKeyedRanges() (uint64, []Type) {
	n, types := maps.InformersimAddressRanges()
	out := make([]Type, len(types))
	for i, mt := range types {
		out[i] = toType(&mt.Type)
	}
	return n, out
}

// informersimDeepEqual, when set, is asked first by DeepEqual, with the address DeepEqual returns
// to in its caller: it returns decided false to leave the call to DeepEqual.
var informersimDeepEqual atomic.Pointer[func(x, y any, caller uintptr) (equal, decided bool)]

// InformersimAnswerDeepEqual sets the function DeepEqual asks first (nil: none). It is a method
// of the type behind every Type, so a program finds it through an interface, and builds without
// the overlay, where it does not exist, still link.
func (t *rtype) InformersimAnswerDeepEqual(h func(x, y any, caller uintptr) (equal, decided bool)) {
	if h == nil {
		informersimDeepEqual.Store(nil)
		return
	}
	informersimDeepEqual.Store(&h)
}
`,
	"internal/sync/informersim_seed.go": `// Code written by informersim's overlay (package goseed). Not part of Go.

package sync

import _ "unsafe" // go:linkname

// informersimRunning reports whether a seeded run goes on (the runtime knows).
//
//go:linkname informersimRunning
func informersimRunning() bool
`,
	"internal/runtime/maps/informersim_seed.go": `// Code written by informersim's overlay (package goseed): the maps' share of the run's seed.
// Not part of Go.

package maps

import (
	"internal/abi"
	_ "unsafe" // go:linkname
)

// informersimSeed is the seed of the run going on (the runtime sets it).
var informersimSeed uint64

// InformersimSetSeed takes the seed of a new run, which has ranged over no map yet.
func InformersimSetSeed(seed uint64) {
	informersimSeed = seed
	informersimAddressRanges = 0
	informersimAddressTypes = [len(informersimAddressTypes)]*abi.MapType{}
}

// informersimInBubble reports whether a run goes on and the running goroutine is in a bubble
// (the runtime knows).
//
//go:linkname informersimInBubble
func informersimInBubble() bool

// informersimAddressRanges counts the ranges, by goroutines of the run's bubble, over maps whose
// order follows the addresses of their keys: a map of more than one group (a small map keeps its
// entries in the order they went in, which the run decides) keyed by something hashed by its
// address. informersimAddressTypes are the first of their map types.
var (
	informersimAddressRanges uint64
	informersimAddressTypes  [` + strconv.Itoa(AddressKeyedTypesNamed) + `]*abi.MapType
)

// informersimCountRange counts a range over m if its order follows addresses.
func informersimCountRange(typ *abi.MapType, m *Map) {
	if m.dirLen <= 0 || !informersimAddressKeyed(typ.Key, 0) || !informersimInBubble() {
		return
	}
	informersimAddressRanges++
	for i, t := range informersimAddressTypes {
		if t == typ {
			return
		}
		if t == nil {
			informersimAddressTypes[i] = typ
			return
		}
	}
}

// informersimAddressKeyed reports whether keys of type t hash by an address: pointers, channels,
// interfaces (whose dynamic value may be a pointer), and structs and arrays holding one.
func informersimAddressKeyed(t *abi.Type, depth int) bool {
	if depth > 8 {
		return true
	}
	switch t.Kind() {
	case abi.Pointer, abi.UnsafePointer, abi.Chan, abi.Interface:
		return true
	case abi.Array:
		return informersimAddressKeyed(t.ArrayType().Elem, depth+1)
	case abi.Struct:
		for _, f := range t.StructType().Fields {
			if informersimAddressKeyed(f.Typ, depth+1) {
				return true
			}
		}
	}
	return false
}

// InformersimAddressRanges returns how many ranges of the run followed addresses, and the first
// of their map types.
func InformersimAddressRanges() (uint64, []*abi.MapType) {
	n := 0
	for n < len(informersimAddressTypes) && informersimAddressTypes[n] != nil {
		n++
	}
	return informersimAddressRanges, informersimAddressTypes[:n:n]
}

func informersimMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// informersimHashSeed is the hash seed of a map whose first entry is written now: the same in
// every process and run, so that a map kept from one run to the next (a package's cache) is laid
// out by what was written into it only, not by the seed of the run that wrote first.
func informersimHashSeed() uintptr {
	return uintptr(informersimMix(0x6d61702d73656564))
}

// informersimIterOffsets are where a range over m starts: drawn from the run's seed, m's hash
// seed and its size, so the same map ranged twice in a run starts at the same place, and
// another seed starts elsewhere.
func informersimIterOffsets(m *Map) (entry, dir uint64) {
	x := informersimMix(informersimSeed ^ informersimMix(uint64(m.seed)^m.used<<32^uint64(m.dirLen)))
	return x, informersimMix(x)
}
`,
}
