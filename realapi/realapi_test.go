package realapi

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// binDir is where scripts/realcluster.sh builds the control plane.
func binDir() string {
	if d := os.Getenv("REALCLUSTER_CACHE"); d != "" {
		return filepath.Join(d, "bin")
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "informersim", "realcluster", "v1.37.2", "bin")
}

// realSide is the real control plane: the one $REALCLUSTER_ETCD and $KUBECONFIG name when
// both are set, else one this test starts with scripts/realcluster.sh and stops when it ends.
// Without the binaries the test is skipped, saying so and how to build them.
func realSide(t *testing.T) *Side {
	t.Helper()
	ctx := context.Background()
	if os.Getenv(EnvEtcd) != "" && os.Getenv(EnvKubeconfig) != "" {
		s, err := NewReal(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	var missing []string
	for _, b := range []string{"etcd", "kube-apiserver", "kube-controller-manager"} {
		if _, err := os.Stat(filepath.Join(binDir(), b)); err != nil {
			missing = append(missing, b)
		}
	}
	if len(missing) > 0 {
		msg := fmt.Sprintf("realapi: SKIP: the real control plane is not built (%s missing under %s); "+
			"build it with `make realcluster-build` (about 26 minutes cold on 2 cores, from the Go module proxy), then run `make compare-real`",
			strings.Join(missing, ", "), binDir())
		fmt.Fprintln(os.Stderr, msg)
		t.Skip(msg)
	}
	script, err := filepath.Abs("../scripts/realcluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	start := exec.Command(script, "start")
	start.Stdout, start.Stderr = os.Stderr, os.Stderr
	if err := start.Run(); err != nil {
		t.Fatalf("realcluster.sh start: %v", err)
	}
	t.Cleanup(func() {
		stop := exec.Command(script, "stop")
		stop.Stdout, stop.Stderr = os.Stderr, os.Stderr
		if err := stop.Run(); err != nil {
			t.Errorf("realcluster.sh stop: %v", err)
		}
	})
	out, err := exec.Command(script, "env").Output()
	if err != nil {
		t.Fatalf("realcluster.sh env: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			t.Setenv(k, v)
		}
	}
	s, err := NewReal(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// onlySequences keeps the sequences whose names (family#index) match REALAPI_ONLY, a regular
// expression; all of them when it is unset. The sequences are drawn first, so a kept one is the
// one a full run sends.
func onlySequences(t *testing.T, seqs []Sequence) ([]Sequence, bool) {
	expr := os.Getenv("REALAPI_ONLY")
	if expr == "" {
		return seqs, false
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		t.Fatalf("REALAPI_ONLY=%q: %v", expr, err)
	}
	var kept []Sequence
	for _, s := range seqs {
		if re.MatchString(s.Name) {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		t.Fatalf("REALAPI_ONLY=%q matches none of the %d sequences' names (family#index, as crud#0)", expr, len(seqs))
	}
	return kept, true
}

// TestAgainstRealControlPlane is the differential suite: REALAPI_SEQUENCES sequences (510 by
// default) drawn from REALAPI_SEED (1) run on the real control plane and on informersim, and
// every difference must be one of Known, each of which must show. REALAPI_ONLY keeps the
// sequences whose names match it; such a run does not judge rows that explained nothing (most
// cannot show in a few sequences) and says so.
func TestAgainstRealControlPlane(t *testing.T) {
	real := realSide(t)
	ours, err := NewInformersim(1)
	if err != nil {
		t.Fatal(err)
	}
	defer ours.Close()
	ctx := context.Background()
	for _, s := range []*Side{real, ours} {
		if err := Prepare(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	seed := uint64(envInt(t, "REALAPI_SEED", 1))
	// A label of this run in the namespaces: a control plane left running keeps the objects of
	// the runs before.
	run := strconv.FormatInt(time.Now().Unix()%(36*36*36*36), 36)
	seqs, err := GenerateRun(seed, envInt(t, "REALAPI_SEQUENCES", 510), run)
	if err != nil {
		t.Fatal(err)
	}
	seqs, filtered := onlySequences(t, seqs)
	rep, err := RunSuite(ctx, real, ours, seqs, Known, func(done int, r *Report) {
		if done%100 == 0 {
			t.Logf("realapi: %d/%d sequences, %d differences so far", done, len(seqs), len(r.Differences))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	text := rep.String()
	fmt.Print(text)
	if out := os.Getenv("REALAPI_REPORT"); out != "" {
		var all strings.Builder
		all.WriteString(text)
		for _, d := range rep.Differences {
			fmt.Fprintf(&all, "%s\n", d)
		}
		if err := os.WriteFile(out, []byte(all.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
	if n := len(rep.Unexplained()); n > 0 {
		t.Errorf("%d differences no known entry explains (seed %d; REALAPI_REPORT=FILE writes them all)", n, seed)
	}
	switch {
	case filtered:
		t.Logf("realapi: REALAPI_ONLY ran %d of the sequences: rows that explained nothing are not judged", len(seqs))
	case len(rep.Stale) > 0:
		t.Errorf("known differences that explained nothing: %v", rep.Stale)
	}
}
