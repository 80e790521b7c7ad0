// Package timeline draws a picture of a run: the complete record of a scenario's run as one JSON
// document (Run: the scenario, its directives and captions, every trace event with typed fields,
// the oracles' verdicts, the trace hash and the failure), and that document rendered as one
// self-contained HTML page: a lane per component of the run (the apiserver and its replicas,
// each informer's Reflector, network, queue, Indexer, sharedProcessor and handlers, the
// workqueues and their workers, the user's actors), events on simulated time, faults and oracle
// violations marked, one object followed through every lane, zoom, and the narration line of
// each event on hover. Course writes the whole course as a site: one page per lesson (its
// concept, the pipeline picture with the lesson's parts highlighted, the timeline, the narrated
// run, the command that replays it) and an index.
//
// The record and its page are package timeline/record's, which needs only the world (a failing
// worldtest spec draws its run with it); this package adds what the scenario language knows:
// FromResult adds a scenario run's directives, captions and expected output, and Course runs and
// writes the course. Everything here is a pure function of the run: the same seed gives the same bytes. The page
// needs no network: its CSS and script are embedded in it, and the document it draws is the
// JSON that --json prints, embedded as it is. The document's schema is docs/run.schema.json,
// described in docs/timeline.md.
package timeline
