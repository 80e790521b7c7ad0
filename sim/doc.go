// Package sim is the deterministic engine of informersim: one seed, split into named random
// streams; a virtual clock whose every deadline sits in a heap the engine pops one at a time; a
// scheduler that runs one enabled action per step under a chosen policy; BUGGIFY-style fault
// points; and a trace with a canonical text form and a SHA-256 hash. Everything runs on the
// caller's goroutine.
//
// # Contract
//
// A run is determined by its Config (above all Config.Seed), its actors and the build. The same
// inputs give the same sequence of steps, the same trace text and the same Trace().Hash(), in any
// process, on any machine, with any GOMAXPROCS. To keep that promise the engine starts no
// goroutine, reads no wall clock, uses no global random source, and never lets map order reach a
// draw or an output; actors must do the same (make verify greps for the obvious breaches).
//
// Randomness: Rand(name) returns the stream called name. Its draws depend only on the seed and
// the name, so drawing more from one stream ("workload") never shifts another ("faults",
// "scheduling", "jitter", "apiserver", "network").
//
// Time starts at Epoch (2000-01-01T00:00:00Z, as in testing/synctest) and moves only when no
// action is enabled: then the clock jumps to the earliest pending deadline, and the timers with
// that deadline become enabled actions, in creation order.
//
// Steps: each step the engine collects the enabled actions (due timers in (deadline, creation)
// order, then each actor's Actions in registration order), the policy picks one, the engine
// records a trace event (step, time, actor, action) and runs it. PolicyRandom picks uniformly
// from the "scheduling" stream; PolicyFIFO picks the action enabled longest; PolicyPCT is
// probabilistic concurrency testing with Config.PCTDepth.
//
// Every run is bounded: Config.MaxSteps and Config.MaxSimTime end it with ErrMaxSteps or
// ErrMaxSimTime. A panic in an action ends it with a *RunError carrying the seed, step, time,
// actor, action, panic value, stack and a one-line repro.
//
// # Usage
//
//	s, err := sim.New(sim.Config{Seed: seed})
//	s.AddActor(producer)                           // Actions(add) offers "produce", "consume"...
//	s.AfterFunc(latency, "network", "deliver", fn) // delayed work is a traced step
//	err = s.RunUntil(func() bool { return synced() }, time.Minute)  // instead of Eventually
//	err = s.RunUntilQuiescent()                    // nothing enabled, nothing due within a window
//	fmt.Print(s.Header(), s.Trace())               // seed, knobs, narrated steps
//
// Actors narrate with s.Emit(actor, kind, sim.F("rv", "12")); oracles Subscribe to every event.
// Fault sites are s.Fault("watch/close"): a site is active in a run with probability
// Config.FaultSiteProbability, then fires on each hit with Config.FaultHitProbability; turn
// faults off with SetFaultsEnabled(false) for a liveness phase.
//
// # FakeClock traps, and how the engine avoids them
//
// The engine does not use k8s.io/utils/clock/testing.FakeClock: time is a duration since Epoch
// that only the engine moves, read without a lock (every component reads the clock, many times
// a step). Clock (from s.Clock or s.ClockFor) implements clock.WithTickerAndDelayedExecution
// with the engine's own timers, because FakeClock has traps:
//
//   - Step and SetTime fire every due waiter in registration order, not deadline order, and send
//     the new time rather than each deadline. The engine never steps over several deadlines; it
//     pops them from a container/heap ordered by (deadline, creation) and sends each timer its
//     own deadline (TestFakeClockTrapStepOrder, TestTimersFireInDeadlineOrder).
//   - AfterFunc callbacks run with FakeClock's lock held, so a callback that touches the clock
//     deadlocks. Here a callback is a step of its own, outside any lock; it may read the clock,
//     schedule, stop and reset timers (TestAfterFuncMayCallClock).
//   - fakeTicker.Stop does nothing, so a stopped ticker stays a waiter forever. Here Stop
//     removes the deadline from the heap (TestTickerStopRemovesDeadline).
//
// Timer channels are buffered 1 and sent to without blocking: a ticker nobody reads holds one
// pending tick and drops the rest, like time.Ticker (TestTickerDropsMissedTicks). Sleep panics:
// on the one goroutine of a simulation it would block the only thing that can move time
// (TestSleepPanics); use AfterFunc, or poll a timer channel from Actions.
//
// # Implementation notes
//
// The hot path allocates nothing: actions are collected into a reused slice through an add
// function bound once, step events reuse one Event, and the canonical line is formatted into a
// reused buffer without fmt and streamed into SHA-256, so the hash covers every event even when
// Config.Trace keeps none (TraceHashOnly) and 24-hour runs use constant memory. Retained events
// live in a ring of Config.MaxTraceEvents. Trace times are exact to the nanosecond ("+1.250s",
// "+0.003911242s") so the hash sees every difference.
//
// Stream and fault-site seeds are SHA-256 of (seed, domain, name), expanded by PCG; sites
// activate from their own derived stream, so the order in which sites are first reached does not
// matter. Actor names are interned to small ids when an actor or timer is created, so the
// per-step policies index slices instead of maps. PolicyFIFO remembers the actions
// enabled at the previous step and since when, as one flat list (when the enabled list is the
// same as last step's, position by position, the ages carry over without any lookup); an action
// that runs counts as enabled anew, so an always-enabled action cannot starve the rest. PolicyPCT draws one priority per actor (timers
// count under their actor's name) and PCTDepth-1 change points over Config.PCTSteps.
//
// Cached actors: an actor added with AddCachedActor is asked for its actions only when it may
// offer something else (when added, after a step run under its name, after its host's
// Waker.Wake); at other steps the engine replays its last answer in its place. The enabled
// actions, and so every policy's choice, are exactly those of polling it, as long as the host
// wakes it at every change that matters; a world's handler actors, idle most of the time, cost
// a step nothing that way. The list of enabled actions is kept from step to step: only the runs
// of the actors asked again (polled actors, and cached ones that are stale) are rewritten, so a
// cached actor that offers something and was not woken costs a step nothing either: while a
// world delivers a notification to each of its handlers, that is every handler at every step.
// Test binaries turn on invariant.Thorough, which polls cached actors anyway and fails the run
// at the first stale cache (TestMissedWakeIsCaught, TestCachedActorsMakeTheSameRun), and checks
// the kept list against every actor's offers at every step.
//
// Quiescence: RunUntilQuiescent stops when nothing is enabled and no deadline falls within
// Config.QuiescenceWindow (default 1 minute). A ticker with a shorter period never lets a run go
// quiescent, so such a run ends at Config.MaxSimTime with ErrMaxSimTime; stop tickers first.
//
// # What is not here
//
// The engine knows nothing of Kubernetes: it imports no Kubernetes package but the clock
// interfaces. The world that hosts a fake apiserver and informers on a Sim lives in package
// sim/world; toy actors for tests and demos live in sim/simtest.
package sim
