package fakeapi

import (
	"strings"
	"testing"
	"time"
)

// Goal: every replica method refuses a replica the server does not have (and a negative
// duration) with an error naming the index and how many replicas there are, instead of
// panicking; a refused call changes nothing.
func TestReplicaMethodsRefuseBadInput(t *testing.T) {
	s, _ := newTestServer(t, nil) // one replica
	revErr := func(i int) error { _, err := s.Replicas().Revision(i); return err }
	for _, c := range []struct {
		call string
		err  error
		want string
	}{
		{"Replicas.SetLag(5, 1s)", s.Replicas().SetLag(5, time.Second), "fakeapi: Replicas.SetLag(5): no replica 5: the server has 1"},
		{"Replicas.SetLag(-1, 1s)", s.Replicas().SetLag(-1, time.Second), "fakeapi: Replicas.SetLag(-1): no replica -1"},
		{"Replicas.SetLag(0, -1s)", s.Replicas().SetLag(0, -time.Second), "fakeapi: Replicas.SetLag(0, -1s): negative lag"},
		{"Replicas.Freeze(1)", s.Replicas().Freeze(1), "fakeapi: Replicas.Freeze(1): no replica 1"},
		{"Replicas.Resume(1)", s.Replicas().Resume(1), "fakeapi: Replicas.Resume(1): no replica 1"},
		{"Replicas.Step(1, 5)", s.Replicas().Step(1, 5), "fakeapi: Replicas.Step(1): no replica 1"},
		{"Replicas.SetReady(1, false)", s.Replicas().SetReady(1, false), "fakeapi: Replicas.SetReady(1): no replica 1"},
		{"Replicas.Reinit(1, 0)", s.Replicas().Reinit(1, 0), "fakeapi: Replicas.Reinit(1): no replica 1"},
		{"Replicas.Reinit(0, -1s)", s.Replicas().Reinit(0, -time.Second), "fakeapi: Replicas.Reinit(0, -1s): negative not-ready time"},
		{"Replicas.RouteNext(1)", s.Replicas().RouteNext(1), "fakeapi: Replicas.RouteNext(1): no replica 1"},
		{"Replicas.Revision(1)", revErr(1), "fakeapi: Replicas.Revision(1): no replica 1"},
	} {
		if c.err == nil || !strings.HasPrefix(c.err.Error(), c.want) {
			t.Errorf("%s = %v, want an error starting %q", c.call, c.err, c.want)
		}
	}
	// Nothing was queued or changed: the next list is served as before, by replica 0.
	if len(s.routes) != 0 || s.replicas[0].lag != 0 || s.replicas[0].frozen || s.replicas[0].notReady {
		t.Errorf("refused calls changed the server: routes %v, replica 0 %+v", s.routes, *s.replicas[0])
	}
	for _, c := range []struct {
		call string
		err  error
	}{{"Replicas.SetLag(0, 0)", s.Replicas().SetLag(0, 0)}, {"Replicas.Freeze(0)", s.Replicas().Freeze(0)}, {"Replicas.Resume(0)", s.Replicas().Resume(0)}, {"Replicas.RouteNext(0)", s.Replicas().RouteNext(0)}} {
		if c.err != nil {
			t.Errorf("%s on the server's one replica: %v", c.call, c.err)
		}
	}
}
