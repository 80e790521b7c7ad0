package controlplane

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestStatusEqualAsByPrint compares statusEqual, which prints the statuses it can into kept
// buffers, with statusEqualByPrint (fmt) on random pairs: the stand-in's own desired statuses,
// written or behind, against statuses as a controller might write them, with values fmt
// prints alike ("3" and 3), values with spaces and colons, floats, nil, nested maps, conditions
// without a reason or with a non-string status, keys in any order. Both must answer alike, and
// both answers and both ways (kept buffers, fmt) must occur.
func TestStatusEqualAsByPrint(t *testing.T) {
	ws := &WorkloadStatus{}
	var p statusPrinter
	scratch := newStatusScratch()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	resources := []string{"deployments", "replicasets", "statefulsets"}
	answers, printed := map[bool]int{}, map[bool]int{}
	for seed := uint64(1); seed <= 3000; seed++ {
		rnd := rand.New(rand.NewPCG(seed, 17))
		u := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": "web", "namespace": "default", "generation": rnd.Int64N(3) + 1},
			"spec":     map[string]any{"replicas": rnd.Int64N(3)},
		}}
		res := resources[rnd.IntN(len(resources))]
		stuck, exceeded := rnd.IntN(3) == 0, rnd.IntN(2) == 0
		want := ws.desired(res, u, now, stuck, exceeded, nil)
		// The status built only to be compared, in a scratch the previous seeds filled: what a
		// comparison reads of it is the written status's.
		compared := ws.desired(res, u, now, stuck, exceeded, &scratch)
		if got, exp := reduced(compared), reduced(want); !reflect.DeepEqual(got, exp) {
			t.Fatalf("seed %d: the status compared is %v, the one written %v", seed, got, exp)
		}
		written := want
		if rnd.IntN(3) == 0 { // two statuses a controller might write
			want = randomStatus(rnd, want)
		}
		var have map[string]any
		switch rnd.IntN(4) {
		case 0: // none yet
		case 1: // written at another time, maybe of another generation or state
			other := ws.desired(res, u, now.Add(time.Duration(rnd.IntN(2))*time.Hour), rnd.IntN(3) == 0, rnd.IntN(2) == 0, nil)
			have = other
		default: // written by someone else, in parts
			have = randomStatus(rnd, want)
		}
		u.Object["status"] = have
		got := statusEqual(&p, u, want)
		if exp := statusEqualByPrint(have, want); got != exp {
			t.Fatalf("seed %d: statusEqual(%v, %v) = %v, by fmt %v", seed, have, want, got, exp)
		}
		if !reflect.DeepEqual(want, written) { // compared is written's unless want was replaced
			compared = ws.desired(res, u, now, stuck, exceeded, &scratch)
			if statusEqual(&p, u, compared) != statusEqualByPrint(have, compared) {
				t.Fatalf("seed %d: statusEqual with a compared status differs from fmt's", seed)
			}
		} else if statusEqual(&p, u, compared) != got {
			t.Fatalf("seed %d: the status compared and the one written compare differently with %v", seed, have)
		}
		_, okHave := p.print(nil, have)
		_, okWant := p.print(nil, want)
		answers[got]++
		printed[okHave && okWant]++
	}
	// What fmt prints alike and DeepEqual tells apart, and the reverse.
	cond := func(reason any) map[string]any {
		c := map[string]any{"type": "Available", "status": "True", "lastUpdateTime": "t"}
		if reason != nil {
			c["reason"] = reason
		}
		return c
	}
	for i, c := range []struct {
		have, want map[string]any
		equal      bool
	}{
		{map[string]any{"replicas": 3, "observedGeneration": int64(2)}, map[string]any{"replicas": int64(3), "observedGeneration": int64(2)}, true},
		{map[string]any{"replicas": "3"}, map[string]any{"replicas": int64(3)}, true},
		{map[string]any{"replicas": 3.0}, map[string]any{"replicas": int64(3)}, true},
		{map[string]any{"replicas": "3 "}, map[string]any{"replicas": int64(3)}, false},
		{map[string]any{"a": "1 b:2"}, map[string]any{"a": int64(1), "b": int64(2)}, true},
		{nil, map[string]any{}, true},
		{map[string]any{"conditions": []any{}}, map[string]any{"conditions": "x"}, true},
		{map[string]any{"conditions": []any{cond(nil)}}, map[string]any{"conditions": []any{cond("")}}, false},
		{map[string]any{"conditions": []any{cond(nil)}}, map[string]any{"conditions": []any{cond("<nil>")}}, true},
		{map[string]any{"conditions": []any{cond("A"), cond("B")}}, map[string]any{"conditions": []any{cond("A AvailableTrueB")}}, true},
		{map[string]any{"conditions": []any{cond("A")}, "x": true}, map[string]any{"conditions": []any{cond("A")}, "x": "true"}, true},
	} {
		u := &unstructured.Unstructured{Object: map[string]any{"status": c.have}}
		if c.have == nil {
			u.Object = map[string]any{}
		}
		if got := statusEqual(&p, u, c.want); got != c.equal || statusEqualByPrint(c.have, c.want) != c.equal {
			t.Errorf("case %d: statusEqual(%v, %v) = %v, by fmt %v, want %v", i, c.have, c.want, got, statusEqualByPrint(c.have, c.want), c.equal)
		}
	}
	t.Logf("answers %v, printed without fmt %v", answers, printed)
	if answers[true] < 100 || answers[false] < 100 || printed[true] < 100 || printed[false] < 100 {
		t.Errorf("too few of a kind: answers %v, printed without fmt %v", answers, printed)
	}
}

// reduced is st as statusEqual reads it: its conditions' type, status and reason only.
func reduced(st map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range st {
		if k != "conditions" {
			out[k] = v
			continue
		}
		var conds []any
		for _, c := range v.([]any) {
			m := c.(map[string]any)
			conds = append(conds, [3]any{m["type"], m["status"], m["reason"]})
		}
		out[k] = conds
	}
	return out
}

// randomStatus returns a status made of want's fields, each kept, dropped or changed, and
// fields of its own.
func randomStatus(rnd *rand.Rand, want map[string]any) map[string]any {
	values := []any{int64(3), int64(-1), int64(0), "3", "", "a b", "x:y", "]", true, false, 3.0, 2.5, nil, 3,
		map[string]any{"a": int64(1)}, []any{}, []any{"a"}}
	st := map[string]any{}
	for k, v := range want {
		switch rnd.IntN(6) {
		case 0: // dropped
		case 1:
			st[k] = values[rnd.IntN(len(values))]
		default:
			st[k] = v
		}
	}
	if rnd.IntN(4) == 0 {
		keys := []string{"collisionCount", "x y", "a:b", "", "conditions", "observedGeneration"}
		st[keys[rnd.IntN(len(keys))]] = values[rnd.IntN(len(values))]
	}
	if conds, ok := st["conditions"].([]any); ok && len(conds) > 0 && rnd.IntN(3) == 0 {
		first, _ := conds[0].(map[string]any)
		c := map[string]any{}
		for k, v := range first {
			c[k] = v
		}
		switch rnd.IntN(5) {
		case 0:
			delete(c, "reason")
		case 1:
			c["status"] = true
		case 2:
			c["type"] = "Available True"
		case 3:
			c["lastUpdateTime"] = "later"
		default:
			c["reason"] = ""
		}
		conds = append([]any{c}, conds[1:]...)
		if rnd.IntN(2) == 0 {
			conds = append(conds, "not a map")
		}
		st["conditions"] = conds
	}
	return st
}
