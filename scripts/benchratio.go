//go:build ignore

// benchratio reads `go test -bench` output holding BenchmarkEndToEnd (compare/) and prints, for
// each handler count, the events per second and allocations per event of every host and the
// ratios world / client-go and goroutine driver / client-go, by wall time (events/s) and by CPU
// time (cpu-ns/event, steadier on a shared machine). With several runs of a benchmark (-count,
// or the outputs of several alternating runs of a test binary concatenated), each figure is the
// median of the runs, and each ratio the median of the runs' own ratios: the k-th run of one
// host against the k-th run of the other, closest in time, so that a machine that slows down
// for a while moves both sides of a ratio and not only one.
//
// Usage, from the repository root:
//
//	cd compare && go test -run='^$' -bench=EndToEnd -count=3 . | go run ../scripts/benchratio.go
//
// When the input holds the writer alone (BenchmarkEndToEnd/writer/handlers=0), a second table
// subtracts its CPU time from each host's: what the host itself adds per event, and the ratios
// of those. The writer's update is the same for every host, so it bounds the first table's
// ratios; the second says how the hosts' own work compares.
//
// The REST front's benchmarks (clientgo/'s BenchmarkList10000Pods and BenchmarkWatchedUpdate,
// whose last name element is the host: protobuf, json or client-go-fake) get a table of their
// own: each host's CPU time and allocations per op, and its ratio to client-go's fake clientset
// measured in the same run; BenchmarkHarnessSweep, run with GOMAXPROCS=1 and =2 (its name
// then ends in -2), gets its seeds per second and the speed-up of the second core:
//
//	cd clientgo && go test -c -o /tmp/clientgo.test . && (/tmp/clientgo.test -test.run='^$' -test.bench='List|WatchedUpdate' -test.benchmem;
//		for p in 1 2; do GOMAXPROCS=$p /tmp/clientgo.test -test.run='^$' -test.bench=HarnessSweep -test.benchtime=40x; done) | go run ../scripts/benchratio.go
//
// BenchmarkWatchedUpdateFloor (run by the same -bench=WatchedUpdate) and BenchmarkList10000Pods/floor
// get a line each: the CPU and allocations of what a watched update and a LIST cost at least,
// their ratio to the fake's, and the protobuf front's ratio to the floor.
//
// It exits 1 when the input holds neither a BenchmarkEndToEnd nor a REST front result, so a
// broken benchmark cannot print an empty table.
package main

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// A result line looks like
//
//	BenchmarkEndToEnd/world/handlers=4-2  2000  144482 ns/op  202.7 allocs/event  6921 events/s ...
var lineRE = regexp.MustCompile(`^BenchmarkEndToEnd/(\w+)/handlers=(\d+)(?:-\d+)?\s+\d+\s+(.*)$`)

type key struct {
	impl     string
	handlers int
}

func main() {
	e2e := newEndToEnd()
	rest := newRESTResults()
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := sc.Text()
		fmt.Println(line) // pass the raw output through
		rest.add(strings.TrimSpace(line))
		e2e.add(strings.TrimSpace(line))
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
	if len(e2e.events) == 0 && rest.empty() {
		fmt.Fprintln(os.Stderr, "benchratio: no BenchmarkEndToEnd or REST front results in the input")
		os.Exit(1)
	}
	rest.print()
	if len(e2e.events) == 0 {
		return
	}
	slices.Sort(e2e.handlerCounts)
	e2e.printHosts()
	e2e.printOwnCosts()
}

// endToEnd holds BenchmarkEndToEnd's figures, each run's in input order, per host and handler
// count.
type endToEnd struct {
	events, allocs, cpu map[key][]float64
	handlerCounts       []int
}

func newEndToEnd() *endToEnd {
	return &endToEnd{events: map[key][]float64{}, allocs: map[key][]float64{}, cpu: map[key][]float64{}}
}

// add takes the figures of line if it is a BenchmarkEndToEnd result.
func (e *endToEnd) add(line string) {
	events, allocs, cpu := e.events, e.allocs, e.cpu
	m := lineRE.FindStringSubmatch(line)
	if m == nil {
		return
	}
	h, _ := strconv.Atoi(m[2])
	k := key{m[1], h}
	if !slices.Contains(e.handlerCounts, h) {
		e.handlerCounts = append(e.handlerCounts, h)
	}
	f := strings.Fields(m[3])
	for i := 0; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			continue
		}
		switch f[i+1] {
		case "events/s":
			events[k] = append(events[k], v)
		case "allocs/event":
			allocs[k] = append(allocs[k], v)
		case "cpu-ns/event":
			cpu[k] = append(cpu[k], v)
		}
	}
}

// printHosts prints the first table: each host's figures and the ratios to client-go.
func (e *endToEnd) printHosts() {
	events, allocs, cpu, handlerCounts := e.events, e.allocs, e.cpu, e.handlerCounts
	fmt.Println()
	fmt.Println("End to end (median of runs): events/s of wall time, allocs/event and CPU µs/event per host;")
	fmt.Println("ratios of events/s by wall time and by CPU time (world / client-go, goroutine driver / client-go),")
	fmt.Println("each the median of the runs' own ratios")
	fmt.Printf("%-8s %11s %11s %11s %8s %8s %8s %8s %8s %8s %9s %9s %9s %9s\n", "handlers",
		"cg ev/s", "gor ev/s", "world ev/s", "cg al", "gor al", "world al", "cg µs", "gor µs", "world µs",
		"world/cg", "gor/cg", "world/cg", "gor/cg")
	fmt.Printf("%-8s %11s %11s %11s %8s %8s %8s %8s %8s %8s %9s %9s %9s %9s\n", "", "", "", "", "", "", "", "", "", "",
		"(wall)", "(wall)", "(cpu)", "(cpu)")
	for _, h := range handlerCounts {
		if h == 0 { // the writer alone: the second table
			continue
		}
		cg, gor, wd := median(events[key{"clientgo", h}]), median(events[key{"goroutine", h}]), median(events[key{"world", h}])
		ccg, cgor, cwd := median(cpu[key{"clientgo", h}]), median(cpu[key{"goroutine", h}]), median(cpu[key{"world", h}])
		ev, c := func(impl string) []float64 { return events[key{impl, h}] }, func(impl string) []float64 { return cpu[key{impl, h}] }
		fmt.Printf("%-8d %11.0f %11.0f %11.0f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %9s %9s %9s %9s\n", h, cg, gor, wd,
			median(allocs[key{"clientgo", h}]), median(allocs[key{"goroutine", h}]), median(allocs[key{"world", h}]),
			ccg/1000, cgor/1000, cwd/1000,
			pairedRatio(ev("world"), ev("clientgo")), pairedRatio(ev("goroutine"), ev("clientgo")),
			pairedRatio(c("clientgo"), c("world")), pairedRatio(c("clientgo"), c("goroutine")))
	}
}

// printOwnCosts prints the second table, when the writer ran alone: each host's CPU time less
// the writer's, and the ratios of those.
func (e *endToEnd) printOwnCosts() {
	cpu, handlerCounts := e.cpu, e.handlerCounts
	writer := median(cpu[key{"writer", 0}])
	if writer == 0 {
		return
	}
	fmt.Println()
	fmt.Printf("The writer alone (no watcher): %.1f CPU µs/event. Each host's own CPU µs/event (host - writer)\n", writer/1000)
	fmt.Println("and the ratios of those (client-go / world, client-go / goroutine driver)")
	fmt.Printf("%-8s %8s %8s %8s %9s %9s\n", "handlers", "cg µs", "gor µs", "world µs", "cg/world", "cg/gor")
	for _, h := range handlerCounts {
		if h == 0 {
			continue
		}
		// Each run's own cost is its host's minus the writer's of the same round (the k-th runs).
		own := func(impl string) []float64 {
			host, w := cpu[key{impl, h}], cpu[key{"writer", 0}]
			if len(host) == 0 { // the host was not run
				return nil
			}
			if len(host) != len(w) {
				return []float64{median(host) - writer}
			}
			out := make([]float64, len(host))
			for i := range host {
				out[i] = host[i] - w[i]
			}
			return out
		}
		cg, gor, wd := own("clientgo"), own("goroutine"), own("world")
		fmt.Printf("%-8d %8.1f %8.1f %8.1f %9s %9s\n", h, median(cg)/1000, median(gor)/1000, median(wd)/1000,
			pairedRatio(cg, wd), pairedRatio(cg, gor))
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// pairedRatio is the median of a[k]/b[k] over the runs when both hold as many, and the ratio of
// their medians otherwise.
func pairedRatio(a, b []float64) string {
	if len(a) == 0 || len(a) != len(b) {
		return ratio(median(a), median(b))
	}
	rs := make([]float64, 0, len(a))
	for k := range a {
		if a[k] <= 0 || b[k] <= 0 {
			return "n/a"
		}
		rs = append(rs, a[k]/b[k])
	}
	return fmt.Sprintf("%.2fx", median(rs))
}

func ratio(a, b float64) string {
	if a <= 0 || b <= 0 { // missing, or a difference lost in the noise
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// A REST front result line looks like
//
//	BenchmarkWatchedUpdate/watchers=100/protobuf-2  5000  ...  812 allocs/op  95000 cpu-ns/event
//	BenchmarkHarnessSweep-2  40  ...  21.5 seeds/s
var (
	restRE  = regexp.MustCompile(`^(Benchmark\w+(?:/[\w=.-]+)*)/(protobuf|json|client-go-fake)(?:-\d+)?\s+\d+\s+(.*)$`)
	sweepRE = regexp.MustCompile(`^BenchmarkHarnessSweep(?:-(\d+))?\s+\d+\s+(.*)$`)
	runRE   = regexp.MustCompile(`^Benchmark(HarnessRun|FakeClientsetRun)(?:-\d+)?\s+\d+\s+(.*)$`)
	floorRE = regexp.MustCompile(`^(BenchmarkWatchedUpdateFloor|BenchmarkList10000Pods/floor)(?:-\d+)?\s+\d+\s+(.*)$`)
)

// restHosts are the REST front's hosts in the order of the table; the last is the reference.
var restHosts = []string{"protobuf", "json", "client-go-fake"}

type restKey struct{ group, host string }

// restResults are the REST front's figures by benchmark and host, in the order first seen.
type restResults struct {
	groups []string
	cpu    map[restKey][]float64 // cpu-ns per op or per event
	allocs map[restKey][]float64
	unit   map[string]string
	sweep  map[int][]float64 // seeds/s by GOMAXPROCS
	// floors are the floor benchmarks' figures by the benchmark they bound: what a watched
	// update and a LIST cost any server faithful to kube-apiserver, and client-go, at least.
	floors map[string]*floorResults
	// runs are whole runs of one controller (examples/samplecontroller): in the harness
	// (HarnessRun) and on client-go's fake clientsets (FakeClientsetRun), wall and CPU ns per run.
	runWall, runCPU map[string][]float64
}

// floorResults are one floor benchmark's CPU (per event or op) and allocations, run by run.
type floorResults struct{ cpu, allocs []float64 }

// floorOf names, for each floor benchmark, the benchmark it bounds (whose fake it is compared
// with) and what it measures.
var floorOf = map[string]struct{ bounds, what string }{
	"BenchmarkWatchedUpdateFloor": {"BenchmarkWatchedUpdate/watchers=1",
		"watched update floor (BenchmarkWatchedUpdateFloor: client-go's codecs, kube-apiserver's field manager on typed objects)"},
	"BenchmarkList10000Pods/floor": {"BenchmarkList10000Pods",
		"LIST floor (BenchmarkList10000Pods/floor: client-go reading and decoding the LIST's protobuf body, nothing else)"},
}

func newRESTResults() *restResults {
	return &restResults{cpu: map[restKey][]float64{}, allocs: map[restKey][]float64{}, unit: map[string]string{}, sweep: map[int][]float64{}, floors: map[string]*floorResults{},
		runWall: map[string][]float64{}, runCPU: map[string][]float64{}}
}

func (r *restResults) empty() bool {
	return len(r.groups) == 0 && len(r.sweep) == 0 && len(r.floors) == 0 && len(r.runCPU) == 0
}

func (r *restResults) add(line string) {
	if m := sweepRE.FindStringSubmatch(line); m != nil {
		procs := 1
		if m[1] != "" {
			procs, _ = strconv.Atoi(m[1])
		}
		for f := fields(m[2]); len(f) > 0; f = f[1:] {
			if f[0].unit == "seeds/s" {
				r.sweep[procs] = append(r.sweep[procs], f[0].v)
			}
		}
		return
	}
	if m := runRE.FindStringSubmatch(line); m != nil {
		for _, f := range fields(m[2]) {
			switch f.unit {
			case "ns/op":
				r.runWall[m[1]] = append(r.runWall[m[1]], f.v)
			case "cpu-ns/op":
				r.runCPU[m[1]] = append(r.runCPU[m[1]], f.v)
			}
		}
		return
	}
	if m := floorRE.FindStringSubmatch(line); m != nil {
		fl := r.floors[m[1]]
		if fl == nil {
			fl = &floorResults{}
			r.floors[m[1]] = fl
		}
		for _, f := range fields(m[2]) {
			switch f.unit {
			case "cpu-ns/event", "cpu-ns/op":
				fl.cpu = append(fl.cpu, f.v)
			case "allocs/op":
				fl.allocs = append(fl.allocs, f.v)
			}
		}
		return
	}
	m := restRE.FindStringSubmatch(line)
	if m == nil {
		return
	}
	k := restKey{m[1], m[2]}
	if !slices.Contains(r.groups, k.group) {
		r.groups = append(r.groups, k.group)
	}
	for _, f := range fields(m[3]) {
		switch f.unit {
		case "cpu-ns/op", "cpu-ns/event":
			r.cpu[k] = append(r.cpu[k], f.v)
			r.unit[k.group] = strings.TrimPrefix(f.unit, "cpu-ns/")
		case "allocs/op":
			r.allocs[k] = append(r.allocs[k], f.v)
		}
	}
}

type figure struct {
	v    float64
	unit string
}

// fields reads the "value unit" pairs of a result line's tail.
func fields(tail string) []figure {
	f := strings.Fields(tail)
	var out []figure
	for i := 0; i+1 < len(f); i += 2 {
		if v, err := strconv.ParseFloat(f[i], 64); err == nil {
			out = append(out, figure{v, f[i+1]})
		}
	}
	return out
}

func (r *restResults) print() {
	if len(r.groups) > 0 {
		fmt.Println()
		fmt.Println("REST front (median of runs): CPU µs per op (per event for watches) and allocs/op of each host,")
		fmt.Println("and its CPU ratio to client-go's fake clientset of the same run (the median of the runs' own ratios)")
		fmt.Printf("%-40s", "benchmark")
		for _, h := range restHosts {
			fmt.Printf(" %14s %10s", h+" µs", "allocs")
		}
		for _, h := range restHosts[:len(restHosts)-1] {
			fmt.Printf(" %9s", h)
		}
		fmt.Println()
		ref := restHosts[len(restHosts)-1]
		for _, g := range r.groups {
			fmt.Printf("%-40s", g+" /"+r.unit[g])
			for _, h := range restHosts {
				fmt.Printf(" %14.1f %10.0f", median(r.cpu[restKey{g, h}])/1000, median(r.allocs[restKey{g, h}]))
			}
			for _, h := range restHosts[:len(restHosts)-1] {
				fmt.Printf(" %9s", pairedRatio(r.cpu[restKey{g, h}], r.cpu[restKey{g, ref}]))
			}
			fmt.Println()
		}
		// Shared serialization: what 100 watchers cost against one, per update, in one run.
		one, hundred := "BenchmarkWatchedUpdate/watchers=1", "BenchmarkWatchedUpdate/watchers=100"
		if slices.Contains(r.groups, one) && slices.Contains(r.groups, hundred) {
			fmt.Print("100 watchers / 1 watcher, CPU per update:")
			for _, h := range restHosts {
				fmt.Printf(" %s %s", h, pairedRatio(r.cpu[restKey{hundred, h}], r.cpu[restKey{one, h}]))
			}
			fmt.Println()
		}
	}
	for _, name := range slices.Sorted(maps.Keys(r.floors)) {
		// A floor runs after the hosts in the same binary, so its k-th run pairs with the k-th
		// run of the fake in the benchmark it bounds.
		fl, of := r.floors[name], floorOf[name]
		fmt.Printf("%s: %.1f µs, %.0f allocs", of.what, median(fl.cpu)/1000, median(fl.allocs))
		if fake := r.cpu[restKey{of.bounds, "client-go-fake"}]; len(fake) > 0 {
			fmt.Printf(", %s client-go's fake (no front faithful to kube-apiserver goes below it)", pairedRatio(fl.cpu, fake))
		}
		if pb := r.cpu[restKey{of.bounds, "protobuf"}]; len(pb) > 0 {
			fmt.Printf("; the front in protobuf is %s the floor", pairedRatio(pb, fl.cpu))
		}
		fmt.Println()
	}
	if h, f := r.runCPU["HarnessRun"], r.runCPU["FakeClientsetRun"]; len(h) > 0 && len(f) > 0 {
		hw, fw := r.runWall["HarnessRun"], r.runWall["FakeClientsetRun"]
		fmt.Println()
		fmt.Println("One run of the controller under the workload (median of runs): in the harness, and on client-go's")
		fmt.Println("fake clientsets as its unit tests would run it (real time, no faults, no checks; BenchmarkFakeClientsetRun)")
		fmt.Printf("harness       %10.2f ms CPU %10.2f ms wall\n", median(h)/1e6, median(hw)/1e6)
		fmt.Printf("fake clients  %10.2f ms CPU %10.2f ms wall\n", median(f)/1e6, median(fw)/1e6)
		fmt.Printf("harness/fake  %10s CPU %10s wall\n", pairedRatio(h, f), pairedRatio(hw, fw))
	}
	if len(r.sweep) > 0 {
		fmt.Println()
		var procs []int
		for p := range r.sweep {
			procs = append(procs, p)
		}
		slices.Sort(procs)
		fmt.Println("Harness sweep: seeds per second by GOMAXPROCS (median of runs), and the speed-up over 1")
		for _, p := range procs {
			fmt.Printf("GOMAXPROCS=%d %8.1f seeds/s %8s\n", p, median(r.sweep[p]), ratio(median(r.sweep[p]), median(r.sweep[1])))
		}
	}
}
