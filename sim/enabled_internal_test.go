package sim

import (
	"strings"
	"testing"

	"github.com/informersim/informersim/internal/invariant"
)

// spin is a cached actor that always offers one action, which changes nothing.
type spin struct{ name string }

func (a spin) Name() string             { return a.name }
func (a spin) Actions(add func(Action)) { add(Action{Name: "spin", Run: func() {}}) }

// collect keeps the enabled list from step to step and rewrites only the dirty actors' runs;
// test binaries check the kept list against every actor's offers at every step
// (checkCollected). Planted: an entry of a clean actor lost between steps is reported at the
// next collect.
func TestKeptEnabledListIsChecked(t *testing.T) {
	defer invariant.SetThorough(invariant.Thorough())
	invariant.SetThorough(true)
	s, err := New(Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c", "d"} {
		s.AddCachedActor(spin{name})
	}
	for range 20 {
		if _, err := s.Step(); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.enabled) != 4 {
		t.Fatalf("%d enabled actions, want one per actor", len(s.enabled))
	}
	// The bug: the run of an actor that is not asked at the next collect is lost.
	lost := -1
	for i, e := range s.enabled {
		if s.dirty[e.actor/64]&(1<<(e.actor%64)) == 0 {
			lost = i
			break
		}
	}
	if lost < 0 {
		t.Fatal("every actor is dirty")
	}
	want := "the enabled list lacks offer 0 of actor " + s.names[s.enabled[lost].actor]
	s.enabled = append(s.enabled[:lost], s.enabled[lost+1:]...)
	defer func() {
		v, ok := recover().(invariant.Violation)
		if !ok || !strings.Contains(v.Error(), want) {
			t.Fatalf("got %v, want %q", v, want)
		}
	}()
	s.collect()
	t.Fatal("a lost entry went unreported")
}
