package scenarios

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/oracle"
)

// inspectDirectives report what the world holds now; they change nothing.
var inspectDirectives = []*directiveSpec{
	{name: "cache", args: []argSpec{required(strArg("informer")), strArg("index"), strArg("value"), flagArg("full")},
		help: "an informer's cache (or one index value)", handle: (*Env).cache},
	{name: "log", args: []argSpec{required(strArg("handler")), flagArg("new")}, help: "what a handler was told",
		handle: func(e *Env, d Directive, add func(string, ...any)) error {
			hs, err := e.handler(d.str("handler", ""))
			if err != nil {
				return err
			}
			e.log(hs, d.has("new"), add)
			return nil
		}},
	{name: "queue", args: []argSpec{strArg("informer"), strArg("workqueue")}, help: "an informer's queue and handler buffers, or a workqueue",
		handle: (*Env).queue},
	{name: "hazards", help: "the hazards the run has reached so far, how often, and those it has not (world.CountHazards)",
		handle: func(e *Env, _ Directive, add func(string, ...any)) error {
			add("hazards: %s", world.CountHazards(e.w.Sim().Trace().Events()))
			return nil
		}},
	{name: "rv", args: []argSpec{required(strArg("informer"))}, help: "the Reflector's last synced RV and the apiserver's revision",
		handle: (*Env).rv},
	{name: "requests", args: []argSpec{strArg("client"), flagArg("all")}, help: "the apiserver's request record (new ones unless all)",
		handle: func(e *Env, d Directive, add func(string, ...any)) error {
			e.requests(d, add)
			return nil
		}},
	{name: "objects", args: []argSpec{strArg("resource"), strArg("ns")}, help: "the apiserver's objects", handle: (*Env).objects},
	{name: "oracles", help: "the oracles' verdicts now", handle: func(e *Env, _ Directive, add func(string, ...any)) error {
		e.verdicts(add)
		return nil
	}},
}

func (e *Env) rv(d Directive, add func(string, ...any)) error {
	st, err := e.informer(d)
	if err != nil {
		return err
	}
	srv := e.w.Server()
	add("%s: last synced rv=%q apiserver revision=%d compacted=%d", st.name, st.n.SharedIndexInformer().LastSyncResourceVersion(),
		srv.Revision(), srv.CompactedRevision())
	return nil
}

func (e *Env) cache(d Directive, add func(string, ...any)) error {
	st, err := e.informer(d)
	if err != nil {
		return err
	}
	idx := st.n.SharedIndexInformer().GetIndexer()
	var objs []any
	if index, ok := d.arg("index"); ok {
		objs, err = idx.ByIndex(index, d.str("value", ""))
		if err != nil {
			add("error: %v", err)
			return nil
		}
	} else {
		objs = idx.List()
	}
	lines := make([]string, 0, len(objs))
	for _, o := range objs {
		lines = append(lines, describe(o, d.has("full")))
	}
	slices.Sort(lines)
	add("%s cache: %d objects", st.name, len(lines))
	for _, l := range lines {
		add("  %s", l)
	}
	return nil
}

// describe renders an object as "ns/name@rv" and its labels; full adds annotations, finalizers
// and content.
func describe(obj any, full bool) string {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return ref(obj)
	}
	s := ref(u)
	if l := u.GetLabels(); len(l) > 0 {
		s += " labels=" + labels.Set(l).String()
	}
	if !full {
		return s
	}
	if a := u.GetAnnotations(); len(a) > 0 {
		s += " annotations=" + labels.Set(a).String()
	}
	if f := u.GetFinalizers(); len(f) > 0 {
		s += " finalizers=" + strings.Join(f, ",")
	}
	if u.GetDeletionTimestamp() != nil {
		s += " terminating"
	}
	content := map[string]any{}
	for k, v := range u.Object {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			content[k] = v
		}
	}
	if len(content) > 0 {
		s += " content=" + formatContent(content)
	}
	return s
}

func (e *Env) log(hs *handlerState, onlyNew bool, add func(string, ...any)) {
	rec := hs.h.Deliveries()
	calls := rec.Strings()
	if onlyNew {
		calls = calls[max(len(calls)-(rec.Total()-hs.shown), 0):]
	}
	hs.shown = rec.Total()
	state := "synced"
	if !hs.h.HasSynced() {
		state = "not synced"
	}
	if hs.h.Removed() {
		state = "removed"
	}
	add("%s/%s (%s, %d calls in all):", hs.inf, hs.name, state, rec.Total())
	for _, c := range calls {
		add("  %s", c)
	}
	if hs.filter != nil {
		add("  passed by filter %q to the inner handler:", hs.filter.String())
		for _, c := range hs.passed {
			add("    %s", c)
		}
	}
}

func (e *Env) queue(d Directive, add func(string, ...any)) error {
	if name, ok := d.arg("workqueue"); ok {
		q, ok := e.queues[name]
		if !ok {
			return fmt.Errorf("no workqueue named %q", name)
		}
		q.describe(add)
		return nil
	}
	st, err := e.informer(d)
	if err != nil {
		return err
	}
	stp, err := informer.Steps(st.n.SharedIndexInformer())
	if err != nil {
		return err
	}
	add("%s queue: %d items", st.name, stp.QueueLen())
	for _, h := range st.n.Handlers() {
		if h.Removed() {
			continue
		}
		busy := ""
		if h.Busy() {
			busy = " (in a call)"
		}
		add("  %s: %d buffered%s", h.Name(), h.Buffered(), busy)
	}
	return nil
}

func (e *Env) requests(d Directive, add func(string, ...any)) {
	all := e.w.Server().Requests()
	from := e.reqSeen
	if d.has("all") || from > len(all) {
		from = 0
	}
	e.reqSeen = len(all)
	client := d.str("client", "")
	n := 0
	for _, r := range all[from:] {
		if client != "" && !clientMatches(r.Client, client) {
			continue
		}
		add("%s", formatRequest(r))
		n++
	}
	if n == 0 {
		add("no new requests")
	}
}

func formatRequest(r fakeapi.RequestRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s %s", r.Seq, r.Verb, r.Resource.Resource)
	if r.Namespace != "" {
		fmt.Fprintf(&b, " ns=%s", r.Namespace)
	}
	if r.Name != "" {
		fmt.Fprintf(&b, " name=%s", r.Name)
	}
	o := r.Options
	if r.Verb == fakeapi.VerbList || r.Verb == fakeapi.VerbWatch {
		fmt.Fprintf(&b, " rv=%q", o.ResourceVersion)
		if o.ResourceVersionMatch != "" {
			fmt.Fprintf(&b, " match=%s", o.ResourceVersionMatch)
		}
		if o.Limit != 0 {
			fmt.Fprintf(&b, " limit=%d", o.Limit)
		}
		if o.Continue != "" {
			b.WriteString(" continue=yes")
		}
		if o.SendInitialEvents != nil && *o.SendInitialEvents {
			b.WriteString(" sendInitialEvents=true")
		}
		if o.LabelSelector != "" {
			fmt.Fprintf(&b, " labels=%s", o.LabelSelector)
		}
		if o.FieldSelector != "" {
			fmt.Fprintf(&b, " fields=%s", o.FieldSelector)
		}
		if r.Replica >= 0 {
			fmt.Fprintf(&b, " replica=%d", r.Replica)
		}
	}
	b.WriteString(" ->")
	switch {
	case r.Err != "":
		fmt.Fprintf(&b, " %d %s", r.Code, r.Reason)
	case r.Verb == fakeapi.VerbList:
		fmt.Fprintf(&b, " rv=%s", r.ListRV)
		if r.Continue != "" {
			b.WriteString(" continue=yes")
		}
	case r.Verb == fakeapi.VerbWatch:
		fmt.Fprintf(&b, " watch=%d", r.WatchID)
	default:
		fmt.Fprintf(&b, " rv=%s", r.ObjectRV)
	}
	return b.String()
}

// clientMatches says whether a request's client name is the informer's: the world names the
// ListerWatcher after the informer.
func clientMatches(client, informerName string) bool {
	return client == informerName || strings.HasSuffix(client, "/"+informerName) || strings.HasPrefix(client, informerName+"/")
}

func (e *Env) objects(d Directive, add func(string, ...any)) error {
	gvr, err := parseResource(d.str("resource", ""))
	if err != nil {
		return err
	}
	if gvr.Empty() {
		gvr = e.w.Config().DefaultResource
	}
	list, err := e.w.Server().Snapshot(gvr, d.str("ns", ""), metav1.ListOptions{})
	if err != nil {
		add("error: %v", err)
		return nil
	}
	add("apiserver %s at rv=%s: %d objects", gvr.Resource, list.GetResourceVersion(), len(list.Items))
	lines := make([]string, 0, len(list.Items))
	for i := range list.Items {
		lines = append(lines, describe(&list.Items[i], true))
	}
	slices.Sort(lines)
	for _, l := range lines {
		add("  %s", l)
	}
	return nil
}

func (e *Env) verdicts(add func(string, ...any)) {
	deliveries := 0
	for _, name := range e.infOrder {
		for _, h := range e.informers[name].n.Handlers() {
			deliveries += h.Deliveries().Total()
		}
	}
	add("%d deliveries checked", deliveries)
	// A safety violation these verdicts show fails the run, as it would have at the next step:
	// one found in this directive's last step (not raised yet), or one only the convergence
	// check sees (an object a handler changed and nothing wrote since). Not converged now is
	// no failure: the run may still converge.
	convErr := e.w.CheckConverged()
	var v *world.Violation
	if errors.As(convErr, &v) && v.Oracle != oracle.EventualConsistency {
		e.fail(v)
	}
	if found := e.named.Violation(); found != nil {
		e.fail(found)
	}
	for _, v := range e.named.Verdicts() {
		if v.Name == oracle.EventualConsistency {
			continue
		}
		add("%s", v.String())
	}
	if convErr != nil {
		add("%s (%s): not converged now: %v", oracle.EventualConsistency, oracle.Liveness, convErr)
	} else {
		add("%s (%s): ok now: every cache and handler view equals the apiserver", oracle.EventualConsistency, oracle.Liveness)
	}
}
