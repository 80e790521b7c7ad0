package fakeapi

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informersim/informersim/internal/cputime"
)

// startCPU and reportCPU bracket a timed loop to report the process's CPU time per operation
// (cpu-ns/op) next to wall time, which moves with the load of a shared machine.
func startCPU() time.Duration {
	t, _ := cputime.Process()
	return t
}

func reportCPU(b *testing.B, start time.Duration) {
	if end, ok := cputime.Process(); ok && start > 0 {
		b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkCreate measures writes per second: one create per iteration, no watchers.
func BenchmarkCreate(b *testing.B) {
	s, _ := newTestServer(b, func(c *Config) { c.MaxRecords = -1 })
	rc := s.Resource(cmGVR).Namespace("ns")
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		if _, err := rc.Create(bg, cm("ns", "o-"+strconv.Itoa(i), nil), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}

// BenchmarkUpdate measures updates of one object (the log and version history grow and are
// trimmed by MaxLogEntries).
func BenchmarkUpdate(b *testing.B) { benchUpdates(b, false, 0) }

// BenchmarkUpdateCompacted is BenchmarkUpdate on a server whose history is compacted every 1024
// writes, as the periodic compactor would (BenchmarkUpdate's clock never moves, so it keeps
// every version): the difference between the two is the cost of a history that only grows
// (each version a write keeps is fresh memory, and the collector marks all of it).
func BenchmarkUpdateCompacted(b *testing.B) { benchUpdates(b, false, 1024) }

// BenchmarkUpdateRV is BenchmarkUpdate through UpdateRV, which builds no copy of the written
// object for the caller: the difference between the two is the cost of that copy.
func BenchmarkUpdateRV(b *testing.B) { benchUpdates(b, true, 0) }

// benchUpdates updates one ConfigMap b.N times, each time with a new label: through UpdateRV
// (keeping the caller's object and setting its new resourceVersion) or Update (continuing from
// the answer), compacting the history every compactEvery writes when that is not 0.
func benchUpdates(b *testing.B, rvOnly bool, compactEvery int) {
	s, _ := newTestServer(b, func(c *Config) { c.MaxRecords = -1 })
	rc := s.Resource(cmGVR).Namespace("ns")
	cur := mustCreate(b, s, cmGVR, cm("ns", "a", nil))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		cur.SetLabels(map[string]string{"i": strconv.Itoa(i)})
		if rvOnly {
			rv, err := rc.UpdateRV(bg, cur, metav1.UpdateOptions{})
			if err != nil {
				b.Fatal(err)
			}
			cur.SetResourceVersion(rv)
		} else {
			var err error
			if cur, err = rc.Update(bg, cur, metav1.UpdateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		if compactEvery > 0 && i%compactEvery == compactEvery-1 {
			if err := s.Faults().Compact(s.Revision()); err != nil {
				b.Fatal(err)
			}
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}

// BenchmarkDelete measures deletes per second: one delete of a ConfigMap per iteration, no
// watchers (the objects are created before the timer starts).
func BenchmarkDelete(b *testing.B) {
	s, _ := newTestServer(b, func(c *Config) { c.MaxRecords = -1 })
	rc := s.Resource(cmGVR).Namespace("ns")
	names := make([]string, b.N)
	for i := range names {
		names[i] = "o-" + strconv.Itoa(i)
		if _, err := rc.Create(bg, cm("ns", names[i], nil), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		if err := rc.Delete(bg, names[i], metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
}

// BenchmarkList100k lists 100,000 objects (deep copies included) at RV="" and RV="0".
func BenchmarkList100k(b *testing.B) {
	s, _ := newTestServer(b, func(c *Config) { c.MaxRecords = -1 })
	rc := s.Resource(cmGVR).Namespace("ns")
	for i := 0; i < 100000; i++ {
		if _, err := rc.Create(bg, cm("ns", fmt.Sprintf("o-%06d", i), nil), metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	for _, rv := range []string{"", "0"} {
		b.Run("rv="+rv, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				l, err := s.list(cmGVR, "", metav1.ListOptions{ResourceVersion: rv})
				if err != nil || len(l.Items) != 100000 {
					b.Fatalf("%v, %d items", err, len(l.Items))
				}
			}
		})
	}
}

// BenchmarkWatchFanout100 measures one write dispatched to 100 watchers, each pulling its event.
func BenchmarkWatchFanout100(b *testing.B) {
	s, _ := newTestServer(b, func(c *Config) { c.MaxRecords = -1 })
	var ws []*Watcher
	for i := 0; i < 100; i++ {
		ws = append(ws, mustWatch(b, s, cmGVR, "", metav1.ListOptions{ResourceVersion: "1"}))
	}
	rc := s.Resource(cmGVR).Namespace("ns")
	cur := mustCreate(b, s, cmGVR, cm("ns", "a", nil))
	for _, w := range ws {
		w.Next()
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		cur.SetLabels(map[string]string{"i": strconv.Itoa(i)})
		var err error
		if cur, err = rc.Update(bg, cur, metav1.UpdateOptions{}); err != nil {
			b.Fatal(err)
		}
		for _, w := range ws {
			if _, ok := w.Next(); !ok {
				b.Fatal("no event")
			}
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkMemoryPerObject reports the heap bytes per stored object (a small ConfigMap with
// labels), measured after a GC, including log entries and version history.
func BenchmarkMemoryPerObject(b *testing.B) {
	const n = 20000
	for i := 0; i < b.N; i++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s, _ := newTestServer(b, func(c *Config) { c.MaxRecords = -1 })
		rc := s.Resource(cmGVR).Namespace("ns")
		for j := 0; j < n; j++ {
			if _, err := rc.Create(bg, cm("ns", fmt.Sprintf("o-%06d", j), map[string]string{"app": "x"}), metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/object")
		runtime.KeepAlive(s)
	}
}
