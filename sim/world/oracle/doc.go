// Package oracle holds the named oracles of a world (design.md "Oracles") and reports their
// violations: what "correct" means for an informer run, checked while it runs.
//
// # Contract
//
// Eight oracles, each with a name (All lists them): per-object-order and cache-before-notify
// (safety, checked by the world's DeliveryLog on every delivery; this package adds per-object
// order's other half, that every state a handler is told about is one the apiserver committed
// for that key), read-only-objects (safety, checked by the apiserver on the objects it lent the
// world's informers, fakeapi.md §10.5), eventual-consistency (liveness,
// World.CheckConverged), and, in this package, resync-alignment, late-join, tombstones (safety
// over the trace, with a liveness half checked once converged) and watch-guarantees (safety over
// the apiserver's record of writes and watch events). Every violation is a *world.Violation: the
// oracle's name, what it saw, the first violating event with the trace before it, the seed and
// the one command that replays the run (sim.Config.Repro: the scenario runner sets
// `informersim run NAME --seed N`, a test gets world.Repro's line).
//
// The oracles only read. They draw nothing, schedule nothing and write nothing, so a run with
// oracles attached has the same trace and hash as one without (TestOraclesChangeNothing).
//
// # Usage
//
//	w, _ := world.New(seed, world.Config{})
//	h, _ := oracle.Attach(w)                       // every oracle; or name some
//	... build the informers and handlers, start them, script the workload ...
//	err := h.Check(w.Sim().RunUntil(gen.Finished, time.Hour)) // safety phase
//	w.Sim().SetFaultsEnabled(false)
//	err = h.RunUntilConverged(time.Hour)           // liveness phase, then every oracle
//	if v := h.Violation(); v != nil { fmt.Print(v.Report()) }
//
// A recorded or hand-built trace can be checked offline with CheckTrace.
//
// # Implementation notes
//
// The catalogue (catalog in oracle.go) is one row per oracle: its Info and, for a trace oracle,
// the constructor of its Checker (or, for one that reads the apiserver's record, the function
// that attaches it). Adding an oracle is its own file and its row; Attach, NewChecker,
// CheckTrace, All and the verdicts read the rows.
//
// The trace oracles read the world's narration only through package sim/world/narration (its
// kinds, field keys and typed readers: a delivered or buffered notification, a cache write, a
// commit), never by parsing text of their own, and rebuild what they need from it alone: each informer's cache (from its cache writes, and after an atomic replace
// from the notifications that follow it), its current registrations, their resync periods
// (narrated at registration), the resync timer's ticks. Each keeps its own model, so the oracles
// stay independent. The watch oracle reads fakeapi.Server.OnCommit (every write) and OnRecord
// (every accepted WATCH and every event a consumer took), whose single observer Attach takes.
//
// A violation found inside a step is raised (panicked) at the first event of the next step,
// which the engine records inside its recover, so it never unwinds through the apiserver's lock
// or a test's own call; the engine then ends the run with a *sim.RunError that unwraps to the
// violation. A violation found in the last step a run takes is not raised (no step follows):
// Check, Handle.RunUntilConverged and Violation report it all the same, which is why a run under
// oracles ends with one of them.
//
// Memory is bounded (style rule 14): the models hold one entry per cached object and
// registration; the writes remembered for the watch and authority checks are at most MaxCommits
// per resource, the closed watches the last 1,024.
package oracle
