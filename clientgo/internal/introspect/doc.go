// Package introspect is what the clientgo harness reads of the Go runtime's and of its own
// binary's insides, kept apart so that every assumption it rests on is in one place. Each
// function says what it returns when an assumption fails; none panics on text it cannot parse.
//
// # Contract
//
// GoroutineID, CurrentBubble, AllStacks and BubbleStacks read runtime.Stack's text. Assumptions, checked with
// Go 1.25 and 1.26 (1.26.8 pinned by the project) on linux/amd64:
//
//   - a goroutine's stack starts with a header line "goroutine N [STATE]:" (N the goroutine's
//     id, STATE its wait reason and, after a comma, "N minutes" or "synctest bubble N");
//   - runtime.Stack(buf, true) separates the goroutines' stacks with one blank line;
//   - a goroutine of a testing/synctest bubble says "synctest bubble N" in its state, and
//     testing/synctest's own goroutines have a frame of package testing/synctest;
//   - a durably blocked goroutine says "(durable)" in its state (the watchdog's report only).
//
// If the header changes, GoroutineID returns 0 (the harness then takes every call for another
// goroutine's, which is only slower), BubbleStacks finds no goroutine (the watchdog's report
// and the frame search come back empty) and CurrentBubble returns "" (no reconcile outcome is
// counted: Report.Reconciles then says a controller-runtime controller's were not seen).
//
// BinaryHasFunctions reads the running binary's function table (.gopclntab in ELF, __gopclntab
// in Mach-O), which holds every function's full name as text; with another format or without
// the section it says the answer is unknown, and the harness assumes controller-runtime is
// linked. Checked with Go 1.26.8 on linux/amd64.
//
// A CallerCheck reads the name of the function at a return address (runtime.CallersFrames,
// inlined calls included). The harness uses one to tell the calls client-go's cache mutation
// detector makes to reflect.DeepEqual (the deterministic mode's reflect.DeepEqual gives its
// return address): in
// k8s.io/client-go v0.37.2 they come from
// k8s.io/client-go/tools/cache.(*defaultCacheMutationDetector).CompareObjects
// (clientgo/internal/readonly). If client-go renames it, no call is recognised and the detector
// compares by DeepEqual itself: slower, with the same answers (Report.Diagnostics'
// DetectorSnapshotAnswers is then 0).
//
// Package variables of others read and set by go:linkname, here only (linkname.go; and
// crnames, a package of its own because importing it links controller-runtime, which package
// clientgo must not), each checked against the pinned versions; a symbol that goes away fails
// the build, a changed meaning does not:
//
//   - k8s.io/client-go/tools/cache.mutationDetectionEnabled (client-go v0.37.2;
//     MutationDetectionEnabled, SetMutationDetectionEnabled): whether client-go's cache mutation
//     detector is on, a bool set from KUBE_CACHE_MUTATION_DETECTOR when the package starts and
//     read each time an informer is built (clientgo/detector.go, clientgo/determinism.go);
//   - k8s.io/apimachinery/pkg/util/wait.jitterRand (apimachinery v0.37.2; WaitJitterRand,
//     SetWaitJitterRand): a func() float64 in [0, 1) that wait.Jitter draws from, replaced at
//     init by one that answers 0.5 during runs (clientgo/globals.go);
//   - sigs.k8s.io/controller-runtime/pkg/controller.nameLock and usedNames (controller-runtime
//     v0.25.2; crnames.Taken, crnames.ReleaseAllBut): a sync.Mutex and the sets.Set[string] of
//     controller names it guards, given back when a run ends (clientgo/controllerruntime).
//
// TestMutationDetectionSwitchReachesClientGo and TestWaitJitterRandReachesWait check that the
// first two still mean what they say; clientgo/controllerruntime's TestNamesAreGivenBack checks
// the third.
//
// And by name, in goroutine stacks (clientgo/priorityqueue.go), two frames of controller-runtime
// v0.25.2: its priority queue's goroutine that hands items out
// (pkg/controller/priorityqueue.(*priorityqueue[...]) and its sources that add a watch's
// handlers (pkg/internal/source.); and one, by the harness's reconcile counting
// (clientgo/reconciles.go), to tell whether a controller ran: its workers'
// (pkg/internal/controller.(*Controller[...]).
package introspect
