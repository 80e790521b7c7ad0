package clientgo_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	goruntime "runtime"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/informersim/informersim/clientgo"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/internal/benchrun"
	"github.com/informersim/informersim/internal/cputime"
	"github.com/informersim/informersim/internal/fastpath"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/applyconfigurations"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/klog/v2"
)

// The benchmarks run the same typed-clientset calls against informersim's REST front (over the
// in-process transport: encoding, HTTP request and response, client-go's decoding) in protobuf
// (client-go's default for the built-in kinds) and in JSON, and against client-go's fake
// clientset (an in-memory object tracker, no serialisation), in one run:
//
//	cd clientgo && go test -run='^$' -bench='List|WatchedUpdate' -benchmem .
//
// The ratio of the REST front to the fake is the price of going through the real client stack.
// cpu-ns/op and cpu-ns/event are the process's CPU time (all goroutines, GC included), steadier
// than wall time on a shared machine. The harness benchmarks (BenchmarkHarnessRun,
// BenchmarkHarnessSweep) measure whole runs of a controller in a world.

func benchPod(i int) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("pod-%05d", i), Namespace: fmt.Sprintf("ns-%d", i%10),
			Labels: map[string]string{"app": "bench", "shard": fmt.Sprint(i % 16)},
		},
		Spec: corev1.PodSpec{
			NodeName:   fmt.Sprintf("node-%d", i%50),
			Containers: []corev1.Container{{Name: "main", Image: "registry.example/app:v1", Args: []string{"--serve", "--port=8080"}}},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: fmt.Sprintf("10.0.%d.%d", i/250, i%250)},
	}
}

// benchHosts are the clientsets under comparison, in the order they are measured.
var benchHosts = []string{"protobuf", "json", "client-go-fake"}

// benchClients returns the clientsets under comparison, all holding objs: the REST front in
// protobuf and in JSON (one fake apiserver), and client-go's fake clientset.
func benchClients(b *testing.B, objs []runtime.Object) map[string]kubernetes.Interface {
	b.Helper()
	srv, err := fakeapi.New(fakeapi.Config{MaxWatchEvents: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := clientgo.RESTConfig(srv)
	if err != nil {
		b.Fatal(err)
	}
	pb, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	jsonCfg := *cfg
	jsonCfg.ContentType = "application/json"
	jsonCfg.AcceptContentTypes = "application/json"
	js, err := kubernetes.NewForConfig(&jsonCfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, o := range objs {
		switch o := o.(type) {
		case *corev1.Pod:
			_, err = pb.CoreV1().Pods(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ConfigMap:
			_, err = pb.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	// NewSimpleClientset, not NewClientset: the latter adds server-side-apply field tracking,
	// about 25 times slower per update (3.1 ms per watched update at 2,000 events).
	return map[string]kubernetes.Interface{"protobuf": pb, "json": js, "client-go-fake": fake.NewSimpleClientset(objs...)}
}

// reportCPU reports the process's CPU time since start per unit (op or event).
func reportCPU(b *testing.B, start time.Duration, startOK bool, per int, unit string) {
	if end, ok := cputime.Process(); ok && startOK {
		b.ReportMetric(float64(end-start)/float64(per), "cpu-ns/"+unit)
	}
}

// BenchmarkList10000Pods: one LIST of 10,000 pods across namespaces per op.
func BenchmarkList10000Pods(b *testing.B) {
	objs := make([]runtime.Object, 10000)
	for i := range objs {
		objs[i] = benchPod(i)
	}
	clients := benchClients(b, objs)
	for _, name := range benchHosts {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			// Each figure starts from a collected heap: the garbage of the set-up and of the
			// hosts measured before would otherwise be collected on this one's time.
			goruntime.GC()
			cpuStart, cpuOK := cputime.Process()
			for b.Loop() {
				l, err := clients[name].CoreV1().Pods("").List(ctx, metav1.ListOptions{})
				if err != nil || len(l.Items) != 10000 {
					b.Fatalf("list: %v, %d items", err, len(l.Items))
				}
			}
			reportCPU(b, cpuStart, cpuOK, b.N, "op")
		})
	}
	// The floor: what client-go does with the LIST's protobuf body whatever server sent it
	// (reading it, as Request.Do does, and decoding it with the clientset's own decoder), so
	// what no front faithful to kube-apiserver, which sends the same bytes, goes below.
	b.Run("floor", func(b *testing.B) {
		ctx := context.Background()
		body, err := clients["protobuf"].CoreV1().RESTClient().Get().Resource("pods").SetHeader("Accept", runtime.ContentTypeProtobuf).Do(ctx).Raw()
		if err != nil || !bytes.HasPrefix(body, []byte("k8s\x00")) {
			b.Fatalf("the LIST's body: %v, %.8q", err, body)
		}
		codecs := scheme.Codecs.WithoutConversion()
		info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeProtobuf)
		if !ok {
			b.Fatal("no protobuf serializer in client-go's scheme")
		}
		dec := codecs.DecoderToVersion(info.Serializer, corev1.SchemeGroupVersion)
		b.ReportAllocs()
		// Each figure starts from a collected heap: the garbage of the set-up and of the
		// hosts measured before would otherwise be collected on this one's time.
		goruntime.GC()
		cpuStart, cpuOK := cputime.Process()
		for b.Loop() {
			data, err := io.ReadAll(bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			obj, _, err := dec.Decode(data, nil, &corev1.PodList{})
			if l, ok := obj.(*corev1.PodList); err != nil || !ok || len(l.Items) != 10000 {
				b.Fatalf("decoding: %v, %T", err, obj)
			}
		}
		reportCPU(b, cpuStart, cpuOK, b.N, "op")
	})
}

// BenchmarkWatchedUpdate: per op, one update of a ConfigMap through the typed clientset, and its
// MODIFIED event received by every one of 1 or 100 typed watches. Updates go in batches of 50
// before the watches are drained (client-go's fake holds 100 events per watch and panics beyond),
// so the figure is throughput, not the latency of one round trip. allocs/op and cpu-ns/event
// include the update itself (encoding, the apiserver's write, managedFields, the answer).
func BenchmarkWatchedUpdate(b *testing.B) {
	const batch, objects = 50, 100
	for _, watchers := range []int{1, 100} {
		b.Run(fmt.Sprintf("watchers=%d", watchers), func(b *testing.B) {
			objs := make([]runtime.Object, objects)
			for i := range objs {
				objs[i] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i), Namespace: "bench"}, Data: map[string]string{"n": "0"}}
			}
			clients := benchClients(b, objs)
			for _, name := range benchHosts {
				b.Run(name, func(b *testing.B) { benchWatchedUpdates(b, clients[name], watchers, batch, objects) })
			}
		})
	}
}

func benchWatchedUpdates(b *testing.B, cs kubernetes.Interface, watchers, batch, objects int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cms := cs.CoreV1().ConfigMaps("bench")
	current := make([]*corev1.ConfigMap, objects)
	for i := range current {
		c, err := cms.Get(ctx, fmt.Sprintf("cm-%03d", i), metav1.GetOptions{})
		if err != nil {
			b.Fatal(err)
		}
		current[i] = c
	}
	// From the current RV: a watch without one starts with an ADDED per object.
	start, err := cms.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		b.Fatal(err)
	}
	ws := make([]watch.Interface, watchers)
	for i := range ws {
		if ws[i], err = cms.Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion}); err != nil {
			b.Fatal(err)
		}
		defer ws[i].Stop()
	}
	// Each run of the benchmark continues from the data the last left: an update to the
	// stored value would be a no-op, which emits no event.
	n := int(time.Now().UnixNano() % 1e9)
	pending := 0
	drain := func() {
		for _, w := range ws {
			for got := range pending {
				ev, ok := <-w.ResultChan()
				if !ok || ev.Type != watch.Modified {
					b.Fatalf("event %d: %v %v", got, ev.Type, ok)
				}
			}
		}
		pending = 0
	}
	b.ReportAllocs()
	// Each figure starts from a collected heap: the garbage of the set-up and of the
	// hosts measured before would otherwise be collected on this one's time.
	goruntime.GC()
	cpuStart, cpuOK := cputime.Process()
	for b.Loop() {
		c := current[n%objects]
		c.Data["n"] = fmt.Sprint(n)
		c.ResourceVersion = "" // unconditional, so the fake (which does not bump RVs) and the front agree
		if current[n%objects], err = cms.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
			b.Fatal(err)
		}
		n++
		if pending++; pending == batch {
			drain()
		}
	}
	drain()
	reportCPU(b, cpuStart, cpuOK, b.N, "event")
}

// BenchmarkWatchedUpdateFloor: per op, the part of BenchmarkWatchedUpdate's protobuf update
// with one watcher that any server faithful to kube-apiserver makes the client and itself do,
// whatever else it does, and nothing else, in one goroutine: client-go encodes the changed
// ConfigMap in protobuf; the server decodes it into its Go type, runs apimachinery's field
// manager on the typed live and new objects as kube-apiserver's update handler does (the scheme
// as converter, defaulter and creater, the type converter of k8s.io/api's schemas), encodes the
// answer once and wraps the same bytes in the watch event; client-go decodes the answer, and the
// watch event and its object. Left out, so that this is a lower bound of what kube-apiserver
// costs: HTTP, admission and validation, the conversion to the internal version and back, the
// encoding for etcd and etcd itself, the watch cache, a second encoding of the watch event's
// object. The fake clientset does none of it; BenchmarkWatchedUpdate's ratio to the fake cannot
// go below this benchmark's CPU over the fake's.
func BenchmarkWatchedUpdateFloor(b *testing.B) {
	ser := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	enc := scheme.Codecs.EncoderForVersion(ser, corev1.SchemeGroupVersion)
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	fm, err := managedfields.NewDefaultFieldManager(applyconfigurations.NewTypeConverter(scheme.Scheme),
		scheme.Scheme, scheme.Scheme, scheme.Scheme, gvk, gvk.GroupVersion(), "", nil)
	if err != nil {
		b.Fatal(err)
	}
	const manager = "clientgo.test" // what the REST front derives from the benchmark's User-Agent
	decode := func(data []byte) *corev1.ConfigMap {
		obj, _, err := ser.Decode(data, nil, &corev1.ConfigMap{})
		if err != nil {
			b.Fatal(err)
		}
		return obj.(*corev1.ConfigMap)
	}
	// The live object as created by the same manager, as BenchmarkWatchedUpdate's are.
	created := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cm-000", Namespace: "bench", UID: "9f2b3c4d-0000-4000-8000-000000000001", ResourceVersion: "1", CreationTimestamp: metav1.Now()},
		Data:       map[string]string{"n": "0"},
	}
	live := fm.UpdateNoErrors(&corev1.ConfigMap{TypeMeta: created.TypeMeta}, created, manager).(*corev1.ConfigMap)
	current := live.DeepCopy() // the client's copy, as its last answer decoded it
	rv := 1
	var body, answer bytes.Buffer
	b.ReportAllocs()
	// Each figure starts from a collected heap: the garbage of the set-up and of the
	// hosts measured before would otherwise be collected on this one's time.
	goruntime.GC()
	cpuStart, cpuOK := cputime.Process()
	for b.Loop() {
		rv++
		// client-go: the typed client's request body.
		current.Data["n"] = fmt.Sprint(rv)
		current.ResourceVersion = ""
		body.Reset()
		if err := enc.Encode(current, &body); err != nil {
			b.Fatal(err)
		}
		// The server: decode, managedFields, the new version, one encoding for both the answer
		// and the watch event.
		obj := decode(body.Bytes())
		out, ok := fm.UpdateNoErrors(live, obj, manager).(*corev1.ConfigMap)
		if !ok {
			b.Fatal("the field manager returned another type")
		}
		out.ResourceVersion = fmt.Sprint(rv)
		answer.Reset()
		if err := enc.Encode(out, &answer); err != nil {
			b.Fatal(err)
		}
		event := metav1.WatchEvent{Type: string(watch.Modified), Object: runtime.RawExtension{Raw: answer.Bytes()}}
		frame, err := event.Marshal()
		if err != nil {
			b.Fatal(err)
		}
		live = out
		// client-go: the answer, then the watch event and its object.
		current = decode(answer.Bytes())
		var got metav1.WatchEvent
		if err := got.Unmarshal(frame); err != nil {
			b.Fatal(err)
		}
		if ev := decode(got.Object.Raw); ev.ResourceVersion != out.ResourceVersion || len(ev.ManagedFields) != 1 {
			b.Fatalf("the event holds version %s with %d managedFields entries", ev.ResourceVersion, len(ev.ManagedFields))
		}
	}
	reportCPU(b, cpuStart, cpuOK, b.N, "event")
}

// quietKlog discards client-go's log lines (the injected faults make its reflectors log) for
// the benchmark, so that they do not break its result lines.
func quietKlog(b *testing.B) {
	klog.SetLogger(logr.Discard())
	b.Cleanup(klog.ClearLogger)
}

// BenchmarkHarnessRun: one whole run per op of the mirror controller, wired by its own main
// (client-go's reflector in protobuf), in a world with a generated workload and faults.
func BenchmarkHarnessRun(b *testing.B) {
	quietKlog(b)
	seed := uint64(0)
	b.ReportAllocs()
	cpuStart, cpuOK := cputime.Process()
	for b.Loop() {
		seed++
		if !benchrun.Test(b, "HarnessRun", func(t *testing.T) { harnessRun(t, seed) }) {
			b.Fatalf("seed %d failed", seed)
		}
	}
	reportCPU(b, cpuStart, cpuOK, b.N, "op")
}

// BenchmarkTricks: what each speed trick (internal/fastpath) buys in BenchmarkHarnessRun's runs
// (seeds 1 to 4, each op), as CPU with the trick taken out over CPU with every trick in, each
// pair of timings a few milliseconds apart (benchrun.Tricks); docs/performance.md quotes it:
//
//	cd clientgo && go test -run='^$' -bench=Tricks -benchtime=120x .
func BenchmarkTricks(b *testing.B) {
	quietKlog(b)
	benchrun.Tricks(b, benchrun.HarnessTricks(), func() {
		for seed := uint64(1); seed <= 4; seed++ {
			if !benchrun.Test(b, "HarnessRun", func(t *testing.T) { harnessRun(t, seed) }) {
				b.Fatalf("seed %d failed", seed)
			}
		}
	})
}

// BenchmarkTricksREST: what each speed trick of the REST front and the apiserver buys in a
// client-go client's requests, as BenchmarkTricks measures it; the work of each timing, in
// protobuf and then in JSON: a LIST of 2,000 pods, and 50 updates of ConfigMaps through the
// typed clientset with their MODIFIED events read from a watch:
//
//	cd clientgo && go test -run='^$' -bench=TricksREST -benchtime=100x .
func BenchmarkTricksREST(b *testing.B) {
	const pods, configMaps, updates = 2000, 50, 50
	objs := make([]runtime.Object, 0, pods+configMaps)
	for i := range pods {
		objs = append(objs, benchPod(i))
	}
	for i := range configMaps {
		objs = append(objs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i), Namespace: "bench"}, Data: map[string]string{"n": "0"}})
	}
	clients := benchClients(b, objs)
	ctx := context.Background()
	n := 0 // each update sets a value the ConfigMap never held: a no-op sends no event
	benchrun.Tricks(b, benchrun.HarnessTricks(), func() {
		for _, host := range []string{"protobuf", "json"} {
			cs := clients[host]
			if l, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != pods {
				b.Fatalf("%s: list: %v", host, err)
			}
			cms := cs.CoreV1().ConfigMaps("bench")
			from, err := cms.List(ctx, metav1.ListOptions{Limit: 1}) // a watch from now: no ADDED for what is there
			if err != nil {
				b.Fatalf("%s: list: %v", host, err)
			}
			w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: from.ResourceVersion})
			if err != nil {
				b.Fatalf("%s: watch: %v", host, err)
			}
			for range updates {
				n++
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", n%configMaps), Namespace: "bench"}, Data: map[string]string{"n": fmt.Sprint(n)}}
				if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
					b.Fatalf("%s: update: %v", host, err)
				}
			}
			for got := range updates {
				if ev, ok := <-w.ResultChan(); !ok || ev.Type != watch.Modified {
					b.Fatalf("%s: event %d: %v %v", host, got, ev.Type, ok)
				}
			}
			w.Stop()
		}
	})
}

// BenchmarkTricksList10000Pods: what the REST front's tricks buy in BenchmarkList10000Pods's
// LIST, in protobuf and in JSON, as BenchmarkTricks measures it:
//
//	cd clientgo && go test -run='^$' -bench=TricksList10000Pods -benchtime=25x .
func BenchmarkTricksList10000Pods(b *testing.B) {
	objs := make([]runtime.Object, 10000)
	for i := range objs {
		objs[i] = benchPod(i)
	}
	clients := benchClients(b, objs)
	for _, host := range []string{"protobuf", "json"} {
		b.Run(host, func(b *testing.B) {
			benchrun.Tricks(b, []fastpath.Trick{fastpath.SharedEncodings}, func() {
				if l, err := clients[host].CoreV1().Pods("").List(context.Background(), metav1.ListOptions{}); err != nil || len(l.Items) != 10000 {
					b.Fatalf("list: %v", err)
				}
			})
		})
	}
}

func harnessRun(t *testing.T, seed uint64) {
	cfg := mirrorConfig(seed, 2, nil)
	cfg.Controller = clientgo.Main(mirrorMain)
	if _, err := clientgo.Run(t, cfg); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkHarnessSweep: seeds per second of a sweep of harness runs (BenchmarkHarnessRun's)
// with as many runs at once as GOMAXPROCS. To see what a second core buys, run the test binary
// with GOMAXPROCS=1 and then =2 in the environment (not -cpu: see internal/benchrun):
//
//	cd clientgo && go test -c -o /tmp/clientgo.test . && for p in 1 2 1 2; do
//		GOMAXPROCS=$p /tmp/clientgo.test -test.run='^$' -test.bench=HarnessSweep -test.benchtime=40x; done
func BenchmarkHarnessSweep(b *testing.B) {
	quietKlog(b)
	benchrun.Sweep(b, "HarnessSweep", harnessRun)
}
