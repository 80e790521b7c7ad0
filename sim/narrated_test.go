package sim

import "testing"

// TestNarrated: narration reaches someone when the trace hashes or keeps events, or when a
// subscriber listens; with TraceNone and no subscriber it reaches nobody.
func TestNarrated(t *testing.T) {
	for _, c := range []struct {
		level TraceLevel
		sub   bool
		want  bool
	}{
		{TraceFull, false, true},
		{TraceHashOnly, false, true},
		{TraceNone, false, false},
		{TraceNone, true, true},
	} {
		s, err := New(Config{Seed: 1, Trace: c.level})
		if err != nil {
			t.Fatal(err)
		}
		if c.sub {
			s.Subscribe(func(Event) {})
		}
		if got := s.Narrated(); got != c.want {
			t.Errorf("level %v, subscriber %v: Narrated() = %v, want %v", c.level, c.sub, got, c.want)
		}
	}
}
