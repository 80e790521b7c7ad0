// Package controlplane holds step-driven stand-ins for the parts of kube-controller-manager a
// controller lives with, run against a [fakeapi.Server]: the garbage collector (ownerReferences,
// background, foreground and orphan propagation), the namespace controller (a deleted
// namespace's contents removed, then the namespace), workload status (what the deployment,
// replicaset and statefulset controllers write to status, without pods) and Jobs (the job
// controller's status and the TTL-after-finished controller's delete, over simulated pods whose
// durations and failures are seeded). docs/controlplane.md is their behavior reference.
//
// Like the informer's components (docs/design.md "one logic, two drivers"), each [Component]
// says whether it has work now ([Component.Pending]) and when it next needs a timer
// ([Component.NextTimer]), and does one unit of work, at most one write, per [Component.Step].
// A component learns of changes by reading the server (its lists, in key order, and its
// revision), never by a goroutine or a watch: the same calls in the same order do the same
// writes, so a simulation's engine can drive them (sim/world does, when switched on), and
// [Run] drives them with a goroutine and the wall clock for `informersim serve`.
package controlplane
