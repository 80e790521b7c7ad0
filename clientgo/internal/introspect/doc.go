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
// What the harness reads elsewhere, by go:linkname (each checked against the pinned versions,
// k8s.io/client-go and k8s.io/apimachinery v0.37.2, sigs.k8s.io/controller-runtime v0.25.2; a
// missing symbol fails the build, a changed meaning does not):
//
//   - k8s.io/client-go/tools/cache.mutationDetectionEnabled (clientgo/detector.go): whether
//     client-go's cache mutation detector is on, a bool read once at its package's start;
//   - k8s.io/apimachinery/pkg/util/wait.jitterRand (clientgo/globals.go): the source of wait's
//     jitter, replaced for the run by one drawn from the seed;
//   - sigs.k8s.io/controller-runtime/pkg/controller.nameLock and usedNames
//     (clientgo/controllerruntime): the process-wide set of controller names, given back when a
//     run ends.
//
// And by name, in goroutine stacks (clientgo/priorityqueue.go), two frames of controller-runtime
// v0.25.2: its priority queue's goroutine that hands items out
// (pkg/controller/priorityqueue.(*priorityqueue[...]) and its sources that add a watch's
// handlers (pkg/internal/source.); and one, by the harness's reconcile counting
// (clientgo/reconciles.go), to tell whether a controller ran: its workers'
// (pkg/internal/controller.(*Controller[...]).
package introspect
