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
	revErr := func(i int) error { _, err := s.ReplicaRevision(i); return err }
	for _, c := range []struct {
		call string
		err  error
		want string
	}{
		{"SetReplicaLag(5, 1s)", s.SetReplicaLag(5, time.Second), "fakeapi: SetReplicaLag(5): no replica 5: the server has 1"},
		{"SetReplicaLag(-1, 1s)", s.SetReplicaLag(-1, time.Second), "fakeapi: SetReplicaLag(-1): no replica -1"},
		{"SetReplicaLag(0, -1s)", s.SetReplicaLag(0, -time.Second), "fakeapi: SetReplicaLag(0, -1s): negative lag"},
		{"FreezeReplica(1)", s.FreezeReplica(1), "fakeapi: FreezeReplica(1): no replica 1"},
		{"ResumeReplica(1)", s.ResumeReplica(1), "fakeapi: ResumeReplica(1): no replica 1"},
		{"StepReplica(1, 5)", s.StepReplica(1, 5), "fakeapi: StepReplica(1): no replica 1"},
		{"SetReplicaReady(1, false)", s.SetReplicaReady(1, false), "fakeapi: SetReplicaReady(1): no replica 1"},
		{"ReinitReplica(1, 0)", s.ReinitReplica(1, 0), "fakeapi: ReinitReplica(1): no replica 1"},
		{"ReinitReplica(0, -1s)", s.ReinitReplica(0, -time.Second), "fakeapi: ReinitReplica(0, -1s): negative not-ready time"},
		{"RouteNext(1)", s.RouteNext(1), "fakeapi: RouteNext(1): no replica 1"},
		{"ReplicaRevision(1)", revErr(1), "fakeapi: ReplicaRevision(1): no replica 1"},
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
	}{{"SetReplicaLag(0, 0)", s.SetReplicaLag(0, 0)}, {"FreezeReplica(0)", s.FreezeReplica(0)}, {"ResumeReplica(0)", s.ResumeReplica(0)}, {"RouteNext(0)", s.RouteNext(0)}} {
		if c.err != nil {
			t.Errorf("%s on the server's one replica: %v", c.call, c.err)
		}
	}
}
