package controlplane

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/informersim/informersim/fakeapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// WorkloadConfig configures the workload status stand-in.
type WorkloadConfig struct {
	// MinLatency and MaxLatency bound the seeded time between a workload's change (a new
	// generation, a new replica count) and the status that reports it; both zero is prompt.
	MinLatency, MaxLatency time.Duration
	// Stuck names the workloads ("namespace/name") whose rollout never completes: their status
	// reports the new generation and replica count with none ready or available, and a
	// Deployment's Progressing condition turns False with ProgressDeadlineExceeded after its
	// spec.progressDeadlineSeconds (600 by default), as when new pods never become ready.
	Stuck []string
}

// WorkloadStatus stands in for the deployment, replicaset and statefulset controllers' status
// writes (docs/controlplane.md §3), without pods or ReplicaSets: once a workload's generation
// or replica count is not yet reported, it waits a seeded latency, then writes the status those
// controllers write once every pod is ready and available (observedGeneration, replicas,
// updated, ready and available replicas, a Deployment's Available and Progressing conditions,
// a StatefulSet's revisions), or the stuck status for a workload named in Stuck.
type WorkloadStatus struct {
	base
	rnd      *rand.Rand
	cfg      WorkloadConfig
	due      map[workloadKey]time.Time // workloads seen behind, and when their status is written
	stuck    map[workloadKey]time.Time // stuck Deployments, and when their deadline passes
	exceeded map[workloadKey]bool      // stuck Deployments past their deadline
	// upToDate remembers the workloads last found with the status they should have: the
	// version found (a resourceVersion names one content for good) and the stuck state it
	// was compared for. Whether a status is up to date depends on nothing else (statusEqual
	// ignores the conditions' times), so a scan that finds the same version skips building
	// the desired status and comparing it.
	upToDate map[workloadKey]reported
	// views are the workload resources (workloadGVRs) as last read (view.go), kept between
	// scans; seen is the scan's map of the workloads found, kept to be reused.
	views []view[workloadItem]
	hooks []viewHooks[workloadItem]
	seen  map[workloadKey]*unstructured.Unstructured
	// printer compares statuses (statusEqual) in buffers kept between scans, and scratch
	// holds the desired status compared.
	printer statusPrinter
	scratch statusScratch
}

// workloadItem is what a scan reads of a workload, taken once per version.
type workloadItem struct {
	key      workloadKey
	uid      types.UID
	rv       string
	deleting bool
	stuck    bool
}

type reported struct {
	uid             types.UID
	rv              string
	stuck, exceeded bool
}

type workloadKey struct {
	resource   string
	ns, name   string
	generation int64
}

func compareWorkloadKeys(a, b workloadKey) int {
	return cmp.Or(cmp.Compare(a.resource, b.resource), cmp.Compare(a.ns, b.ns), cmp.Compare(a.name, b.name), cmp.Compare(a.generation, b.generation))
}

// Workload resources the stand-in serves, in the order it scans them.
var workloadGVRs = []schema.GroupVersionResource{
	{Group: "apps", Version: "v1", Resource: "deployments"},
	{Group: "apps", Version: "v1", Resource: "replicasets"},
	{Group: "apps", Version: "v1", Resource: "statefulsets"},
}

// NewWorkloadStatus returns the workload status stand-in of srv; rnd draws its latencies.
func NewWorkloadStatus(srv *fakeapi.Server, rnd *rand.Rand, cfg WorkloadConfig) (*WorkloadStatus, error) {
	b, err := newBase("workload-status", srv)
	if err != nil {
		return nil, err
	}
	if rnd == nil {
		return nil, fmt.Errorf("controlplane: workload-status: nil *rand.Rand")
	}
	if cfg.MinLatency < 0 || cfg.MaxLatency < cfg.MinLatency {
		return nil, fmt.Errorf("controlplane: workload-status: latency range [%v, %v] is not 0 <= min <= max", cfg.MinLatency, cfg.MaxLatency)
	}
	for _, s := range cfg.Stuck {
		if ns, name, ok := cut(s); !ok || ns == "" || name == "" {
			return nil, fmt.Errorf("controlplane: workload-status: stuck workload %q is not namespace/name", s)
		}
	}
	cfg.Stuck = slices.Clone(cfg.Stuck)
	ws := &WorkloadStatus{base: b, rnd: rnd, cfg: cfg, due: map[workloadKey]time.Time{}, stuck: map[workloadKey]time.Time{}, exceeded: map[workloadKey]bool{},
		upToDate: map[workloadKey]reported{}, seen: map[workloadKey]*unstructured.Unstructured{}, scratch: newStatusScratch()}
	for _, gvr := range workloadGVRs {
		ws.views = append(ws.views, newView[workloadItem](&ws.base, gvr))
		ws.hooks = append(ws.hooks, viewHooks[workloadItem]{
			add: func(u *unstructured.Unstructured) workloadItem {
				return workloadItem{key: workloadKey{gvr.Resource, u.GetNamespace(), u.GetName(), u.GetGeneration()}, uid: u.GetUID(),
					rv: u.GetResourceVersion(), deleting: u.GetDeletionTimestamp() != nil, stuck: ws.isStuck(u)}
			},
			drop: func(workloadItem) {},
		})
	}
	return ws, nil
}

func cut(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

// Pending implements Component.
func (ws *WorkloadStatus) Pending(now time.Time) bool {
	if ws.pending(now) {
		return true
	}
	if at, ok := ws.ownTimer(); ok && !ws.stopped && !now.Before(at) {
		return true
	}
	return false
}

// NextTimer implements Component.
func (ws *WorkloadStatus) NextTimer() (time.Time, bool) {
	at, ok := ws.timer()
	if own, ok2 := ws.ownTimer(); ok2 && !ws.stopped && (!ok || own.Before(at)) {
		at, ok = own, true
	}
	return at, ok
}

// ownTimer is the earliest of the stand-in's latencies and deadlines, but never before the end
// of a wait (retryAt: a backoff after a refused write, or the poll after a read from a lagging
// watch cache), since Step does nothing before it: a latency due during the wait would
// otherwise keep the stand-in Pending with nothing to do, at one instant, forever.
func (ws *WorkloadStatus) ownTimer() (time.Time, bool) {
	var at time.Time
	for _, m := range []map[workloadKey]time.Time{ws.due, ws.stuck} {
		if len(m) == 0 {
			continue // most of the time: starting to range over a map costs more than this test
		}
		for _, t := range m {
			if at.IsZero() || t.Before(at) {
				at = t
			}
		}
	}
	if at.IsZero() {
		return at, false
	}
	if at.Before(ws.retryAt) {
		at = ws.retryAt
	}
	return at, true
}

// SetStopped implements Component: a restarted stand-in reads the server afresh and draws its
// latencies afresh.
func (ws *WorkloadStatus) SetStopped(stopped bool) {
	ws.base.SetStopped(stopped)
	clear(ws.due)
	for i := range ws.views {
		ws.views[i].forget(ws.hooks[i])
	}
}

// Step implements Component.
func (ws *WorkloadStatus) Step(ctx context.Context, now time.Time) (string, error) {
	// A change waits the component's delay; timers of its own (latencies) fire regardless.
	if ws.idle(now, ws.ownTimer) {
		return "", nil
	}
	ws.stats.Scans++
	ws.beginScan()
	rev := ws.srv.Revision()
	seen := ws.seen
	clear(seen)
	var behind []workloadKey
	for i, gvr := range workloadGVRs {
		v := &ws.views[i]
		err := refresh(&ws.base, v, ws.hooks[i])
		if notFound(err) {
			continue // not served
		}
		if err != nil {
			ws.result(now, err)
			return "", nil
		}
		for _, e := range v.entries {
			u, it := e.obj, &e.val
			k := it.key
			seen[k] = u
			if it.deleting {
				continue
			}
			stuck, exceeded := it.stuck, ws.deadlinePassed(k, now)
			r := reported{uid: it.uid, rv: it.rv, stuck: stuck, exceeded: exceeded}
			if prev, ok := ws.upToDate[k]; ok && prev == r {
				continue
			}
			if statusEqual(&ws.printer, u, ws.desired(gvr.Resource, u, now, stuck, exceeded, &ws.scratch)) {
				ws.upToDate[k] = r
				continue
			}
			delete(ws.upToDate, k)
			behind = append(behind, k)
		}
	}
	// Forget what is gone or changed generation.
	for k := range ws.due {
		if seen[k] == nil {
			delete(ws.due, k)
		}
	}
	for k := range ws.stuck {
		if seen[k] == nil {
			delete(ws.stuck, k)
		}
	}
	for k := range ws.exceeded {
		if seen[k] == nil {
			delete(ws.exceeded, k)
		}
	}
	for k := range ws.upToDate {
		if seen[k] == nil {
			delete(ws.upToDate, k)
		}
	}
	slices.SortFunc(behind, compareWorkloadKeys)
	for _, k := range behind {
		at, ok := ws.due[k]
		if !ok {
			at = now.Add(ws.latency())
			ws.due[k] = at
		}
		if now.Before(at) {
			continue
		}
		delete(ws.due, k)
		err := ws.write(ctx, k, seen[k], now)
		ws.result(now, err)
		if err != nil {
			return fmt.Sprintf("status of %s %s/%s failed: %v", k.resource, k.ns, k.name, err), nil
		}
		return fmt.Sprintf("status of %s %s/%s at generation %d", k.resource, k.ns, k.name, k.generation), nil
	}
	for k := range ws.due {
		if !slices.Contains(behind, k) {
			delete(ws.due, k)
		}
	}
	// Nothing due: quiet until a write or a timer.
	ws.done(now, rev)
	return "", nil
}

func (ws *WorkloadStatus) latency() time.Duration {
	span := ws.cfg.MaxLatency - ws.cfg.MinLatency
	if span <= 0 {
		return ws.cfg.MinLatency
	}
	return ws.cfg.MinLatency + time.Duration(ws.rnd.Int64N(int64(span)+1))
}

func (ws *WorkloadStatus) isStuck(u *unstructured.Unstructured) bool {
	return slices.Contains(ws.cfg.Stuck, u.GetNamespace()+"/"+u.GetName())
}

// deadlinePassed reports whether a stuck Deployment's progress deadline has passed.
func (ws *WorkloadStatus) deadlinePassed(k workloadKey, now time.Time) bool {
	if at, ok := ws.stuck[k]; ok && !now.Before(at) {
		delete(ws.stuck, k)
		ws.exceeded[k] = true
	}
	return ws.exceeded[k]
}

func (ws *WorkloadStatus) write(ctx context.Context, k workloadKey, u *unstructured.Unstructured, now time.Time) error {
	gvr := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: k.resource}
	stuck := ws.isStuck(u)
	if stuck && k.resource == "deployments" {
		if _, ok := ws.stuck[k]; !ok && !ws.exceeded[k] {
			deadline, found, _ := unstructured.NestedInt64(u.Object, "spec", "progressDeadlineSeconds")
			if !found {
				deadline = 600
			}
			ws.stuck[k] = now.Add(time.Duration(deadline) * time.Second)
		}
	}
	passed := ws.deadlinePassed(k, now)
	uid := u.GetUID()
	// The write only reads the stored object: it is lent (LendTo), and the object written is a
	// new top-level map around the stored one's fields with the status replaced, instead of a
	// deep copy of the whole workload changed in place. The server takes a status write's status
	// and keeps the rest of the stored object, so both write the same.
	_, _, err := ws.srv.Resource(gvr).Namespace(k.ns).Mutate(ctx, k.name, fakeapi.Mutation{
		Verb: fakeapi.VerbUpdateStatus, Subresource: "status", LendTo: ws.name,
		Compute: func(live *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			if live.GetUID() != uid || live.GetGeneration() != k.generation {
				return nil, apierrors.NewConflict(gvr.GroupResource(), k.name, fmt.Errorf("the object changed since it was read"))
			}
			next := &unstructured.Unstructured{Object: maps.Clone(live.Object)}
			next.Object["status"] = ws.desired(k.resource, live, now, stuck, passed, nil)
			return next, nil
		},
	})
	if notFound(err) {
		return nil
	}
	return err
}

// desired is the status the workload's controller writes for u at now: every replica updated,
// ready and available, or, stuck, none ready or available (and, past a Deployment's progress
// deadline, its Progressing condition False).
//
// With a scratch, the status is only to be compared (statusEqual): it is built in the
// scratch's maps, kept between scans, and its conditions have only what statusEqual reads of
// them (type, status and reason), without the times and messages a write sends.
func (ws *WorkloadStatus) desired(resource string, u *unstructured.Unstructured, now time.Time, stuck, exceeded bool, scratch *statusScratch) map[string]any {
	replicas, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		replicas = 1
	}
	ready := replicas
	if stuck {
		ready = 0
	}
	name := u.GetName()
	var st map[string]any
	var conds []any
	var ts string
	if scratch != nil {
		clear(scratch.status)
		st, conds = scratch.status, scratch.conds[:0]
	} else {
		st = map[string]any{}
		ts = now.UTC().Format(time.RFC3339)
	}
	// cond appends a condition; msg formats its message (given the workload's name), which a
	// status only compared leaves out.
	cond := func(typ, status, reason, msg string) {
		if scratch != nil {
			c := scratch.cond[len(conds)]
			clear(c)
			c["type"], c["status"], c["reason"] = typ, status, reason
			conds = append(conds, c)
			return
		}
		if strings.Contains(msg, "%q") {
			msg = fmt.Sprintf(msg, name)
		}
		conds = append(conds, map[string]any{"type": typ, "status": status, "reason": reason, "message": msg, "lastUpdateTime": ts, "lastTransitionTime": ts})
	}
	// Zero counts are omitted, as the API's omitempty does.
	count := func(k string, n int64) {
		if n != 0 {
			st[k] = n
		}
	}
	st["observedGeneration"] = u.GetGeneration()
	count("replicas", replicas)
	switch resource {
	case "deployments":
		count("updatedReplicas", replicas)
		count("readyReplicas", ready)
		count("availableReplicas", ready)
		count("unavailableReplicas", max(replicas-ready, 0))
		if stuck {
			cond("Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.")
			if exceeded {
				cond("Progressing", "False", "ProgressDeadlineExceeded", "ReplicaSet %q has timed out progressing.")
			} else {
				cond("Progressing", "True", "ReplicaSetUpdated", "ReplicaSet %q is progressing.")
			}
		} else {
			cond("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
			cond("Progressing", "True", "NewReplicaSetAvailable", "ReplicaSet %q has successfully progressed.")
		}
		st["conditions"] = conds
	case "replicasets":
		count("fullyLabeledReplicas", replicas)
		count("readyReplicas", ready)
		count("availableReplicas", ready)
	case "statefulsets":
		count("readyReplicas", ready)
		count("availableReplicas", ready)
		count("currentReplicas", replicas)
		count("updatedReplicas", replicas)
		rev := name + "-" + strconv.FormatInt(u.GetGeneration(), 10)
		st["currentRevision"] = rev
		st["updateRevision"] = rev
	}
	if scratch != nil {
		scratch.conds = conds
	}
	return st
}

// statusScratch holds a status built only to be compared (desired with a scratch): its map,
// its conditions' list and their maps, refilled in place at each comparison.
type statusScratch struct {
	status map[string]any
	conds  []any
	cond   [2]map[string]any
}

func newStatusScratch() statusScratch {
	return statusScratch{status: map[string]any{}, cond: [2]map[string]any{{}, {}}}
}

// statusEqual compares u's status with want, ignoring the conditions' timestamps: each
// condition counts by its type, status and reason only, and the two statuses are equal when
// they then print alike (fmt.Sprint; DeepEqual values print alike). u may be a lent object:
// its status is read in place, never changed.
//
// The statuses are printed into kept buffers by p when they have the shapes the stand-in and
// the server give them (statusPrinter), else with fmt as statusEqualByPrint does.
func statusEqual(p *statusPrinter, u *unstructured.Unstructured, want map[string]any) bool {
	st, _, _ := unstructured.NestedFieldNoCopy(u.Object, "status")
	have, _ := st.(map[string]any)
	var okHave, okWant bool
	p.have, okHave = p.print(p.have[:0], have)
	p.want, okWant = p.print(p.want[:0], want)
	if okHave && okWant {
		return string(p.have) == string(p.want)
	}
	return statusEqualByPrint(have, want)
}

// statusPrinter prints a status as fmt.Sprint prints it once statusEqualByPrint has reduced
// its conditions to the print of their type, status and reason ("map[conditions:[AvailableTrue
// MinimumReplicasAvailable] observedGeneration:2 replicas:3]"): keys in order, string, int64
// and bool fields, and conditions whose type, status and reason are strings (fmt.Sprint puts
// no space between string operands). Any other shape is not printed, and statusEqual asks
// fmt. Its buffers are kept between scans: comparing a status allocates nothing, where fmt's
// prints and the reduced copies were most of a scan's allocations.
type statusPrinter struct {
	keys       []string
	have, want []byte
}

// print appends st's print to b, or reports false when st has a shape it does not print. A nil
// st prints as an empty map, as statusEqualByPrint's reduced copy of it does.
func (p *statusPrinter) print(b []byte, st map[string]any) ([]byte, bool) {
	keys := p.keys[:0]
	for k := range st {
		keys = append(keys, k)
	}
	slices.Sort(keys) // fmt prints a map's string keys in this order
	p.keys = keys
	b = append(b, "map["...)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, k...)
		b = append(b, ':')
		v := st[k]
		if k == "conditions" {
			// Reduced to a list of prints, nil (printed "[]") unless v is a non-empty []any.
			list, _ := v.([]any)
			b = append(b, '[')
			for j, c := range list {
				m, _ := c.(map[string]any)
				typ, ok1 := m["type"].(string)
				status, ok2 := m["status"].(string)
				reason, ok3 := m["reason"].(string)
				if !ok1 || !ok2 || !ok3 {
					return b, false
				}
				if j > 0 {
					b = append(b, ' ')
				}
				b = append(append(append(b, typ...), status...), reason...)
			}
			b = append(b, ']')
			continue
		}
		switch v := v.(type) {
		case string:
			b = append(b, v...)
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case bool:
			b = strconv.AppendBool(b, v)
		default:
			return b, false
		}
	}
	return append(b, ']'), true
}

// statusEqualByPrint is statusEqual by fmt: have and want reduced (each condition replaced by
// the print of its type, status and reason), then compared by DeepEqual or, when they differ,
// by their prints.
func statusEqualByPrint(have, want map[string]any) bool {
	strip := func(st map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range st {
			if k != "conditions" {
				out[k] = v
				continue
			}
			list, _ := v.([]any)
			var conds []any
			for _, c := range list {
				m, _ := c.(map[string]any)
				conds = append(conds, fmt.Sprint(m["type"], m["status"], m["reason"]))
			}
			out[k] = conds
		}
		return out
	}
	h, w := strip(have), strip(want)
	if reflect.DeepEqual(h, w) {
		return true // equal values print alike: the common answer, without printing
	}
	return fmt.Sprint(h) == fmt.Sprint(w)
}
