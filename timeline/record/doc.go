// Package record is the complete record of a run (Run: the scenario, its directives and
// captions, every trace event with typed fields, the oracles' verdicts, the trace hash and the
// failure) and its picture: one self-contained HTML page with a lane per component, events on
// simulated time, faults and oracle violations marked, one object followed through every lane,
// zoom, and the narration line of each event on hover; and the course's pages around such runs.
//
// It needs only the world: FromWorld draws any world's run, such as a failing spec's (package
// worldtest writes one next to the replay line). Package scenarios builds on it for the scenario
// language's runs (scenarios.RunRecord adds their directives, scenarios.WriteCourse writes the
// course); the document and the page are the same for both. Everything here is a pure function of the run: the same seed gives the same bytes.
// The page needs no network: its CSS and script are embedded in it. The document's schema is
// docs/run.schema.json, described in docs/timeline.md.
package record
