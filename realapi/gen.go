package realapi

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// family is one kind of sequence: its name and how it draws one from a random source. One row
// per family; Generate draws them in turn.
type family struct {
	name string
	gen  func(r *rand.Rand, b *builder)
}

// Families are the sequence families, in the order Generate cycles through them.
var Families = []family{
	{"crud", genCRUD},
	{"list", genList},
	{"watch", genWatch},
	{"watchlist", genWatchList},
	{"compact", genCompact},
	{"apply", genApply},
	{"smp", genSMP},
	{"scale", genScale},
	{"finalizer", genFinalizer},
	{"events", genEvents},
	{"table", genTable},
	{"discovery", genDiscovery},
	{"crd", genCRD},
	{"namespace", genNamespace},
	{"gc", genGC},
	{"validation", genValidation},
	{"dryrun", genDryRun},
}

// Generate returns n sequences drawn from seed: family i mod len(Families) for the i-th, its
// contents from a source seeded by (seed, i). The same arguments give the same sequences.
func Generate(seed uint64, n int) ([]Sequence, error) { return GenerateRun(seed, n, "") }

// GenerateRun is Generate with run, a short label of lowercase letters and digits, in every
// sequence's namespace name, so that runs against one control plane do not meet each other's
// objects.
func GenerateRun(seed uint64, n int, run string) ([]Sequence, error) {
	if n <= 0 {
		return nil, fmt.Errorf("realapi: Generate needs a positive number of sequences, got %d", n)
	}
	if len(run) > 12 || strings.Trim(run, "abcdefghijklmnopqrstuvwxyz0123456789") != "" {
		return nil, fmt.Errorf("realapi: run label %q: at most 12 lowercase letters and digits", run)
	}
	out := make([]Sequence, 0, n)
	for i := range n {
		f := Families[i%len(Families)]
		r := rand.New(rand.NewPCG(seed, uint64(i)))
		ns := fmt.Sprintf("rs%d%s-%04d-%s", seed%1000, run, i, f.name)
		b := &builder{ns: ns}
		b.step(Step{Name: "create the namespace", NoCompare: f.name != "namespace",
			Req: Request{Method: "POST", Path: "/api/v1/namespaces", Body: obj("v1", "Namespace", ns, "", nil, "")}})
		f.gen(r, b)
		out = append(out, Sequence{Name: fmt.Sprintf("%s#%d", f.name, i), Family: f.name, Namespace: ns, Steps: b.steps})
	}
	return out, nil
}

type builder struct {
	ns    string
	steps []Step
}

func (b *builder) step(s Step) { b.steps = append(b.steps, s) }

func (b *builder) get(name, path string) {
	b.step(Step{Name: name, Req: Request{Method: "GET", Path: path}})
}

// obj is an object's JSON: apiVersion, kind, name (or generateName when name ends with '-'),
// namespace ("" for none), labels, and the rest of its fields as a JSON fragment (without
// braces, "" for none).
func obj(apiVersion, kind, name, namespace string, labels map[string]string, rest string) string {
	md := map[string]any{}
	if strings.HasSuffix(name, "-") {
		md["generateName"] = name
	} else {
		md["name"] = name
	}
	if namespace != "" {
		md["namespace"] = namespace
	}
	if len(labels) > 0 {
		md["labels"] = labels
	}
	mdj, _ := json.Marshal(md)
	s := fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":%s`, apiVersion, kind, mdj)
	if rest != "" {
		s += "," + rest
	}
	return s + "}"
}

func cmPath(name string) string { return "/api/v1/namespaces/{ns}/configmaps/" + name }

const cms = "/api/v1/namespaces/{ns}/configmaps"

func configMap(name string, labels map[string]string, data map[string]string) string {
	d, _ := json.Marshal(data)
	return obj("v1", "ConfigMap", name, "", labels, `"data":`+string(d))
}

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

func seqLabels(b *builder, extra ...string) map[string]string {
	l := map[string]string{"seq": b.ns}
	for i := 0; i+1 < len(extra); i += 2 {
		l[extra[i]] = extra[i+1]
	}
	return l
}

func genCRUD(r *rand.Rand, b *builder) {
	name := pick(r, "a", "config", "x-1")
	data := map[string]string{"k": fmt.Sprint(r.IntN(100))}
	b.step(Step{Name: "create", Save: "c", Req: Request{Method: "POST", Path: cms, Body: configMap(name, seqLabels(b), data)}})
	b.step(Step{Name: "create again: AlreadyExists", Req: Request{Method: "POST", Path: cms, Body: configMap(name, seqLabels(b), data)}})
	b.get("get", cmPath(name))
	b.step(Step{Name: "update at the current revision", Save: "u", Req: Request{Method: "PUT", Path: cmPath(name),
		Body: strings.Replace(configMap(name, seqLabels(b), map[string]string{"k": "2"}), `"metadata":{`, `"metadata":{"resourceVersion":"{rv:c}",`, 1)}})
	b.step(Step{Name: "update at a stale revision: Conflict", Req: Request{Method: "PUT", Path: cmPath(name),
		Body: strings.Replace(configMap(name, seqLabels(b), map[string]string{"k": "3"}), `"metadata":{`, `"metadata":{"resourceVersion":"{rv:c}",`, 1)}})
	if r.IntN(2) == 0 {
		b.step(Step{Name: "update without a revision", Req: Request{Method: "PUT", Path: cmPath(name), Body: configMap(name, seqLabels(b), map[string]string{"k": "4"})}})
	}
	b.step(Step{Name: "update of another name: BadRequest", Req: Request{Method: "PUT", Path: cmPath(name), Body: configMap("other", nil, nil)}})
	b.step(Step{Name: "update of a missing object: NotFound", Req: Request{Method: "PUT", Path: cmPath("missing"), Body: strings.Replace(configMap("missing", nil, nil), `"metadata":{`, `"metadata":{"resourceVersion":"5",`, 1)}})
	b.step(Step{Name: "merge patch", Req: Request{Method: "PATCH", Path: cmPath(name), ContentType: "application/merge-patch+json", Body: `{"metadata":{"labels":{"extra":"y"}},"data":{"m":"1"}}`}})
	b.step(Step{Name: "JSON patch", Req: Request{Method: "PATCH", Path: cmPath(name), ContentType: "application/json-patch+json", Body: `[{"op":"add","path":"/data/j","value":"v"}]`}})
	b.step(Step{Name: "JSON patch whose test fails", Req: Request{Method: "PATCH", Path: cmPath(name), ContentType: "application/json-patch+json", Body: `[{"op":"test","path":"/data/j","value":"nope"}]`}})
	b.step(Step{Name: "patch of a missing object", Req: Request{Method: "PATCH", Path: cmPath("missing"), ContentType: "application/merge-patch+json", Body: `{}`}})
	b.step(Step{Name: "delete with a wrong uid precondition: Conflict", Req: Request{Method: "DELETE", Path: cmPath(name),
		Body: `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"6f1b3c9e-0000-4000-8000-000000000000"}}`}})
	b.step(Step{Name: "delete with the right uid precondition", Req: Request{Method: "DELETE", Path: cmPath(name),
		Body: `{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"{uid:c}"}}`}})
	b.get("get after delete: NotFound", cmPath(name))
	b.step(Step{Name: "delete again: NotFound", Req: Request{Method: "DELETE", Path: cmPath(name)}})
	b.step(Step{Name: "create with generateName", Req: Request{Method: "POST", Path: cms, Body: configMap("gen-", seqLabels(b), nil)}})
	b.step(Step{Name: "create with neither name nor generateName", Req: Request{Method: "POST", Path: cms, Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}`}})
	b.step(Step{Name: "create with an invalid name", Req: Request{Method: "POST", Path: cms, Body: configMap("Not_Valid", nil, nil)}})
	b.step(Step{Name: "create in another namespace than the URL's", Req: Request{Method: "POST", Path: cms, Body: obj("v1", "ConfigMap", "n", "elsewhere", nil, "")}})
}

func genList(r *rand.Rand, b *builder) {
	n := 3 + r.IntN(4)
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("item-%d", r.IntN(1000))
	}
	names = dedupe(names)
	for i, name := range names {
		save := ""
		if i == len(names)-1 {
			save = "last"
		}
		b.step(Step{Name: "create " + name, Save: save, NoCompare: true, Req: Request{Method: "POST", Path: cms,
			Body: configMap(name, seqLabels(b, "tier", pick(r, "a", "b")), nil)}})
	}
	sel := "seq%3D{ns}"
	b.get("list by label", cms+"?labelSelector="+sel)
	b.get("list by label set", cms+"?labelSelector="+sel+",tier+in+(a)")
	b.get("list by label inequality", cms+"?labelSelector="+sel+",tier!%3Da")
	b.get("list by field", cms+"?labelSelector="+sel+"&fieldSelector=metadata.name%3D"+names[0])
	b.get("list by an unsupported field: BadRequest", cms+"?fieldSelector=data.k%3D1")
	b.get("list by a malformed label selector: BadRequest", cms+"?labelSelector=a%3D%3D%3Db")
	limit := 1 + r.IntN(3)
	b.step(Step{Name: "first page", Save: "p1", Req: Request{Method: "GET", Path: fmt.Sprintf("%s?labelSelector=%s&limit=%d", cms, sel, limit)}})
	b.get("second page", fmt.Sprintf("%s?labelSelector=%s&limit=%d&continue={continue:p1}", cms, sel, limit))
	b.get("a malformed continue token: BadRequest", cms+"?limit=1&continue=notatoken")
	b.get("resourceVersion=0", cms+"?labelSelector="+sel+"&resourceVersion=0")
	b.get("NotOlderThan the last write", cms+"?labelSelector="+sel+"&resourceVersion={rv:last}&resourceVersionMatch=NotOlderThan")
	b.get("Exact at the last write", cms+"?labelSelector="+sel+"&resourceVersion={rv:last}&resourceVersionMatch=Exact")
	b.get("resourceVersionMatch without resourceVersion: Invalid", cms+"?resourceVersionMatch=NotOlderThan")
	b.get("Exact with resourceVersion=0: Invalid", cms+"?resourceVersion=0&resourceVersionMatch=Exact")
	b.get("an unknown resourceVersionMatch: Invalid", cms+"?resourceVersion=1&resourceVersionMatch=Newest")
	b.get("a resourceVersion that is not a number", cms+"?resourceVersion=abc")
	b.get("limit with continue and resourceVersion: Invalid", fmt.Sprintf("%s?limit=1&continue={continue:p1}&resourceVersion={rv:last}", cms))
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

func genWatch(r *rand.Rand, b *builder) {
	b.step(Step{Name: "create a", Save: "a", Req: Request{Method: "POST", Path: cms, Body: configMap("a", seqLabels(b), map[string]string{"v": "1"})}})
	var then []Step
	want := 0
	for i := range 2 + r.IntN(3) {
		switch r.IntN(3) {
		case 0:
			then = append(then, Step{Name: "update a", NoCompare: true, Req: Request{Method: "PATCH", Path: cmPath("a"), ContentType: "application/merge-patch+json", Body: fmt.Sprintf(`{"data":{"v":"%d"}}`, i+2)}})
		case 1:
			then = append(then, Step{Name: "create b", NoCompare: true, Req: Request{Method: "POST", Path: cms, Body: configMap(fmt.Sprintf("b%d", i), seqLabels(b), nil)}})
		default:
			then = append(then, Step{Name: "create unlabelled", NoCompare: true, Req: Request{Method: "POST", Path: cms, Body: configMap(fmt.Sprintf("u%d", i), nil, nil)}})
			want-- // not selected
		}
		want++
	}
	then = append(then, Step{Name: "delete a", NoCompare: true, Req: Request{Method: "DELETE", Path: cmPath("a")}})
	want++
	query := "?watch=1&labelSelector=seq%3D{ns}&resourceVersion={rv:a}"
	if r.IntN(2) == 0 {
		query += "&allowWatchBookmarks=true"
	}
	b.step(Step{Name: "watch from a's revision", Req: Request{Method: "GET", Path: cms + query}, Watch: &WatchSpec{Then: then, Want: want}})
	b.step(Step{Name: "watch of one name", Req: Request{Method: "GET", Path: cms + "?watch=1&fieldSelector=metadata.name%3Da&resourceVersion={rv:a}"}, Watch: &WatchSpec{Want: want - len(then) + 3}})
	b.step(Step{Name: "watch with a malformed resourceVersion", Req: Request{Method: "GET", Path: cms + "?watch=1&resourceVersion=x"}, Watch: &WatchSpec{Want: 1}})
}

func genWatchList(r *rand.Rand, b *builder) {
	n := 1 + r.IntN(3)
	for i := range n {
		b.step(Step{Name: "create", NoCompare: true, Req: Request{Method: "POST", Path: cms, Body: configMap(fmt.Sprintf("w%d", i), seqLabels(b), nil)}})
	}
	then := []Step{{Name: "create late", NoCompare: true, Req: Request{Method: "POST", Path: cms, Body: configMap("late", seqLabels(b), nil)}}}
	// n initial events, the bookmark ending them, the late create; then a read past the watch
	// cache's first bookmark tick (every 1 s, 25% jitter), which kube-apiserver spends on a new
	// watch-list watcher (docs/realcluster.md, watch-list-tick-bookmark).
	b.step(Step{Name: "watch-list: initial events, their end bookmark, then the late create",
		Req:   Request{Method: "GET", Path: cms + "?watch=1&labelSelector=seq%3D{ns}&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan"},
		Watch: &WatchSpec{Then: then, Want: n + 2, Linger: 1500 * time.Millisecond}})
	b.get("sendInitialEvents without watch: Invalid", cms+"?sendInitialEvents=true")
	b.step(Step{Name: "sendInitialEvents without resourceVersionMatch: Invalid",
		Req: Request{Method: "GET", Path: cms + "?watch=1&sendInitialEvents=true&allowWatchBookmarks=true"}, Watch: &WatchSpec{Want: 1}})
	b.step(Step{Name: "sendInitialEvents without bookmarks: Invalid",
		Req: Request{Method: "GET", Path: cms + "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"}, Watch: &WatchSpec{Want: 1}})
}

const coreEvents = "/api/v1/namespaces/{ns}/events"
const newEvents = "/apis/events.k8s.io/v1/namespaces/{ns}/events"

func coreEvent(name, reason, message string) string {
	return obj("v1", "Event", name, "", nil, fmt.Sprintf(`"involvedObject":{"kind":"ConfigMap","namespace":"{ns}","name":"target","apiVersion":"v1"},"reason":%q,"message":%q,"type":"Normal","source":{"component":"realapi"},"count":1,"firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:00:00Z"`, reason, message))
}

func newEvent(name, reason, note string) string {
	return obj("events.k8s.io/v1", "Event", name, "", nil, fmt.Sprintf(`"regarding":{"kind":"ConfigMap","namespace":"{ns}","name":"target","apiVersion":"v1"},"reason":%q,"note":%q,"type":"Warning","action":"Checked","reportingController":"example.com/realapi","reportingInstance":"realapi-1","eventTime":"2026-01-01T00:00:00.000000Z"`, reason, note))
}

func genCompact(r *rand.Rand, b *builder) {
	b.step(Step{Name: "create an event", Save: "e1", Req: Request{Method: "POST", Path: coreEvents, Body: coreEvent("e", "Started", "one")}})
	for i := range 1 + r.IntN(2) {
		b.step(Step{Name: "update the event", Save: "e2", NoCompare: true, Req: Request{Method: "PATCH", Path: coreEvents + "/e", ContentType: "application/merge-patch+json", Body: fmt.Sprintf(`{"count":%d}`, i+2)}})
	}
	// A write after e2, compacted at: e1's successor revision is gone on both sides, however
	// many writes elsewhere fall between (the real store counts the whole cluster's).
	b.step(Step{Name: "another event", Save: "e3", NoCompare: true, Req: Request{Method: "POST", Path: coreEvents, Body: coreEvent("later", "Started", "two")}})
	b.step(Step{Name: "compact at the last write", Compact: "e3", NoCompare: true})
	b.step(Step{Name: "watch from before the compaction: 410", Req: Request{Method: "GET", Path: coreEvents + "?watch=1&resourceVersion={rv:e1}"}, Watch: &WatchSpec{Want: 1}})
	b.get("exact list from before the compaction: 410", coreEvents+"?resourceVersion={rv:e1}&resourceVersionMatch=Exact")
	b.get("exact list at the compaction", coreEvents+"?fieldSelector=metadata.name%3De&resourceVersion={rv:e2}&resourceVersionMatch=Exact")
}

func genApply(r *rand.Rand, b *builder) {
	applyCT := pick(r, "application/apply-patch+yaml", "application/apply-patch+yaml")
	name := "applied"
	alice := configMap(name, map[string]string{"owner": "alice"}, map[string]string{"k": "1", "a": "x"})
	bob := configMap(name, nil, map[string]string{"k": "2"})
	b.step(Step{Name: "apply that creates", Req: Request{Method: "PATCH", Path: cmPath(name) + "?fieldManager=alice", ContentType: applyCT, Body: alice}})
	b.step(Step{Name: "the same apply again", Req: Request{Method: "PATCH", Path: cmPath(name) + "?fieldManager=alice", ContentType: applyCT, Body: alice}})
	b.step(Step{Name: "a conflicting apply", Req: Request{Method: "PATCH", Path: cmPath(name) + "?fieldManager=bob", ContentType: applyCT, Body: bob}})
	b.step(Step{Name: "a conflicting apply with force=false", Req: Request{Method: "PATCH", Path: cmPath(name) + "?fieldManager=bob&force=false", ContentType: applyCT, Body: bob}})
	b.step(Step{Name: "a forced apply", Req: Request{Method: "PATCH", Path: cmPath(name) + "?fieldManager=bob&force=true", ContentType: applyCT, Body: bob}})
	b.step(Step{Name: "alice drops a field", Req: Request{Method: "PATCH", Path: cmPath(name) + "?fieldManager=alice", ContentType: applyCT, Body: configMap(name, map[string]string{"owner": "alice"}, map[string]string{"a": "x"})}})
	b.step(Step{Name: "an update by another manager", Req: Request{Method: "PATCH", Path: cmPath(name) + "?fieldManager=editor", ContentType: "application/merge-patch+json", Body: `{"data":{"e":"1"}}`}})
	b.step(Step{Name: "apply without fieldManager", Req: Request{Method: "PATCH", Path: cmPath(name), ContentType: applyCT, Body: bob}})
	b.step(Step{Name: "apply with an unknown field, Strict", Req: Request{Method: "PATCH", Path: cmPath(name) + "?fieldManager=alice&fieldValidation=Strict", ContentType: applyCT, Body: strings.Replace(alice, `"data":`, `"bogus":1,"data":`, 1)}})
	b.step(Step{Name: "apply of another kind", Req: Request{Method: "PATCH", Path: cmPath(name) + "?fieldManager=alice", ContentType: applyCT, Body: obj("v1", "Secret", name, "", nil, "")}})
	b.step(Step{Name: "force on a merge patch", Req: Request{Method: "PATCH", Path: cmPath(name) + "?fieldManager=x&force=true", ContentType: "application/merge-patch+json", Body: `{}`}})
	b.step(Step{Name: "apply in YAML", Req: Request{Method: "PATCH", Path: cmPath("yaml") + "?fieldManager=y", ContentType: "application/apply-patch+yaml",
		Body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml\ndata:\n  k: v\n"}})
	b.get("get with managedFields", cmPath(name))
	b.step(Step{Name: "clear managedFields", Req: Request{Method: "PATCH", Path: cmPath(name), ContentType: "application/merge-patch+json", Body: `{"metadata":{"managedFields":[{}]}}`}})
	dep := deployment("d", 1, "nginx:1")
	b.step(Step{Name: "apply a Deployment", Volatile: true, Req: Request{Method: "PATCH", Path: deployPath("d") + "?fieldManager=alice", ContentType: applyCT, Body: dep}})
	b.step(Step{Name: "apply to the Deployment's status", Volatile: true, Req: Request{Method: "PATCH", Path: deployPath("d") + "/status?fieldManager=status-owner&force=true", ContentType: applyCT,
		Body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"status":{"observedGeneration":7}}`}})
}

const deploys = "/apis/apps/v1/namespaces/{ns}/deployments"

func deployPath(name string) string { return deploys + "/" + name }

func deployment(name string, replicas int, images ...string) string {
	var cs []string
	for i, img := range images {
		cs = append(cs, fmt.Sprintf(`{"name":"c%d","image":%q,"ports":[{"containerPort":%d}]}`, i, img, 80+i))
	}
	return obj("apps/v1", "Deployment", name, "", map[string]string{"app": name}, fmt.Sprintf(
		`"spec":{"replicas":%d,"selector":{"matchLabels":{"app":%q}},"template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[%s]}}}`,
		replicas, name, name, strings.Join(cs, ",")))
}

func genSMP(r *rand.Rand, b *builder) {
	b.step(Step{Name: "create a Deployment", Volatile: true, Req: Request{Method: "POST", Path: deploys, Body: deployment("web", 1+r.IntN(3), "nginx:1", "sidecar:1", "log:1")}})
	smp := "application/strategic-merge-patch+json"
	patches := []struct{ name, body string }{
		{"change one container's image, merged by name", `{"spec":{"template":{"spec":{"containers":[{"name":"c1","image":"sidecar:2"}]}}}}`},
		{"$patch: delete of a container", `{"spec":{"template":{"spec":{"containers":[{"name":"c2","$patch":"delete"}]}}}}`},
		{"$setElementOrder of the containers", `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"c1"},{"name":"c0"}]}}}}`},
		{"$retainKeys on the strategy", `{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`},
		{"$patch: replace of the labels", `{"metadata":{"labels":{"$patch":"replace","fresh":"yes"}}}`},
		{"$deleteFromPrimitiveList", `{"metadata":{"finalizers":["example.com/a","example.com/b"]}}`},
		{"a ports list merged by containerPort", `{"spec":{"template":{"spec":{"containers":[{"name":"c0","ports":[{"containerPort":8080,"name":"alt"}]}]}}}}`},
		{"a null deletes a field", `{"spec":{"revisionHistoryLimit":null}}`},
		{"an unknown directive", `{"spec":{"$patch":"explode"}}`},
		{"a patch that is not JSON", `{"spec":`},
	}
	r.Shuffle(len(patches), func(i, j int) { patches[i], patches[j] = patches[j], patches[i] })
	for _, p := range patches[:4+r.IntN(len(patches)-4)] {
		b.step(Step{Name: p.name, Volatile: true, Req: Request{Method: "PATCH", Path: deployPath("web"), ContentType: smp, Body: p.body}})
	}
	b.step(Step{Name: "drop the finalizers", Volatile: true, NoCompare: true, Req: Request{Method: "PATCH", Path: deployPath("web"), ContentType: "application/merge-patch+json", Body: `{"metadata":{"finalizers":null}}`}})
	b.step(Step{Name: "create a ConfigMap", Req: Request{Method: "POST", Path: cms, Body: configMap("smp", nil, map[string]string{"a": "1"})}})
	b.step(Step{Name: "strategic merge patch of a ConfigMap", Req: Request{Method: "PATCH", Path: cmPath("smp"), ContentType: smp, Body: `{"data":{"b":"2","a":null}}`}})
}

func genScale(r *rand.Rand, b *builder) {
	b.step(Step{Name: "create a Deployment", Volatile: true, Req: Request{Method: "POST", Path: deploys, Body: deployment("s", 1, "nginx:1")}})
	b.step(Step{Name: "get its scale", Volatile: true, Req: Request{Method: "GET", Path: deployPath("s") + "/scale"}})
	n := 2 + r.IntN(5)
	switch r.IntN(3) {
	case 0:
		b.step(Step{Name: "update the scale", Volatile: true, Req: Request{Method: "PUT", Path: deployPath("s") + "/scale",
			Body: fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"s","namespace":"{ns}"},"spec":{"replicas":%d}}`, n)}})
	case 1:
		b.step(Step{Name: "merge patch of the scale", Volatile: true, Req: Request{Method: "PATCH", Path: deployPath("s") + "/scale", ContentType: "application/merge-patch+json", Body: fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)}})
	default:
		b.step(Step{Name: "apply to the scale", Volatile: true, Req: Request{Method: "PATCH", Path: deployPath("s") + "/scale?fieldManager=scaler&force=true", ContentType: "application/apply-patch+yaml",
			Body: fmt.Sprintf(`{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"s"},"spec":{"replicas":%d}}`, n)}})
	}
	b.step(Step{Name: "the scale of another name: BadRequest", Volatile: true, Req: Request{Method: "PUT", Path: deployPath("s") + "/scale",
		Body: `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"other"},"spec":{"replicas":1}}`}})
	b.step(Step{Name: "a negative scale: Invalid", Volatile: true, Req: Request{Method: "PATCH", Path: deployPath("s") + "/scale", ContentType: "application/merge-patch+json", Body: `{"spec":{"replicas":-1}}`}})
	b.step(Step{Name: "get the Deployment", Volatile: true, Req: Request{Method: "GET", Path: deployPath("s")}})
	b.step(Step{Name: "the scale of a missing Deployment", Req: Request{Method: "GET", Path: deployPath("missing") + "/scale"}})
	b.step(Step{Name: "a ConfigMap has no scale", Req: Request{Method: "GET", Path: cmPath("x") + "/scale"}})
	b.step(Step{Name: "a ConfigMap has no status", Req: Request{Method: "GET", Path: cmPath("x") + "/status"}})
}

func genFinalizer(r *rand.Rand, b *builder) {
	fins := `"example.com/hold"`
	if r.IntN(2) == 0 {
		fins += `,"example.com/second"`
	}
	b.step(Step{Name: "create with finalizers", Save: "f", Req: Request{Method: "POST", Path: cms,
		Body: strings.Replace(configMap("held", seqLabels(b), nil), `"metadata":{`, `"metadata":{"finalizers":[`+fins+`],`, 1)}})
	b.step(Step{Name: "delete: marked, kept", Req: Request{Method: "DELETE", Path: cmPath("held")}})
	b.get("get: deletionTimestamp set", cmPath("held"))
	b.step(Step{Name: "delete again", Req: Request{Method: "DELETE", Path: cmPath("held")}})
	b.step(Step{Name: "adding a finalizer while deleting: Forbidden", Req: Request{Method: "PATCH", Path: cmPath("held"), ContentType: "application/json-patch+json", Body: `[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/new"}]`}})
	b.step(Step{Name: "changing the data while deleting", Req: Request{Method: "PATCH", Path: cmPath("held"), ContentType: "application/merge-patch+json", Body: `{"data":{"late":"1"}}`}})
	b.step(Step{Name: "remove the finalizers: gone", Req: Request{Method: "PATCH", Path: cmPath("held"), ContentType: "application/merge-patch+json", Body: `{"metadata":{"finalizers":null}}`}})
	b.get("get: NotFound", cmPath("held"))
	b.step(Step{Name: "a finalizer that is not a qualified name: Invalid", Req: Request{Method: "POST", Path: cms,
		Body: strings.Replace(configMap("bad", nil, nil), `"metadata":{`, `"metadata":{"finalizers":["no_slash"],`, 1)}})
	b.step(Step{Name: "create another", Req: Request{Method: "POST", Path: cms, Body: configMap("g", seqLabels(b), nil)}, NoCompare: true})
	b.step(Step{Name: "delete with an unknown propagationPolicy", Req: Request{Method: "DELETE", Path: cmPath("g") + "?propagationPolicy=Sideways"}})
	b.step(Step{Name: "delete orphaning dependents", Req: Request{Method: "DELETE", Path: cmPath("g") + "?propagationPolicy=Orphan"}})
}

func genEvents(r *rand.Rand, b *builder) {
	b.step(Step{Name: "create a core/v1 event", Req: Request{Method: "POST", Path: coreEvents, Body: coreEvent("old", "Pulled", "image pulled")}})
	b.get("the core event through events.k8s.io/v1", newEvents+"/old")
	b.step(Step{Name: "create an events.k8s.io/v1 event", Req: Request{Method: "POST", Path: newEvents, Body: newEvent("new", "Checked", "checked it")}})
	b.get("the new event through core/v1", coreEvents+"/new")
	b.get("list core/v1 events", coreEvents)
	b.get("list events.k8s.io/v1 events", newEvents)
	b.get("core events by involvedObject", coreEvents+"?fieldSelector=involvedObject.name%3Dtarget,reason%3DChecked")
	b.get("events.k8s.io events by regarding", newEvents+"?fieldSelector=regarding.name%3Dtarget")
	if r.IntN(2) == 0 {
		b.step(Step{Name: "update the new event through core/v1", Req: Request{Method: "PATCH", Path: coreEvents + "/new", ContentType: "application/merge-patch+json", Body: `{"message":"changed"}`}})
		b.get("the change through events.k8s.io/v1", newEvents+"/new")
	} else {
		b.step(Step{Name: "delete the core event through events.k8s.io/v1", Req: Request{Method: "DELETE", Path: newEvents + "/old"}})
		b.get("gone through core/v1", coreEvents+"/old")
	}
	b.step(Step{Name: "an events.k8s.io event without reportingController: Invalid", Req: Request{Method: "POST", Path: newEvents,
		Body: obj("events.k8s.io/v1", "Event", "bad", "", nil, `"regarding":{"kind":"ConfigMap","name":"target"},"reason":"R","note":"n","type":"Normal","eventTime":"2026-01-01T00:00:00.000000Z"`)}})
}

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

func genTable(r *rand.Rand, b *builder) {
	for i := range 1 + r.IntN(3) {
		b.step(Step{Name: "create", NoCompare: true, Req: Request{Method: "POST", Path: cms, Body: configMap(fmt.Sprintf("t%d", i), seqLabels(b), map[string]string{"a": "1", "b": "2"})}})
	}
	b.step(Step{Name: "create a Secret", NoCompare: true, Req: Request{Method: "POST", Path: "/api/v1/namespaces/{ns}/secrets", Body: obj("v1", "Secret", "s", "", seqLabels(b), `"type":"Opaque","data":{"k":"dg=="}`)}})
	b.step(Step{Name: "create an event", NoCompare: true, Req: Request{Method: "POST", Path: coreEvents, Body: coreEvent("ev", "Pulled", "pulled")}})
	b.step(Step{Name: "a ConfigMap table", Req: Request{Method: "GET", Path: cms + "?labelSelector=seq%3D{ns}", Accept: tableAccept}})
	b.step(Step{Name: "a Secret table", Req: Request{Method: "GET", Path: "/api/v1/namespaces/{ns}/secrets?labelSelector=seq%3D{ns}", Accept: tableAccept}})
	b.step(Step{Name: "the namespace's table (kubectl get ns)", Req: Request{Method: "GET", Path: "/api/v1/namespaces?fieldSelector=metadata.name%3D{ns}", Accept: tableAccept}})
	b.step(Step{Name: "an event table", Req: Request{Method: "GET", Path: coreEvents, Accept: tableAccept}})
	b.step(Step{Name: "an events.k8s.io event table", Req: Request{Method: "GET", Path: newEvents, Accept: tableAccept}})
	b.step(Step{Name: "one object's table", Req: Request{Method: "GET", Path: cmPath("t0"), Accept: tableAccept}})
	b.step(Step{Name: "a table without headers", Req: Request{Method: "GET", Path: cms + "?labelSelector=seq%3D{ns}&includeObject=None", Accept: "application/json;as=Table;v=v1;g=meta.k8s.io"}})
	b.step(Step{Name: "a Deployment table", Volatile: true, Req: Request{Method: "POST", Path: deploys, Body: deployment("tbl", 0, "nginx:1")}, NoCompare: true})
	b.step(Step{Name: "a Deployment table (settled)", Req: Request{Method: "GET", Path: deployPath("tbl")}, Settle: "status.observedGeneration", SettleTo: "1", NoCompare: true})
	b.step(Step{Name: "a Deployment table", Req: Request{Method: "GET", Path: deploys, Accept: tableAccept}})
}

func genDiscovery(r *rand.Rand, b *builder) {
	paths := []string{"/api", "/apis", "/api/v1", "/apis/apps/v1", "/apis/events.k8s.io/v1", "/apis/batch/v1", "/apis/rbac.authorization.k8s.io/v1", "/openapi/v2", "/openapi/v3", "/openapi/v3/apis/apps/v1", "/openapi/v3/api/v1", "/version", "/apis/nope/v1", "/api/v2"}
	r.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	for _, p := range paths[:4] {
		b.step(Step{Name: "discovery " + p, Req: Request{Method: "GET", Path: p}, Reduce: reducerFor(p)})
	}
	b.step(Step{Name: "aggregated discovery of the groups", Req: Request{Method: "GET", Path: "/apis", Accept: "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"}, Reduce: "aggregated"})
}

// reducerFor names the part of a discovery or OpenAPI document compared (reduce.go).
func reducerFor(path string) string {
	switch {
	case path == "/api" || path == "/apis":
		return "groups"
	case path == "/openapi/v2":
		return "openapi-v2"
	case path == "/openapi/v3":
		return "openapi-v3-paths"
	case strings.HasPrefix(path, "/openapi/v3/"):
		return "openapi-v3-schemas"
	case path == "/version":
		return "version"
	}
	return "resources"
}

const widgets = "/apis/realapi.example.com/v1/namespaces/{ns}/widgets"

// WidgetCRD is the CustomResourceDefinition the crd family uses, installed on both sides
// before the sequences run.
const WidgetCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.realapi.example.com"},
"spec":{"group":"realapi.example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget","listKind":"WidgetList","shortNames":["wd"]},
"versions":[{"name":"v1","served":true,"storage":true,
"subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas","labelSelectorPath":".status.selector"}},
"additionalPrinterColumns":[{"name":"Size","type":"integer","jsonPath":".spec.size"},{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}],
"schema":{"openAPIV3Schema":{"type":"object","properties":{
"spec":{"type":"object","properties":{"size":{"type":"integer","minimum":0,"default":1},"replicas":{"type":"integer"},"color":{"type":"string","enum":["red","blue"]},"tags":{"type":"array","items":{"type":"string"},"x-kubernetes-list-type":"set"}}},
"status":{"type":"object","properties":{"replicas":{"type":"integer"},"selector":{"type":"string"},"phase":{"type":"string"}}}}}}}]}}`

func widget(name string, rest string) string {
	return obj("realapi.example.com/v1", "Widget", name, "", nil, rest)
}

func genCRD(r *rand.Rand, b *builder) {
	b.step(Step{Name: "create a widget (defaulted)", Save: "w", Req: Request{Method: "POST", Path: widgets, Body: widget("w", `"spec":{"color":"red","unknown":1}`)}})
	b.step(Step{Name: "a widget out of its enum: Invalid", Req: Request{Method: "POST", Path: widgets, Body: widget("bad", `"spec":{"color":"green"}`)}})
	b.step(Step{Name: "a widget with an unknown field, Strict", Req: Request{Method: "POST", Path: widgets + "?fieldValidation=Strict", Body: widget("strict", `"spec":{"other":1}`)}})
	b.step(Step{Name: "status through the main resource is ignored", Req: Request{Method: "PATCH", Path: widgets + "/w", ContentType: "application/merge-patch+json", Body: `{"status":{"phase":"Up"},"spec":{"size":3}}`}})
	b.step(Step{Name: "status through /status", Req: Request{Method: "PATCH", Path: widgets + "/w/status", ContentType: "application/merge-patch+json", Body: `{"status":{"phase":"Up","replicas":2,"selector":"a=b"},"spec":{"size":9}}`}})
	b.get("its scale", widgets+"/w/scale")
	b.step(Step{Name: "scale it", Req: Request{Method: "PATCH", Path: widgets + "/w/scale", ContentType: "application/merge-patch+json", Body: fmt.Sprintf(`{"spec":{"replicas":%d}}`, 1+r.IntN(5))}})
	b.step(Step{Name: "apply to it", Req: Request{Method: "PATCH", Path: widgets + "/w?fieldManager=applier", ContentType: "application/apply-patch+yaml", Body: widget("w", `"spec":{"tags":["a","b"]}`)}})
	b.step(Step{Name: "strategic merge patch of a custom resource: 415", Req: Request{Method: "PATCH", Path: widgets + "/w", ContentType: "application/strategic-merge-patch+json", Body: `{}`}})
	b.step(Step{Name: "a table of widgets", Req: Request{Method: "GET", Path: widgets, Accept: tableAccept}})
	b.get("list widgets", widgets)
	b.step(Step{Name: "delete the widget", Req: Request{Method: "DELETE", Path: widgets + "/w"}})
}

func genNamespace(r *rand.Rand, b *builder) {
	b.get("get the namespace", "/api/v1/namespaces/{ns}")
	// A finalizer holds the namespace in Terminating until the step that removes it, so the
	// steps between do not race the namespace controller.
	b.step(Step{Name: "a ConfigMap in it, held by a finalizer", NoCompare: true, Req: Request{Method: "POST", Path: cms,
		Body: strings.Replace(configMap("inside", nil, nil), `"metadata":{`, `"metadata":{"finalizers":["example.com/hold"],`, 1)}})
	b.step(Step{Name: "delete the namespace: Terminating", Req: Request{Method: "DELETE", Path: "/api/v1/namespaces/{ns}"}})
	b.step(Step{Name: "create in a terminating namespace: Forbidden", Req: Request{Method: "POST", Path: cms, Body: configMap("late", nil, nil)}})
	b.step(Step{Name: "the held ConfigMap is being deleted", Req: Request{Method: "GET", Path: cmPath("inside")}, Settle: "metadata.deletionTimestamp", SettleTo: "<present>"})
	b.step(Step{Name: "release it", Req: Request{Method: "PATCH", Path: cmPath("inside"), ContentType: "application/merge-patch+json", Body: `{"metadata":{"finalizers":null}}`}})
	b.step(Step{Name: "gone", Req: Request{Method: "GET", Path: "/api/v1/namespaces/{ns}"}, Settle: "metadata.name", SettleTo: "<absent>"})
	b.step(Step{Name: "create in a missing namespace: NotFound", Req: Request{Method: "POST", Path: "/api/v1/namespaces/nope-" + b.ns + "/configmaps", Body: configMap("x", nil, nil)}})
	b.step(Step{Name: "delete kube-system: Forbidden", Req: Request{Method: "DELETE", Path: "/api/v1/namespaces/kube-system?dryRun=All"}})
	if r.IntN(2) == 0 {
		b.step(Step{Name: "a namespace with an invalid name", Req: Request{Method: "POST", Path: "/api/v1/namespaces", Body: obj("v1", "Namespace", "Bad_Name", "", nil, "")}})
	}
}

func genGC(r *rand.Rand, b *builder) {
	policy := pick(r, "Background", "Foreground", "Orphan")
	b.step(Step{Name: "create the owner", Save: "owner", Req: Request{Method: "POST", Path: cms, Body: configMap("owner", seqLabels(b), nil)}})
	b.step(Step{Name: "create a dependent", Req: Request{Method: "POST", Path: cms, Body: strings.Replace(configMap("dependent", seqLabels(b), nil), `"metadata":{`,
		`"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"{uid:owner}","blockOwnerDeletion":true}],`, 1)}})
	b.step(Step{Name: "delete the owner, " + policy, Req: Request{Method: "DELETE", Path: cmPath("owner"), Body: fmt.Sprintf(`{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":%q}`, policy)}})
	b.step(Step{Name: "the owner goes", Req: Request{Method: "GET", Path: cmPath("owner")}, Settle: "metadata.name", SettleTo: "<absent>"})
	if policy == "Orphan" {
		b.step(Step{Name: "the dependent stays, without the reference", Req: Request{Method: "GET", Path: cmPath("dependent")}, Settle: "metadata.ownerReferences", SettleTo: "<absent>"})
	} else {
		b.step(Step{Name: "the dependent goes", Req: Request{Method: "GET", Path: cmPath("dependent")}, Settle: "metadata.name", SettleTo: "<absent>"})
	}
	b.step(Step{Name: "an owner reference without uid: Invalid", Req: Request{Method: "POST", Path: cms, Body: strings.Replace(configMap("noid", nil, nil), `"metadata":{`,
		`"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner"}],`, 1)}})
}

func genValidation(r *rand.Rand, b *builder) {
	mode := pick(r, "Strict", "Warn", "Ignore")
	body := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"v","labels":{"seq":"{ns}"}},"data":{"k":"v"},"bogus":1,"spec":{"x":1}}`
	b.step(Step{Name: "create with unknown fields, " + mode, Req: Request{Method: "POST", Path: cms + "?fieldValidation=" + mode, Body: body}})
	dup := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"},"data":{"k":"1","k":"2"}}`
	b.step(Step{Name: "duplicate fields, " + mode, Req: Request{Method: "POST", Path: cms + "?fieldValidation=" + mode, Body: dup}})
	b.step(Step{Name: "an unknown fieldValidation", Req: Request{Method: "POST", Path: cms + "?fieldValidation=Loud", Body: configMap("l", nil, nil)}})
	b.step(Step{Name: "a field of the wrong type", Req: Request{Method: "POST", Path: cms, Body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"w"},"data":{"k":1}}`}})
	b.step(Step{Name: "a body that is not JSON", Req: Request{Method: "POST", Path: cms, Body: `{"apiVersion":`}})
	b.step(Step{Name: "a body of another kind", Req: Request{Method: "POST", Path: cms, Body: obj("v1", "Secret", "s", "", nil, "")}})
	b.step(Step{Name: "a Deployment without a selector: Invalid", Req: Request{Method: "POST", Path: deploys, Body: obj("apps/v1", "Deployment", "nosel", "", nil, `"spec":{"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}}`)}})
	b.step(Step{Name: "a Secret with data that is not base64", Req: Request{Method: "POST", Path: "/api/v1/namespaces/{ns}/secrets", Body: obj("v1", "Secret", "b64", "", nil, `"data":{"k":"%%%"}`)}})
	b.step(Step{Name: "an unknown content type: 415", Req: Request{Method: "POST", Path: cms, ContentType: "text/plain", Body: configMap("t", nil, nil)}})
	b.step(Step{Name: "an unknown resource: NotFound", Req: Request{Method: "GET", Path: "/api/v1/namespaces/{ns}/gizmos"}})
	b.step(Step{Name: "an unsupported verb: MethodNotAllowed", Req: Request{Method: "POST", Path: cmPath("x"), Body: configMap("x", nil, nil)}})
}

func genDryRun(r *rand.Rand, b *builder) {
	b.step(Step{Name: "dry-run create", Req: Request{Method: "POST", Path: cms + "?dryRun=All", Body: configMap("dry", seqLabels(b), map[string]string{"k": "v"})}})
	b.get("not stored", cmPath("dry"))
	b.step(Step{Name: "create", Save: "c", Req: Request{Method: "POST", Path: cms, Body: configMap("dry", seqLabels(b), map[string]string{"k": "v"})}})
	b.step(Step{Name: "dry-run patch", Req: Request{Method: "PATCH", Path: cmPath("dry") + "?dryRun=All", ContentType: "application/merge-patch+json", Body: `{"data":{"k":"changed"}}`}})
	b.step(Step{Name: "dry-run apply", Req: Request{Method: "PATCH", Path: cmPath("dry") + "?dryRun=All&fieldManager=dry", ContentType: "application/apply-patch+yaml", Body: configMap("dry", nil, map[string]string{"other": "1"})}})
	b.step(Step{Name: "dry-run delete", Req: Request{Method: "DELETE", Path: cmPath("dry") + "?dryRun=All"}})
	b.get("unchanged", cmPath("dry"))
	b.step(Step{Name: "an unknown dryRun value", Req: Request{Method: "POST", Path: cms + "?dryRun=Some", Body: configMap("dry2", nil, nil)}})
	if r.IntN(2) == 0 {
		b.step(Step{Name: "dry-run create with generateName", Req: Request{Method: "POST", Path: cms + "?dryRun=All", Body: configMap("drygen-", nil, nil)}})
	}
}
