//go:build ignore

// benchratio reads `go test -bench` output holding BenchmarkEndToEnd (compare/) and prints, for
// each handler count, the events per second and allocations per event of every host and the
// ratios world / client-go and goroutine driver / client-go. With several runs of a benchmark
// (-count), each figure is the median of the runs.
//
// Usage, from the repository root:
//
//	cd compare && go test -run='^$' -bench=EndToEnd -count=3 . | go run ../scripts/benchratio.go
//
// It exits 1 when the input holds no BenchmarkEndToEnd result, so a broken benchmark cannot
// print an empty table.
package main

import (
	"bufio"
	"fmt"
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
	events := map[key][]float64{}
	allocs := map[key][]float64{}
	var handlerCounts []int
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := sc.Text()
		fmt.Println(line) // pass the raw output through
		m := lineRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		h, _ := strconv.Atoi(m[2])
		k := key{m[1], h}
		if !slices.Contains(handlerCounts, h) {
			handlerCounts = append(handlerCounts, h)
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
			}
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
	if len(events) == 0 {
		fmt.Fprintln(os.Stderr, "benchratio: no BenchmarkEndToEnd results in the input")
		os.Exit(1)
	}
	slices.Sort(handlerCounts)
	fmt.Println()
	fmt.Println("End to end (median of runs): events/s and allocs/event per host; ratios of events/s")
	fmt.Printf("%-9s %12s %12s %12s %10s %10s %10s %14s %14s\n", "handlers",
		"client-go/s", "goroutine/s", "world/s", "cg alloc", "gor alloc", "world alloc", "world/cg", "goroutine/cg")
	for _, h := range handlerCounts {
		cg, gor, wd := median(events[key{"clientgo", h}]), median(events[key{"goroutine", h}]), median(events[key{"world", h}])
		fmt.Printf("%-9d %12.0f %12.0f %12.0f %10.1f %10.1f %10.1f %14s %14s\n", h, cg, gor, wd,
			median(allocs[key{"clientgo", h}]), median(allocs[key{"goroutine", h}]), median(allocs[key{"world", h}]),
			ratio(wd, cg), ratio(gor, cg))
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

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", a/b)
}
