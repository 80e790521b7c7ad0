package world

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/sim"
)

// Goal: the world runs an informer in the watch-list start-up (informer.md §7.5): the Reflector
// opens one WATCH with sendInitialEvents instead of LIST then WATCH, the initial events and the
// end-of-initial-events bookmark come over the simulated network, the informer syncs, and the
// world converges through writes and a 410, on every trace seed.
func TestWorldWatchList(t *testing.T) {
	for _, seed := range traceSeeds {
		w := newTraceWorld(t, seed)
		mustApply(t, w, create(configMaps, "a"), create(configMaps, "b"))
		n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps, Namespace: "default", WatchList: true})
		if err != nil {
			t.Fatal(err)
		}
		h := mustAddHandler(t, w, n, "h1", useInformerResync)
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		mustConverge(t, w)
		mustApply(t, w, update(configMaps, "a"), Op{Kind: OpCloseWatches, Code: 410}, del(configMaps, "b"), create(configMaps, "c"))
		mustConverge(t, w)
		narration := sim.Narrate(w.Sim().Trace().Events())
		if !strings.Contains(narration, "inf1/reflector: WATCH rv=") || !strings.Contains(narration, "sendInitialEvents=true") {
			t.Errorf("seed %d: no watch-list request in the narration:\n%s", seed, narration)
		}
		if strings.Contains(narration, "inf1/reflector: LIST") {
			t.Errorf("seed %d: the watch-list informer listed:\n%s", seed, narration)
		}
		if got := len(h.Deliveries().Notifications()); got < 4 {
			t.Errorf("seed %d: %d notifications", seed, got)
		}
	}
}

// Goal: the world narrates each watch-list decision of the Reflector (informer.md §7.5) in the
// style of the LIST path's: a 429 on opening the stream is retried after a backoff
// ("watch-list-retry rv=… delay=… err=…"), a 410 at once (no delay) and marks the RV
// unavailable, any other error falls back to a LIST ("watch-list-fallback err=…"), which lists
// at rv "" and is narrated "listed"; and a stream that completes says "watch-list-synced
// items=N rv=R" with the end bookmark's RV. Method: three failures injected for the first three
// watch requests, then a second informer that streams cleanly; the Reflector's lines compared
// in order, the backoff's length masked, on every trace seed.
func TestWorldWatchListNarration(t *testing.T) {
	for _, seed := range traceSeeds {
		w := newTraceWorld(t, seed)
		mustApply(t, w, create(configMaps, "a"), create(configMaps, "b"),
			Op{Kind: OpFailNext, Verb: fakeapi.VerbWatch, Code: 429},
			Op{Kind: OpFailNext, Verb: fakeapi.VerbWatch, Code: 410},
			Op{Kind: OpFailNext, Verb: fakeapi.VerbWatch, Code: 500})
		n, err := w.AddInformer("inf1", InformerSpec{Resource: configMaps, Namespace: "default", WatchList: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		mustConverge(t, w)
		n2, err := w.AddInformer("inf2", InformerSpec{Resource: configMaps, Namespace: "default", WatchList: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := n2.Start(); err != nil {
			t.Fatal(err)
		}
		mustConverge(t, w)
		delay := regexp.MustCompile(`delay=[0-9.]+m?s `)
		// The Reflector's decisions: its lines but the requests and the events it takes in.
		decision := regexp.MustCompile(`^inf[12]/reflector: [a-z-]+ `)
		var got []string
		for _, line := range strings.Split(sim.Narrate(w.Sim().Trace().Events()), "\n") {
			_, line, _ = strings.Cut(line, " ") // the time
			if decision.MatchString(line) {
				got = append(got, delay.ReplaceAllString(line, "delay=D "))
			}
		}
		want := []string{
			`inf1/reflector: watch-list-retry rv="" delay=D err=injected`,
			`inf1/reflector: watch-list-retry rv="" err="too old resource version"`,
			`inf1/reflector: watch-list-fallback err="Internal error occurred: injected"`,
			`inf1/reflector: listed items=2 rv=3`,
			`inf1/reflector: watching rv=3`,
			`inf2/reflector: watching rv=""`,
			`inf2/reflector: watch-list-synced items=2 rv=3`,
		}
		if diff := cmp.Diff(got, want); diff != "" {
			t.Errorf("seed %d reflector narration (-got +want):\n%s", seed, diff)
		}
	}
}
