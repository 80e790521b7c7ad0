package fakeapi

import (
	"encoding/json"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// FuzzListWatchOptions feeds arbitrary list/watch options, object bodies and patches to a server
// holding a few objects. Malformed input must get a StatusError (400/404/409/410/422/429/504),
// never a panic, and the server must stay consistent (list RV never behind any item RV, the
// revision only grows).
func FuzzListWatchOptions(f *testing.F) {
	f.Add("", "", int64(0), "", "", "", byte(0), []byte(`{"metadata":{"name":"x"}}`), []byte(`{"data":{"a":"b"}}`))
	f.Add("0", "NotOlderThan", int64(500), "", "app=x", "metadata.name=a", byte(3), []byte(`{"metadata":{"generateName":"g-"}}`), []byte(`[{"op":"add","path":"/data/z","value":1}]`))
	f.Add("3", "Exact", int64(1), "", "", "", byte(7), []byte(`{"metadata":{"name":"BAD_name","labels":{"-":"x"}}}`), []byte(`[{"op":"remove","path":"/metadata"}]`))
	f.Add("99999999999999999999", "", int64(-1), "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MiwibnMiOiJucyIsInN0YXJ0IjoiYSJ9", "x in (", "spec.x=y", byte(255), []byte(`{"metadata":{"name":5}}`), []byte(`null`))
	f.Add("2", "", int64(2), "", "", "", byte(16), []byte(`{"metadata":{"name":"y","finalizers":["a/b"]}}`), []byte(`{"metadata":{"finalizers":null}}`))
	f.Fuzz(func(t *testing.T, rv, rvm string, limit int64, cont, labelSel, fieldSel string, flags byte, body, patch []byte) {
		s, _ := newTestServer(t, func(c *Config) { c.Replicas = 2; c.Routing = RoutingRoundRobin })
		for _, n := range []string{"a", "b", "c"} {
			mustCreate(t, s, cmGVR, cm("ns", n, map[string]string{"app": "x"}))
		}
		if flags&1 != 0 {
			s.Replicas().Freeze(1)
		}
		if flags&2 != 0 {
			s.Faults().Compact(3)
		}
		opts := metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatch(rvm), Limit: limit,
			Continue: cont, LabelSelector: labelSel, FieldSelector: fieldSel, AllowWatchBookmarks: flags&4 != 0}
		if flags&8 != 0 {
			opts.SendInitialEvents = ptr(flags&16 != 0)
		}
		checkErr := func(what string, err error) {
			if err == nil {
				return
			}
			if _, ok := err.(apierrors.APIStatus); !ok {
				t.Fatalf("%s: error %v (%T) is not a StatusError", what, err, err)
			}
		}
		l, err := s.list(cmGVR, "ns", opts)
		checkErr("list", err)
		if err == nil {
			lrv, _ := parseUint(l.GetResourceVersion())
			for _, it := range l.Items {
				if irv, _ := parseUint(it.GetResourceVersion()); irv > lrv {
					t.Fatalf("item RV %d above list RV %d", irv, lrv)
				}
			}
		}
		w, err := s.OpenWatch(cmGVR, "ns", opts)
		checkErr("watch", err)
		var m map[string]any
		if json.Unmarshal(body, &m) == nil && m != nil {
			u := &unstructured.Unstructured{Object: m}
			before := s.Revision()
			_, err := s.Resource(cmGVR).Namespace("ns").Create(bg, u, metav1.CreateOptions{})
			checkErr("create", err)
			_, err = s.Resource(cmGVR).Namespace("ns").Update(bg, u, metav1.UpdateOptions{})
			checkErr("update", err)
			if s.Revision() < before {
				t.Fatalf("revision went back")
			}
		}
		pt := types.MergePatchType
		if flags&32 != 0 {
			pt = types.JSONPatchType
		}
		_, err = s.Resource(cmGVR).Namespace("ns").Patch(bg, "a", pt, patch, metav1.PatchOptions{})
		checkErr("patch", err)
		if w != nil {
			for i := 0; i < 100; i++ {
				if _, ok := w.Next(); !ok {
					break
				}
			}
			w.Stop()
		}
	})
}

func parseUint(s string) (uint64, error) {
	var n uint64
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, apierrors.NewBadRequest("not a number")
		}
		n = n*10 + uint64(c-'0')
	}
	return n, nil
}
