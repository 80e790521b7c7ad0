package fakeapi

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
)

// TestNewZeroConfig checks that the zero Config works and that New fills defaults on a copy.
func TestNewZeroConfig(t *testing.T) {
	var cfg Config
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Clock != nil || cfg.Rand != nil || cfg.Resources != nil {
		t.Errorf("New mutated the caller's Config: %+v", cfg)
	}
	got := s.Config()
	if _, ok := got.Clock.(clock.RealClock); !ok || got.Rand == nil || got.Replicas != 1 ||
		got.CompactionInterval != DefaultCompactionInterval || got.MaxWatchEvents != DefaultMaxWatchEvents ||
		got.Routing != RoutingPrimary || got.WatchTimeout != WatchTimeoutHonor || len(got.Resources) != len(BuiltinResources()) {
		t.Errorf("defaults: %+v", got)
	}
	if got, want := s.Revision(), uint64(1); got != want {
		t.Errorf("initial revision %d, want %d", got, want)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, tt := range []struct {
		cfg  Config
		want string
	}{
		{Config{Replicas: 100}, "Replicas"},
		{Config{MaxWatchEvents: -1}, "limits must be positive"},
		{Config{MinRequestTimeout: -time.Second}, "MinRequestTimeout"},
		{Config{Routing: 9}, "unknown RoutingPolicy(9)"},
		{Config{WatchTimeout: 7}, "unknown WatchTimeoutPolicy(7)"},
		{Config{Resources: []Resource{{GVR: schema.GroupVersionResource{Resource: "x"}}}}, "needs a resource, a version and a kind"},
	} {
		_, err := New(tt.cfg)
		if err == nil || !strings.HasPrefix(err.Error(), "fakeapi: ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want an error mentioning %q", tt.cfg, err, tt.want)
		}
	}
}

func TestExtraResource(t *testing.T) {
	widgets := schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	s, _ := newTestServer(t, func(c *Config) {
		c.Resources = []Resource{{GVR: widgets, Kind: "Widget", RequireResourceVersion: true}}
	})
	u := obj("Widget", "", "w1", nil)
	u.SetAPIVersion("example.com/v1")
	if got := mustCreate(t, s, widgets, u); got.GetNamespace() != "" || got.GetKind() != "Widget" {
		t.Errorf("cluster-scoped widget %v", got.Object)
	}
}

func TestEnumStrings(t *testing.T) {
	for _, s := range []interface{ String() string }{
		WatchTimeoutHonor, WatchTimeoutServer, WatchTimeoutNone, RoutingPrimary, RoutingRoundRobin, RoutingRandom,
		NameSubdomain, NameLabel, NameLabel1035, CloseStopped, CloseDeadline, CloseExpired, CloseTooLarge,
		CloseReinit, CloseSlowConsumer, CloseFault, VerbCreate, VerbUpdate, VerbUpdateStatus, VerbPatch, VerbDelete,
		VerbDeleteCollection, VerbGet, VerbList, VerbWatch, WatchListOmitAnnotation, WatchListOmitEndBookmark,
		WatchListEndBookmarkWithoutRV,
	} {
		if str := s.String(); str == "" || strings.Contains(str, "(") {
			t.Errorf("%#v has String %q", s, str)
		}
	}
}
