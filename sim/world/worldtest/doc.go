// Package worldtest holds Gomega matchers for specs that run a world (package world): a
// controller author's Ginkgo suite, or a plain go test with gomega.NewWithT.
//
// # Contract
//
//   - HaveConverged drives a *world.World (or an *oracle.Handle) until it is quiet, within a
//     budget of simulated time, and succeeds when every cache and handler view equals the
//     apiserver's state, every check added with AddCheck passes and, for a handle, every
//     attached oracle holds.
//   - HaveObservedInOrder succeeds when a *world.Handler was told exactly these notifications
//     for one key, in this order, in informer.md §14's notation ("add(default/a@2,true)",
//     "upd(default/a@2->3)", "del(default/a@3)", "del(tomb default/a@3)"). A note may leave out
//     the resourceVersions and an add's initial-list flag, which then match any value
//     ("add(default/a)", "upd(default/a)", "del(tomb default/a)").
//   - SatisfyEveryOracle succeeds when no oracle attached with oracle.Attach has been violated
//     (and, once the world is quiet, none of their liveness halves either).
//   - NewWorld is world.New whose repro line (SpecRepro) replays the current Ginkgo spec alone:
//     -ginkgo.focus with the spec's text, so a failure in a full suite run names its spec.
//     NewWorldFromConfig does the same with engine and apiserver settings (replicas, a policy).
//   - Outside an assertion (a seed loop that counts the seeds a bug is caught on), call
//     World.RunUntilConverged and print World.Explain(err): the same message as HaveConverged's,
//     with no failure registered (Explain(w, err) adds the timeline).
//
// Every failure message names the seed, the one command that replays the run
// (sim.Config.Repro: world.Repro's line under go test, the scenario runner's own otherwise),
// the run's timeline on the line after it ("timeline: PATH", see WriteTimeline), and the trace
// around the failure: the violating event and what came before it, or the handler's delivery
// where what it was told first differs from what was expected.
//
// The timeline is one self-contained HTML page (package timeline/record, docs/timeline.md): a
// lane per component, every kept trace event on simulated time, the violating event marked. It
// is written to $INFORMERSIM_ARTIFACTS (ArtifactsEnv), else os.TempDir(), as
// informersim-SEED-HASH.html, and is a pure function of the run. A page that cannot be written
// never fails the spec: the line says "timeline: not written (why)" instead.
// INFORMERSIM_TIMELINE=off (record.TimelineEnv) writes none, for sweeps that fail on purpose.
//
// # Usage
//
//	w, _ := world.New(seed, world.Config{})
//	h, _ := oracle.Attach(w)
//	... informers, handlers, workload ...
//	Expect(h).To(worldtest.HaveConverged(time.Hour))          // liveness, then every oracle
//	Expect(handler).To(worldtest.HaveObservedInOrder("default/a",
//		"add(default/a@2,true)", "upd(default/a@2->3)"))
//	Expect(handler).To(worldtest.HaveObservedInOrder("default/a", // any resourceVersions
//		"add(default/a,true)", "upd(default/a)", "del(default/a)"))
//	Expect(h).To(worldtest.SatisfyEveryOracle())
//
// Prefer Expect(w).To(worldtest.HaveConverged(d)) to Expect(w.RunUntilConverged(d)).To(Succeed()):
// both run the same, but for an error Succeed prints the message and then a dump of the error
// value's fields (a wrapped error's message again, a panic's stack as bytes), where the matcher
// prints the message, the seed and replay command once, a panic's stack as text and the trace.
//
// # Implementation notes
//
// The matchers keep the error of their last Match for the failure message; like every Gomega
// matcher, one value is meant for one assertion at a time.
package worldtest
