package fakeapi

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestParseRequestOfNothing: parseRequest's shortcut for a LIST without options gives what its
// steps give, for every resource of the table, and a watch or any option still takes the steps.
func TestParseRequestOfNothing(t *testing.T) {
	s, _ := newTestServer(t, nil)
	if len(s.resources) == 0 {
		t.Fatal("no resources")
	}
	for gvr, res := range s.resources {
		got, err := parseRequest(res, metav1.ListOptions{}, false)
		want, wantErr := parseOptions(res, metav1.ListOptions{}, false)
		if err != nil || wantErr != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%v: parseRequest = %+v, %v; its steps give %+v, %v", gvr, got, err, want, wantErr)
		}
		watch, _ := parseRequest(res, metav1.ListOptions{}, true)
		if reflect.DeepEqual(watch, got) {
			t.Errorf("%v: a watch was parsed as a LIST of everything", gvr)
		}
		zero := int64(0)
		for _, opts := range []metav1.ListOptions{{ResourceVersion: "0"}, {TimeoutSeconds: &zero}, {TypeMeta: metav1.TypeMeta{Kind: "ListOptions"}}} {
			got, err := parseRequest(res, opts, false)
			want, wantErr := parseOptions(res, opts, false)
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(err, wantErr) {
				t.Errorf("%v %+v: parseRequest = %+v, %v; its steps give %+v, %v", gvr, opts, got, err, want, wantErr)
			}
		}
	}
}
