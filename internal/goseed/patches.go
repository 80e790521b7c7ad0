package goseed

// A patch changes one text of one file of the standard library. The text must occur in the file
// exactly once after the line that starts with after (the start of the file when after is
// empty); it is replaced by with. why says what the patch decides, for the error a Go release
// without the text gets.
type patch struct {
	file  string // under GOROOT/src, or under the module's directory
	after string
	text  string
	with  string
	why   string
	times int // how often text occurs in its region; 0 is once
}

// reseed is what the map writes below gain before they hash their key: a map written while it
// holds nothing takes its hash seed from the run's seed. The compiler sets a new map's seed from
// the runtime's random source in the caller's own code (small maps), where no overlay reaches;
// every entry of a map is written through one of these functions, after that seed, so the seed
// in force when the entries go in is always the run's.
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
		with: "\ttrackingSeq     uint8 // used to decide whether to track this G\n\tinformersimSelects uint64 // selects this goroutine made: its draws of a poll order\n",
		why:  "a goroutine counts its selects, which with the run's seed draw their poll order"},
	{file: "runtime/proc.go", after: "func newproc1(", text: "\tnewg.trackingSeq = uint8(cheaprand())\n",
		with: "\tnewg.trackingSeq = uint8(cheaprand())\n\tnewg.informersimSelects = 0\n",
		why:  "a new goroutine (a reused g included) starts its count of selects at zero"},
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
	{file: "internal/runtime/maps/table.go", after: "func (it *Iter) Init(", text: "\tit.entryOffset = rand()\n\tit.dirOffset = rand()\n",
		with: "\tit.entryOffset, it.dirOffset = informersimIterOffsets(m)\n",
		why:  "where a range over a map starts is drawn from the run's seed"},
	{file: "internal/runtime/maps/map.go", after: "func (m *Map) PutSlot(", text: "\thash := typ.Hasher(", with: reseed,
		why: "a map written while empty takes its hash seed from the run's seed"},
	{file: "internal/runtime/maps/runtime.go", after: "func runtime_mapassign(", text: "\thash := typ.Hasher(", with: reseed,
		why: "a map written while empty takes its hash seed from the run's seed"},
	{file: "internal/runtime/maps/runtime_fast32.go", after: "func runtime_mapassign_fast32(", text: "\thash := typ.Hasher(", with: reseed,
		why: "a map written while empty takes its hash seed from the run's seed"},
	{file: "internal/runtime/maps/runtime_fast32.go", after: "func runtime_mapassign_fast32ptr(", text: "\thash := typ.Hasher(", with: reseed,
		why: "a map written while empty takes its hash seed from the run's seed"},
	{file: "internal/runtime/maps/runtime_fast64.go", after: "func runtime_mapassign_fast64(", text: "\thash := typ.Hasher(", with: reseed,
		why: "a map written while empty takes its hash seed from the run's seed"},
	{file: "internal/runtime/maps/runtime_fast64.go", after: "func runtime_mapassign_fast64ptr(", text: "\thash := typ.Hasher(", with: reseed,
		why: "a map written while empty takes its hash seed from the run's seed"},
	{file: "internal/runtime/maps/runtime_faststr.go", after: "func runtime_mapassign_faststr(", text: "\thash := typ.Hasher(", with: reseed,
		why: "a map written while empty takes its hash seed from the run's seed"},
}

// A modulePatch changes files of a module the tests build with: every version of the module in
// the module cache whose files still have the texts is patched; a version that does not is left
// as it is (what the patch adds is then missing, which the harness tells by asking, see
// clientgo).
type modulePatch struct {
	module  string
	patches []patch
	added   map[string]string // files added to the module, by path under its directory
}

// modulePatches: client-go's cache mutation detector is on for every informer built during a run,
// and where it panics the process at the first object a controller changed in an informer's
// cache, it reports it during a run instead (utilruntime.HandleError with the informer's type and
// the objects' keys), so that the harness fails that run and the process goes on; outside runs
// it is as ever (off unless KUBE_CACHE_MUTATION_DETECTOR, and panicking).
var modulePatches = []modulePatch{{
	module: "k8s.io/client-go",
	patches: []patch{
		{file: "tools/cache/mutation_detector.go", text: "\t\"k8s.io/apimachinery/pkg/util/diff\"\n",
			with: "\t\"k8s.io/apimachinery/pkg/util/diff\"\n\tutilruntime \"k8s.io/apimachinery/pkg/util/runtime\"\n\t\"strings\"\n",
			why:  "the detector reports through utilruntime.HandleError"},
		{file: "tools/cache/mutation_detector.go", after: "func NewCacheMutationDetector(",
			text: "\tif !mutationDetectionEnabled {\n", with: "\tif !mutationDetectionEnabled && os.Getenv(\"" + EnvSeed + "\") == \"\" {\n",
			why: "every informer built during a run has a detector"},
		{file: "tools/cache/mutation_detector.go", after: "func (d *defaultCacheMutationDetector) CompareObjects()",
			text: "\taltered := false\n", with: "\taltered := false\n\tvar informersimAltered []string\n",
			why: "the detector keeps the keys of the objects changed"},
		{file: "tools/cache/mutation_detector.go", after: "func (d *defaultCacheMutationDetector) CompareObjects()",
			text: "\t\t\taltered = true\n", with: "\t\t\taltered = true\n\t\t\tinformersimAltered = append(informersimAltered, informersimKey(obj.cached))\n",
			times: 2, why: "the detector keeps the keys of the objects changed"},
		{file: "tools/cache/mutation_detector.go", after: "func (d *defaultCacheMutationDetector) CompareObjects()",
			text: "\t\tpanic(msg)\n",
			with: "\t\tif os.Getenv(\"" + EnvSeed + "\") != \"\" {\n\t\t\tutilruntime.HandleError(fmt.Errorf(\"" + CacheModifiedPrefix + "%s: %s\", d.name, strings.Join(informersimAltered, \" \")))\n\t\t\treturn\n\t\t}\n\t\tpanic(msg)\n",
			why:  "during a run the detector reports a changed object instead of panicking"},
	},
	added: map[string]string{"tools/cache/informersim_mutation.go": `// Code written by informersim's overlay (package goseed). Not part of client-go.

package cache

import "fmt"

// informersimKey names an object the mutation detector found changed.
func informersimKey(obj interface{}) string {
	if key, err := MetaNamespaceKeyFunc(obj); err == nil {
		return key
	}
	return fmt.Sprintf("%T", obj)
}
`},
}}

// CacheModifiedPrefix starts the error client-go's mutation detector reports during a run in the
// deterministic mode: "informersim: cache modified: TYPE: KEY...".
const CacheModifiedPrefix = "informersim: cache modified: "

// added are the files the overlay adds to the standard library, by path under GOROOT/src.
var added = map[string]string{
	"runtime/informersim_seed.go": `// Code written by informersim's overlay (package goseed): the runtime's share of the run's
// seed. Not part of Go.

package runtime

import (
	"internal/runtime/atomic"
	"internal/runtime/maps"
	_ "unsafe" // go:linkname
)

// informersimSeed is the seed of the run going on, given by os.Setenv of ` + EnvSeed + `;
// informersimRunning is set while a run goes on (the variable holds a seed), cleared when it
// ends (the variable is set empty).
var (
	informersimSeed    uint64
	informersimRunning atomic.Bool
)

//go:linkname internal_sync_informersimRunning internal/sync.informersimRunning
func internal_sync_informersimRunning() bool { return informersimRunning.Load() }

// informersimSetSeed takes a new seed, written in decimal, and a run begins; an empty value ends
// the run; anything else is ignored.
func informersimSetSeed(value string) {
	if value == "" {
		informersimRunning.Store(false)
		return
	}
	var n uint64
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c < '0' || c > '9' {
			return
		}
		n = n*10 + uint64(c-'0')
	}
	informersimSeed = n
	maps.InformersimSetSeed(n)
	informersimRunning.Store(true)
}

// informersimMix is splitmix64's finaliser: a bijection that spreads every bit of its input.
func informersimMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// informersimSelectRandn is a number below n drawn from the run's seed and the goroutine's
// count of selects: a function of what the goroutine did, not of when it ran.
func informersimSelectRandn(gp *g, n uint32) uint32 {
	gp.informersimSelects++
	x := informersimMix(informersimSeed ^ informersimMix(gp.informersimSelects))
	return uint32((uint64(uint32(x)) * uint64(n)) >> 32)
}

// informersimHashKey is the i-th word of the hash keys, the same in every process.
func informersimHashKey(i int) uint64 {
	return informersimMix(uint64(i) + 0x696e666f726d6572)
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

// informersimSeed is the seed of the run going on (the runtime sets it).
var informersimSeed uint64

// InformersimSetSeed takes the seed of a new run.
func InformersimSetSeed(seed uint64) { informersimSeed = seed }

func informersimMix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// informersimHashSeed is the hash seed of a map whose first entry is written now.
func informersimHashSeed() uintptr {
	return uintptr(informersimMix(informersimSeed ^ 0x6d61702d73656564))
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
