// Package benchrun lets a benchmark run a function that needs a *testing.T, such as a harness
// run (clientgo.Run, whose synctest bubble needs one): each call runs it as a test of its own
// through testing.RunTests. Sweep runs a seed sweep that way, as many seeds at once as
// GOMAXPROCS, and reports seeds per second. Tricks measures what each speed trick
// (internal/fastpath) buys in a benchmark's work, timing it with the trick in and taken out a few
// milliseconds apart, which holds on a machine whose speed drifts.
//
// testing.RunTests runs a test once for each -test.cpu value and -test.count, setting
// GOMAXPROCS for each, which would repeat every op and leave GOMAXPROCS changed, so Test refuses
// a benchmark run with either flag set: set GOMAXPROCS in the environment and run the test binary
// once per setting instead.
package benchrun
