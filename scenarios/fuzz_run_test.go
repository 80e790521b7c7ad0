package scenarios_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/informersim/informersim/scenarios"
)

// runDirectives are the directives FuzzRun strings together; %d takes a small number drawn
// from the input (0 to 15), so a directive may name an informer, handler, replica or queue
// that does not exist, come before the world does, or come twice.
var runDirectives = []string{
	"world seed=%d replicas=2",
	"create name=o%d label:app=web",
	"update name=o%d label:app=db",
	"delete name=o%d",
	"patch name=o%d patchType=merge patch={\"data\":{\"k\":\"v\"}}",
	"informer name=inf%d ns=default",
	"informer name=inf%d mode=watch-list queue=deltafifo",
	"handler informer=inf%d name=h1",
	"handler informer=inf1 name=h%d mutates",
	"start informer=inf%d",
	"stop informer=inf%d",
	"restart informer=inf%d as=inf9",
	"remove-handler informer=inf1 name=h%d",
	"run for=%dms",
	"run steps=%d",
	"run until=converged budget=%ds",
	"run until=synced informer=inf%d budget=10s",
	"run until=event event=inf%d/reflector:watching budget=10s",
	"close-watches code=410",
	"fail-next verb=list code=%d29",
	"lag-replica replica=%d by=1s",
	"freeze-replica replica=%d",
	"resume-replica replica=%d",
	"reinit-replica replica=%d not-ready=1s",
	"route-next replica=%d",
	"compact",
	"burn-revisions n=%d",
	"trigger-bookmarks",
	"workqueue name=q%d informer=inf1 workers=1 work=10ms fail=1",
	"cache informer=inf%d",
	"log handler=inf1/h%d",
	"queue informer=inf%d",
	"rv informer=inf%d",
	"requests client=inf%d",
	"objects",
	"oracles",
	"client name=c informer=inf%d",
	"crash-restart client=c",
	"conflict client=c",
}

// FuzzRun: a file of any sequence of directives, valid or not for the scenario, runs without a
// panic: it is refused with an error naming the file ("scenarios: ..."), or it runs, passing
// or failing, and a run has a seed and a trace hash.
func FuzzRun(f *testing.F) {
	f.Add([]byte{5, 1, 7, 1, 9, 1, 1, 2, 15, 3})
	f.Add([]byte{0, 2, 5, 1, 9, 1, 20, 1, 13, 50, 18, 0, 15, 60})
	f.Add([]byte{5, 1, 8, 3, 9, 1, 2, 2, 15, 60, 35, 0})
	f.Add([]byte{5, 1, 9, 1, 21, 1, 22, 1, 23, 1, 25, 0, 15, 60})
	f.Fuzz(func(t *testing.T, program []byte) {
		if len(program) > 40 {
			program = program[:40]
		}
		var b strings.Builder
		for i := 0; i+1 < len(program); i += 2 {
			d := runDirectives[int(program[i])%len(runDirectives)]
			if strings.Contains(d, "%d") {
				d = fmt.Sprintf(d, program[i+1]%16)
			}
			b.WriteString(d + "\n----\n\n")
		}
		res, err := scenarios.Run("fuzz", b.String(), scenarios.Options{})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "scenarios: fuzz") {
				t.Fatalf("error %q does not name the file\n%s", err, b.String())
			}
			return
		}
		if len(res.Hash) != 64 {
			t.Fatalf("a run with no trace hash (%q):\n%s", res.Hash, b.String())
		}
	})
}
