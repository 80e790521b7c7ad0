package main

import (
	"strings"
	"testing"
)

// Goal: the demo prints the header and trace, replays byte for byte, and bad input exits 2 with
// a message.
func TestDemo(t *testing.T) {
	var out1, out2, errb strings.Builder
	if code := run([]string{"demo", "-seed=3", "-policy=pct"}, &out1, &errb); code != 0 {
		t.Fatalf("demo exit %d, stderr %q", code, errb.String())
	}
	run([]string{"demo", "-seed=3", "-policy=pct"}, &out2, &errb)
	if out1.String() != out2.String() {
		t.Errorf("two runs of seed 3 printed different output")
	}
	for _, want := range []string{"seed=3\npolicy=pct\n", "inf1/h3: OnAdd", "converged: ", "trace sha256 "} {
		if !strings.Contains(out1.String(), want) {
			t.Errorf("demo output does not contain %q:\n%s", want, out1.String())
		}
	}
	var js strings.Builder
	if code := run([]string{"demo", "-json"}, &js, &errb); code != 0 || !strings.HasPrefix(js.String(), `{"step":`) {
		t.Errorf("demo -json exit %d, output starts %q", code, js.String()[:min(40, len(js.String()))])
	}
	for _, args := range [][]string{{}, {"bogus"}, {"demo", "-policy=lifo"}, {"demo", "-seed=-1"}, {"demo", "extra"}} {
		var o, e strings.Builder
		if code := run(args, &o, &e); code != 2 || e.Len() == 0 {
			t.Errorf("run(%q) = exit %d, stderr %q; want exit 2 with a message", args, code, e.String())
		}
	}
}
