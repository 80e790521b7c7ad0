// Package realapi is the differential suite against a real control plane: the same request
// sequences sent to a real kube-apiserver v1.37.2 (with etcd and kube-controller-manager, built
// and started by scripts/realcluster.sh) and to informersim's REST front set up as `informersim
// serve` sets it up, their answers normalised and compared (docs/realcluster.md).
//
// # Contract
//
//   - A Sequence is a list of Steps: HTTP requests (with placeholders for the sequence's
//     namespace and for resourceVersions, continue tokens and uids saved from earlier answers),
//     watches that read a bounded number of events while further steps write, and a forced
//     compaction (etcd's, through its HTTP gateway, on the real side; fakeapi's Compact on
//     informersim's). Generate draws sequences from a seed: the same seed, the same sequences,
//     on both sides.
//   - Each answer is normalised before it is compared (Normalise): uids, timestamps and random
//     name suffixes become placeholders, each object's resourceVersion becomes its rank among
//     the sequence's resourceVersions in order of first appearance, a list's or bookmark's
//     resourceVersion (a revision of the whole store, moved by writes elsewhere) is checked to
//     be no older than the sequence's latest (a watch's, than the writes before it opened and
//     the events before it) and becomes "<list-rv>" without being ranked, plain bookmarks that
//     pass are counted apart from a watch's events (when they come is the server's clock's),
//     and continue tokens become "<continue>". What the two sides answer differently after
//     that is a Difference.
//   - A Difference is explained only by an entry of Known (one row per difference
//     informersim keeps on purpose or cannot make equal, each with its reason, listed in
//     docs/realcluster.md). A run fails on any unexplained difference, and on a known entry
//     that matched nothing (it is then stale, and the docs with it).
//   - Nothing here is on the simulation path: requests, watches and the control plane run on
//     goroutines and the wall clock.
//
// The suite's test skips, saying why and how to build the control plane, when the real
// binaries are not built; it is not part of `make test` (make compare-real runs it).
package realapi
