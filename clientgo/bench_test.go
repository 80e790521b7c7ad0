package clientgo_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/internal/cputime"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
)

// The benchmarks run the same typed-clientset calls against informersim's REST front (over the
// in-process transport: JSON encoding, HTTP request and response, client-go's decoding) and
// against client-go's fake clientset (an in-memory object tracker, no serialisation):
//
//	cd clientgo && go test -run='^$' -bench=. -benchtime=3x .
//
// The ratio of the two is the price of going through the real client stack. cpu-ns/op and
// cpu-ns/event are the process's CPU time (all goroutines, GC included), steadier than wall
// time on a shared machine.

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

// benchClients returns the two clientsets under comparison, both holding objs.
func benchClients(b *testing.B, objs []runtime.Object) map[string]kubernetes.Interface {
	b.Helper()
	srv, cs := newServer(b, fakeapi.Config{MaxWatchEvents: 1 << 20})
	ctx := context.Background()
	for _, o := range objs {
		var err error
		switch o := o.(type) {
		case *corev1.Pod:
			_, err = cs.CoreV1().Pods(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		case *corev1.ConfigMap:
			_, err = cs.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	_ = srv
	// NewSimpleClientset, not NewClientset: the latter adds server-side-apply field tracking,
	// about 25 times slower per update (3.1 ms per watched update at 2,000 events).
	return map[string]kubernetes.Interface{"informersim": cs, "client-go-fake": fake.NewSimpleClientset(objs...)}
}

// BenchmarkList10000Pods: one LIST of 10,000 pods across namespaces per op.
func BenchmarkList10000Pods(b *testing.B) {
	objs := make([]runtime.Object, 10000)
	for i := range objs {
		objs[i] = benchPod(i)
	}
	clients := benchClients(b, objs)
	for _, name := range []string{"informersim", "client-go-fake"} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			cpuStart, cpuOK := cputime.Process()
			for b.Loop() {
				l, err := clients[name].CoreV1().Pods("").List(ctx, metav1.ListOptions{})
				if err != nil || len(l.Items) != 10000 {
					b.Fatalf("list: %v, %d items", err, len(l.Items))
				}
			}
			if cpuEnd, ok := cputime.Process(); ok && cpuOK {
				b.ReportMetric(float64(cpuEnd-cpuStart)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// BenchmarkWatch100000Events: per op, a typed watch on ConfigMaps receives 100,000 MODIFIED
// events, produced by updates through the same typed clientset in batches of 50 (the fake's
// watch channel holds 100 events and panics beyond).
func BenchmarkWatch100000Events(b *testing.B) {
	const events, batch, objects = 100000, 50, 100
	objs := make([]runtime.Object, objects)
	for i := range objs {
		objs[i] = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%03d", i), Namespace: "bench"}, Data: map[string]string{"n": "0"}}
	}
	clients := benchClients(b, objs)
	for _, name := range []string{"informersim", "client-go-fake"} {
		b.Run(name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cms := clients[name].CoreV1().ConfigMaps("bench")
			current := make([]*corev1.ConfigMap, objects)
			for i := range current {
				c, err := cms.Get(ctx, fmt.Sprintf("cm-%03d", i), metav1.GetOptions{})
				if err != nil {
					b.Fatal(err)
				}
				current[i] = c
			}
			n := 1 // the stored data is "0": an update to it would be a no-op, which emits no event
			b.ReportAllocs()
			cpuStart, cpuOK := cputime.Process()
			for b.Loop() {
				// From the current RV: a watch without one starts with an ADDED per object.
				start, err := cms.List(ctx, metav1.ListOptions{Limit: 1})
				if err != nil {
					b.Fatal(err)
				}
				w, err := cms.Watch(ctx, metav1.ListOptions{ResourceVersion: start.ResourceVersion})
				if err != nil {
					b.Fatal(err)
				}
				for got := 0; got < events; {
					for range batch {
						c := current[n%objects]
						c.Data["n"] = fmt.Sprint(n)
						c.ResourceVersion = "" // unconditional, so the fake (which does not bump RVs) and the front agree
						if current[n%objects], err = cms.Update(ctx, c, metav1.UpdateOptions{}); err != nil {
							b.Fatal(err)
						}
						n++
					}
					for range batch {
						ev, ok := <-w.ResultChan()
						if !ok || ev.Type != watch.Modified {
							b.Fatalf("event %d: %v %v", got, ev.Type, ok)
						}
						got++
					}
				}
				w.Stop()
			}
			if cpuEnd, ok := cputime.Process(); ok && cpuOK {
				b.ReportMetric(float64(cpuEnd-cpuStart)/float64(b.N*events), "cpu-ns/event")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
		})
	}
}
