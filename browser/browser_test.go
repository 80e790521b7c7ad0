package browser

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/informersim/informersim/scenarios"
	"github.com/informersim/informersim/sim/world"
	rec "github.com/informersim/informersim/timeline/record"
)

// chromium returns the browser to drive: $CHROMIUM, else Debian's /usr/bin/chromium. A missing
// browser fails the test with the command that installs it; it never skips.
func chromium(t *testing.T) string {
	t.Helper()
	p := os.Getenv("CHROMIUM")
	if p == "" {
		p = "/usr/bin/chromium"
	}
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("no Chromium at %s (%v): install it with `apt-get install -y chromium` (make test does so when it runs as root), or set CHROMIUM to a Chromium binary", p, err)
	}
	return p
}

// watcher collects what a page did that it must not: console errors, uncaught exceptions,
// browser log errors, and any request but the page's own file.
type watcher struct {
	mu       sync.Mutex
	errors   []string
	requests []string
}

func (w *watcher) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errors, w.requests = nil, nil
}

func (w *watcher) listen(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.APITypeError || e.Type == runtime.APITypeAssert || e.Type == runtime.APITypeWarning {
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			w.errors = append(w.errors, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(parts, " ")))
		}
	case *runtime.EventExceptionThrown:
		msg := e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil {
			msg += " " + e.ExceptionDetails.Exception.Description
		}
		w.errors = append(w.errors, "exception: "+msg)
	case *cdplog.EventEntryAdded:
		if e.Entry.Level == cdplog.LevelError || e.Entry.Level == cdplog.LevelWarning {
			w.errors = append(w.errors, fmt.Sprintf("log %s (%s): %s %s", e.Entry.Level, e.Entry.Source, e.Entry.Text, e.Entry.URL))
		}
	case *network.EventRequestWillBeSent:
		w.requests = append(w.requests, e.Request.URL)
	}
}

type browser struct {
	ctx context.Context
	w   *watcher
	dir string // artifacts
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	// Chromium's helper processes can still be writing to its profile when the browser
	// process has exited, so t.TempDir's cleanup (which fails the test when a file appears
	// during its RemoveAll) is not used for the profile: it is removed after the browser is
	// stopped, retried while the helpers finish, and a leftover only logged.
	profile, err := os.MkdirTemp("", "informersim-chromium-")
	if err != nil {
		t.Fatalf("a profile directory for Chromium: %v", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium(t)),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 1000),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		removeProfile(t, profile)
	})
	b := &browser{ctx: ctx, w: &watcher{}, dir: artifacts(t)}
	chromedp.ListenTarget(ctx, b.w.listen)
	if err := chromedp.Run(ctx, network.Enable(), cdplog.Enable()); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return b
}

// removeProfile removes Chromium's profile directory, retrying for a few seconds while
// Chromium's helper processes exit.
func removeProfile(t *testing.T, dir string) {
	var err error
	for range 50 {
		if err = os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("Chromium's profile %s is left behind: %v", dir, err)
}

// run runs actions with a deadline (the browser outlives it).
func (b *browser) run(t *testing.T, actions ...chromedp.Action) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// open loads a file and checks the page loaded nothing else and logged no error.
func (b *browser) open(t *testing.T, file string, waitFor string) {
	t.Helper()
	b.w.reset()
	u := (&url.URL{Scheme: "file", Path: file}).String()
	b.run(t, chromedp.Navigate(u), chromedp.WaitReady(waitFor, chromedp.ByQuery))
	// Let late work (timers, lazy loads) show itself before judging the page.
	b.run(t, chromedp.Sleep(150*time.Millisecond))
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	for _, e := range b.w.errors {
		t.Errorf("%s: %s", filepath.Base(file), e)
	}
	for _, r := range b.w.requests {
		if r != u {
			t.Errorf("%s: a request for %s (the page must load nothing)", filepath.Base(file), r)
		}
	}
	if !slices.Contains(b.w.requests, u) {
		t.Errorf("%s: the browser saw no request for the page itself (is the network watched?): %q", filepath.Base(file), b.w.requests)
	}
}

func (b *browser) screenshot(t *testing.T, name string) string {
	t.Helper()
	var png []byte
	b.run(t, chromedp.FullScreenshot(&png, 100))
	p := filepath.Join(b.dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
	return p
}

func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	var v T
	b.run(t, chromedp.Evaluate(js, &v))
	return v
}

// objectPattern matches an event's narration line that is about key: an obj= or key= field
// naming it, with or without the apiserver's resource, a resourceVersion or a tombstone. It
// reads the text the user reads, not the record's Object, so it checks the page's follow
// against the trace itself.
func objectPattern(key string) *regexp.Regexp {
	return regexp.MustCompile(`(^|\s)(obj|key)=(tomb\()?([a-z0-9.-]+/)?` + regexp.QuoteMeta(key) + `([@)\s]|$)`)
}

// checkTimeline checks the page in the browser against the run: one lane per component, in
// order, covering the topology; every narrated event drawn once in its lane, faults marked;
// following one object highlights exactly the trace's events about it and lists its history;
// hovering shows the narration line; zoom widens the picture; a failure is marked.
func checkTimeline(t *testing.T, b *browser, r *rec.Run, topo world.Topology, follow string) {
	t.Helper()
	checkLanes(t, b, r, topo)
	byText := checkDrawn(t, b, r)
	followed := checkFollow(t, b, r, follow)
	checkHoverAndZoom(t, b, r, followed, byText)
	viol := eval[string](t, b, `Array.from(document.querySelectorAll('.viol-label')).map(e => e.textContent).join('|')`)
	switch {
	case r.Failure == nil && viol != "":
		t.Errorf("%s: a passing run shows a violation: %q", r.Scenario.Name, viol)
	case r.Failure != nil && r.Failure.Oracle != "" && !strings.HasPrefix(viol, "oracle "+r.Failure.Oracle+" violated"):
		t.Errorf("%s: the failure is marked %q, want the oracle %s", r.Scenario.Name, viol, r.Failure.Oracle)
	}
}

// checkLanes: one lane per component, in the record's order, and a lane for every part of each
// informer and work queue of the topology.
func checkLanes(t *testing.T, b *browser, r *rec.Run, topo world.Topology) {
	t.Helper()
	var want []string
	for _, c := range r.Components {
		want = append(want, c.ID)
	}
	lanes := eval[[]string](t, b, `Array.from(document.querySelectorAll('svg.tl-svg g.lane')).map(g => g.dataset.lane)`)
	labels := eval[int](t, b, `document.querySelectorAll('.tl-labels .lane-label').length`)
	if !slices.Equal(lanes, want) || labels != len(want) {
		t.Errorf("%s: lanes %q (%d labels), want one per component %q", r.Scenario.Name, lanes, labels, want)
	}
	for _, inf := range topo.Informers {
		for _, id := range append([]string{inf.Name + "/reflector", inf.Name + "/network", inf.Name + "/queue", inf.Name + "/cache", inf.Name + "/processor"}, inf.Handlers...) {
			if !slices.Contains(lanes, id) {
				t.Errorf("%s: no lane for %s", r.Scenario.Name, id)
			}
		}
	}
	for _, q := range topo.WorkQueues {
		for _, id := range append([]string{q.Name}, q.Workers...) {
			if !slices.Contains(lanes, id) {
				t.Errorf("%s: no lane for %s", r.Scenario.Name, id)
			}
		}
	}
}

// checkDrawn: at fit every narrated event is drawn once, in its lane, with its mark. It returns
// each drawn event's narration line by sequence number, for the hover check.
func checkDrawn(t *testing.T, b *browser, r *rec.Run) map[int64]string {
	t.Helper()
	type drawn struct {
		Seq  int64  `json:"seq"`
		Lane string `json:"lane"`
		Mark string `json:"mark"`
	}
	// At fit every event is in the window: each drawn on its own or counted in a block of its
	// lane (a block never holds a marked event: those are drawn on their own).
	b.run(t, chromedp.Evaluate(`informersimTimeline.fit()`, nil))
	got := eval[[]drawn](t, b, `Array.from(document.querySelectorAll('rect.ev, rect.ev-agg')).flatMap(r => (r.dataset.b ? informersimTimeline.blockSeqs(+r.dataset.b) : [+r.dataset.seq]).map(s => ({seq: s, lane: r.parentNode.dataset.lane,
		mark: ['fault','error','violation'].find(m => r.classList.contains('mark-' + m)) || ''})))`)
	var wantDrawn []drawn
	byText := map[int64]string{}
	for _, e := range drawnEvents(r) {
		byText[e.Seq] = e.Text
		wantDrawn = append(wantDrawn, drawn{e.Seq, e.Lane, e.Mark})
	}
	slices.SortFunc(got, func(a, b drawn) int { return int(a.Seq - b.Seq) }) // grouped by lane on the page
	if !slices.Equal(got, wantDrawn) {
		t.Errorf("%s: %d events drawn, want %d (each narrated event once, in its lane, with its mark)", r.Scenario.Name, len(got), len(wantDrawn))
	}
	return byText
}

// checkFollow clicks follow's first event and checks that exactly the trace's events about it are
// highlighted, its history listed and the follow menu set. It returns those events' sequence
// numbers.
func checkFollow(t *testing.T, b *browser, r *rec.Run, follow string) []int64 {
	t.Helper()
	// Follow one object: click its first event.
	re := objectPattern(follow)
	var wantSeqs []int64
	var wantHistory []string
	for _, e := range drawnEvents(r) {
		if re.MatchString(e.Text) {
			wantSeqs = append(wantSeqs, e.Seq)
			wantHistory = append(wantHistory, e.Text)
		}
	}
	if len(wantSeqs) == 0 {
		t.Fatalf("%s: the trace has no event about %s", r.Scenario.Name, follow)
	}
	if eval[string](t, b, `informersimTimeline.followed`) != "" {
		b.run(t, chromedp.Evaluate(`informersimTimeline.follow('')`, nil)) // a failing page opens following its object
	}
	b.run(t, chromedp.Evaluate(fmt.Sprintf(`informersimTimeline.reveal(%d)`, wantSeqs[0]), nil))
	b.run(t, chromedp.Click(fmt.Sprintf(`rect.ev[data-seq="%d"]`, wantSeqs[0]), chromedp.ByQuery))
	hl := eval[[]int64](t, b, `Array.from(document.querySelectorAll('rect.ev.hl')).map(r => +r.dataset.seq)`)
	slices.Sort(hl) // the page groups its marks by lane
	if !slices.Equal(hl, wantSeqs) {
		t.Errorf("%s: following %s highlights events %v, the trace has %v", r.Scenario.Name, follow, hl, wantSeqs)
	}
	history := eval[string](t, b, `(document.querySelector('.followed-history') || {}).textContent || ''`)
	if history != strings.Join(wantHistory, "\n") {
		t.Errorf("%s: the history of %s lists:\n%s\nthe trace has:\n%s", r.Scenario.Name, follow, history, strings.Join(wantHistory, "\n"))
	}
	if sel := eval[string](t, b, `document.querySelector('select.tl-follow').value`); sel != follow {
		t.Errorf("%s: the follow menu shows %q after clicking an event of %s", r.Scenario.Name, sel, follow)
	}
	return wantSeqs
}

// checkHoverAndZoom hovers over the last followed event (the tip shows its narration line), then
// zooms in (the picture widens) and back to fit (the highlight stays).
func checkHoverAndZoom(t *testing.T, b *browser, r *rec.Run, wantSeqs []int64, byText map[int64]string) {
	t.Helper()
	// Hover over the last followed event: the tip shows its narration line.
	last := wantSeqs[len(wantSeqs)-1]
	box := eval[[]float64](t, b, fmt.Sprintf(`(() => { informersimTimeline.reveal(%[1]d); const r = document.querySelector('rect.ev[data-seq="%[1]d"]'); r.scrollIntoView({block: 'center'});
		const b = r.getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2]; })()`, last))
	b.run(t, chromedp.MouseEvent(input.MouseMoved, box[0], box[1]))
	tip := eval[string](t, b, `document.querySelector('.tl-tip').textContent`)
	if first, _, _ := strings.Cut(tip, "\n"); first != byText[last] {
		t.Errorf("%s: hovering event %d shows %q, want its narration line %q", r.Scenario.Name, last, first, byText[last])
	}

	w0 := eval[float64](t, b, `+document.querySelector('svg.tl-svg').dataset.width`)
	b.run(t, chromedp.Click(`button.tl-zoom[title="zoom in"]`, chromedp.ByQuery))
	if w1 := eval[float64](t, b, `+document.querySelector('svg.tl-svg').dataset.width`); w1 <= w0 {
		t.Errorf("%s: zoom in left the width at %v (was %v)", r.Scenario.Name, w1, w0)
	}
	b.run(t, chromedp.Click(`button.tl-zoom[title="fit the run into the window"]`, chromedp.ByQuery))
	if n := eval[int](t, b, `document.querySelectorAll('rect.ev.hl').length`); n != len(wantSeqs) {
		t.Errorf("%s: after zooming %d events are highlighted, want %d", r.Scenario.Name, n, len(wantSeqs))
	}
}

// drawnEvents are the events a page draws: the narrated ones, and the scheduler's steps of the
// user's own code (its actors, workqueues and workers) where the step narrates nothing else in
// that lane.
func drawnEvents(r *rec.Run) []rec.Event {
	role := map[string]string{}
	for _, c := range r.Components {
		role[c.ID] = c.Role
	}
	narrated := map[string]bool{}
	for _, e := range r.Events {
		if !e.Scheduler {
			narrated[fmt.Sprint(e.Step, "|", e.Lane)] = true
		}
	}
	var out []rec.Event
	for _, e := range r.Events {
		switch role[e.Lane] {
		case "user", "worker", "workqueue", "controller":
			if e.Scheduler && narrated[fmt.Sprint(e.Step, "|", e.Lane)] {
				continue
			}
		default:
			if e.Scheduler {
				continue
			}
		}
		out = append(out, e)
	}
	return out
}

// Goal: four timelines (a passing lesson, a lesson with injected faults, a failing run whose
// violation was found between events, and one found at an event) work in a real Chromium, with nothing loaded from anywhere and no console error; screenshots are kept.
func TestTimelinesInChromium(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	for _, c := range []struct {
		sc     scenarios.Scenario
		follow string
	}{
		{lesson(t, "05-tombstone"), "default/b"},
		{lesson(t, "26-watch-faults"), "default/a"},
		{failing(t), "default/a"},
		{failingAtDelivery(t), "default/a"},
	} {
		r, topo := record(t, c.sc)
		p := filepath.Join(dir, c.sc.Name+".html")
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.WriteHTML(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		b.open(t, p, "svg.tl-svg rect.ev")
		b.screenshot(t, "timeline-"+c.sc.Name)
		checkTimeline(t, b, r, topo, c.follow)
		b.screenshot(t, "timeline-"+c.sc.Name+"-following")
	}
}

// Goal: the course site: the index lists every lesson in order; every lesson page loads with
// nothing from the network and no console error, draws one lane per component of its run and
// highlights exactly the pipeline parts the lesson names.
func TestCourseSiteInChromium(t *testing.T) {
	b := newBrowser(t)
	dir := t.TempDir()
	if _, err := scenarios.WriteCourse(dir); err != nil {
		t.Fatal(err)
	}
	course := scenarios.Course()
	b.open(t, filepath.Join(dir, "index.html"), "ol.lessons")
	links := eval[[]string](t, b, `Array.from(document.querySelectorAll('ol.lessons a')).map(a => a.getAttribute('href'))`)
	var want []string
	for _, sc := range course {
		want = append(want, sc.Name+".html")
	}
	if !slices.Equal(links, want) {
		t.Errorf("the index links %q, want %q", links, want)
	}
	b.screenshot(t, "course-index")
	for _, sc := range course {
		r, _ := record(t, sc)
		b.open(t, filepath.Join(dir, sc.Name+".html"), "svg.tl-svg rect.ev")
		lanes := eval[int](t, b, `document.querySelectorAll('svg.tl-svg g.lane').length`)
		if lanes != len(r.Components) {
			t.Errorf("%s: %d lanes, the run has %d components", sc.Name, lanes, len(r.Components))
		}
		hl := eval[[]string](t, b, `Array.from(document.querySelectorAll('svg.pipeline .hl')).map(e => e.dataset.parts)`)
		for _, stage := range sc.Pipeline {
			if !slices.ContainsFunc(hl, func(parts string) bool { return slices.Contains(strings.Fields(parts), stage) }) {
				t.Errorf("%s: the pipeline does not highlight %s (highlighted: %q)", sc.Name, stage, hl)
			}
		}
		for _, parts := range hl {
			if !slices.ContainsFunc(strings.Fields(parts), func(p string) bool { return slices.Contains(sc.Pipeline, p) }) {
				t.Errorf("%s: the pipeline highlights %s, which the lesson does not name (%q)", sc.Name, parts, sc.Pipeline)
			}
		}
		if rb := eval[string](t, b, `(document.querySelector('svg.pipeline .readback') || {dataset: {}}).dataset.parts + ' | ' + (document.querySelector('svg.pipeline .readback-label') || {}).textContent`); !strings.HasPrefix(rb, "worker Indexer | ") || !strings.Contains(rb, "reads the Indexer") {
			t.Errorf("%s: the pipeline does not draw the worker's read back from the Indexer: %q", sc.Name, rb)
		}
		if len(sc.Pipeline) == 0 {
			t.Errorf("%s: the lesson names no part of the pipeline (its # pipeline: line)", sc.Name)
		}
		title := eval[string](t, b, `document.querySelector('h1').textContent`)
		if want := fmt.Sprintf("Lesson %s: %s", rec.LessonNumber(sc.Name), sc.Title); title != want {
			t.Errorf("%s: the page's title is %q, want %q", sc.Name, title, want)
		}
		// One legend swatch per role and client-go part (lesson 12: a DeltaFIFO and a RealFIFO),
		// and every lane coloured (lesson 30: the control plane's controllers).
		legend := eval[[]string](t, b, `Array.from(document.querySelectorAll('.tl-legend span')).map(s => s.textContent)`)
		for _, c := range r.Components {
			if want := c.Role + " (" + c.ClientGo + ")"; !slices.Contains(legend, want) {
				t.Errorf("%s: lane %s has no legend swatch %q (legend: %q)", sc.Name, c.ID, want, legend)
			}
		}
		uncoloured := eval[[]string](t, b, `Array.from(document.querySelectorAll('.tl-labels .lane-label, .tl-legend span')).filter(e => {
			const c = getComputedStyle(e).getPropertyValue('--c').trim(); return c === '' || c === '#000' || c === 'black'; }).map(e => e.textContent)`)
		if len(uncoloured) > 0 {
			t.Errorf("%s: lanes or swatches without a colour: %q", sc.Name, uncoloured)
		}
		if try := eval[string](t, b, `document.querySelector('.try pre').textContent`); !strings.Contains(try, "go run -C cmd/informersim . run "+sc.Name+" --seed 7") {
			t.Errorf("%s: the Try it commands are not run from a clone: %q", sc.Name, try)
		}
		switch sc.Name {
		case "12a-deltafifo-grouping", "12-deltafifo-vs-realfifo", "30-cascading-deletion", "14-paged-lists":
			b.screenshot(t, "lesson-"+sc.Name)
		case "24-controller":
			b.screenshot(t, "lesson-24-default-zoom")
			checkLinearAxis(t, b)
			checkLinks(t, b, r)
		}
	}
}

// checkLinearAxis switches the time axis to linear: the switch says so, and the ticks stand
// at equal distances for equal times (the compressed axis's do not); then back.
func checkLinearAxis(t *testing.T, b *browser) {
	t.Helper()
	b.run(t, chromedp.Click(`button.tl-mode`, chromedp.ByQuery))
	if mode := eval[string](t, b, `document.querySelector('button.tl-mode').textContent + ' | ' + document.querySelector('.axis-label').textContent`); !strings.Contains(mode, "time axis: linear") || !strings.Contains(mode, "(linear)") {
		t.Errorf("after switching to the linear axis the page says %q", mode)
	}
	b.screenshot(t, "lesson-24-linear")
	// A duration is a bar as long as its time: the relist's backoff (relist-after delay=D).
	bar := eval[[]float64](t, b, `(() => {
		const bar = Array.from(document.querySelectorAll('rect.bar')).find(r => r.querySelector('title').textContent.startsWith('relist-after '));
		const ticks = Array.from(document.querySelectorAll('text.tick')).slice(0, 2).map(e => [+e.getAttribute('x'), parseFloat(e.textContent.slice(1))]);
		const ev = informersimTimeline.ev.find(e => e.kind === 'relist-after');
		return bar ? [+bar.getAttribute('width'), (ticks[1][0] - ticks[0][0]) / (ticks[1][1] - ticks[0][1]), ev.fields.delay.endsWith('ms') ? parseFloat(ev.fields.delay) / 1000 : parseFloat(ev.fields.delay)] : []; })()`)
	if len(bar) != 3 {
		t.Errorf("lesson 24 draws no bar for its relist's backoff")
	} else if want := bar[1] * bar[2]; bar[0] < want-2 || bar[0] > want+2 {
		t.Errorf("the backoff's bar is %.1f px on the linear axis, its delay (%.3fs at %.1f px/s) is %.1f px", bar[0], bar[2], bar[1], want)
	}
	xs := eval[[]float64](t, b, `Array.from(document.querySelectorAll('text.tick')).map(e => +e.getAttribute('x'))`)
	if len(xs) < 3 {
		t.Errorf("the linear axis has %d ticks", len(xs))
	}
	for i := 2; i < len(xs); i++ {
		if d0, d1 := xs[1]-xs[0], xs[i]-xs[i-1]; d1 < d0-0.5 || d1 > d0+0.5 {
			t.Errorf("the linear axis's ticks are not evenly spaced: %v", xs)
			break
		}
	}
	b.run(t, chromedp.Click(`button.tl-mode`, chromedp.ByQuery))
	if mode := eval[string](t, b, `document.querySelector('button.tl-mode').textContent`); !strings.Contains(mode, "compressed") {
		t.Errorf("after switching back the page says %q", mode)
	}
}

// checkLinks checks that the narration and the marks follow each other: clicking a narration
// line highlights exactly its directive's events, and clicking an event (or pressing Enter on
// it: every event takes the keyboard's focus) makes its directive's line the current one.
func checkLinks(t *testing.T, b *browser, r *rec.Run) {
	t.Helper()
	// The first directive with a drawn event about an object.
	di := -1
	var seqs []int64
	for _, e := range drawnEvents(r) {
		if di < 0 && e.Object != "" && r.Directives[e.Directive].Cmd != "caption" {
			di = e.Directive
		}
		if di >= 0 && e.Directive == di {
			seqs = append(seqs, e.Seq)
		}
	}
	if di < 0 {
		t.Fatalf("%s: no directive with events", r.Scenario.Name)
	}
	b.run(t, chromedpEval(`informersimTimeline.fit()`))
	b.run(t, chromedp.Click(fmt.Sprintf(`.nl[data-directive="%d"]`, di), chromedp.ByQuery))
	got := eval[[]int64](t, b, `Array.from(document.querySelectorAll('rect.ev.dsel')).map(r => +r.dataset.seq)`)
	slices.Sort(got)
	if !slices.Equal(got, seqs) {
		t.Errorf("%s: clicking narration line %d highlights events %v, its events are %v", r.Scenario.Name, di, got, seqs)
	}
	// The reverse: a later directive's event, clicked, makes its line current.
	var other rec.Event
	for _, e := range drawnEvents(r) {
		if e.Directive > di && r.Directives[e.Directive].Cmd != "caption" {
			other = e
			break
		}
	}
	b.run(t, chromedpEval(fmt.Sprintf(`informersimTimeline.reveal(%d)`, other.Seq)))
	b.run(t, chromedp.Click(fmt.Sprintf(`rect.ev[data-seq="%d"]`, other.Seq), chromedp.ByQuery))
	if cur := eval[[]string](t, b, `Array.from(document.querySelectorAll('.nl.current')).map(l => l.dataset.directive)`); !slices.Equal(cur, []string{fmt.Sprint(other.Directive)}) {
		t.Errorf("%s: clicking event %d (directive %d) makes narration lines %q current", r.Scenario.Name, other.Seq, other.Directive, cur)
	}
	// The pipeline: the clicked event's part is the current box; a box clicked lights the lanes
	// of its parts.
	stage := map[string]string{}
	for _, c := range r.Components {
		stage[c.ID] = c.Stage
	}
	if box := eval[[]string](t, b, `Array.from(document.querySelectorAll('svg.pipeline g.current')).map(g => g.dataset.parts)`); len(box) != 1 || !slices.Contains(strings.Fields(box[0]), stage[other.Lane]) {
		t.Errorf("%s: clicking event %d in lane %s (%s) makes boxes %q current", r.Scenario.Name, other.Seq, other.Lane, stage[other.Lane], box)
	}
	b.run(t, chromedp.Click(`svg.pipeline g.stage[data-stage="Indexer"]`, chromedp.ByQuery))
	var wantLanes []string
	for _, c := range r.Components {
		if c.Stage == "Indexer" {
			wantLanes = append(wantLanes, c.ID)
		}
	}
	if lit := eval[[]string](t, b, `Array.from(document.querySelectorAll('g.lane.lane-sel')).map(g => g.dataset.lane)`); len(wantLanes) == 0 || !slices.Equal(lit, wantLanes) {
		t.Errorf("%s: clicking the Indexer's box lights lanes %q, want %q", r.Scenario.Name, lit, wantLanes)
	}
	// The keyboard: focus an event about an object, press Enter, its object is followed.
	var keyed rec.Event
	for _, e := range drawnEvents(r) {
		if e.Object != "" && e.Object != eval[string](t, b, `informersimTimeline.followed`) {
			keyed = e
			break
		}
	}
	b.run(t, chromedpEval(fmt.Sprintf(`informersimTimeline.reveal(%d); document.querySelector('rect.ev[data-seq="%d"]').focus()`, keyed.Seq, keyed.Seq)))
	if f := eval[string](t, b, `document.activeElement.dataset.seq || ''`); f != fmt.Sprint(keyed.Seq) {
		t.Errorf("%s: event %d does not take the focus (the focus is on %q)", r.Scenario.Name, keyed.Seq, f)
	}
	b.run(t, chromedp.KeyEvent("\r"))
	if f := eval[string](t, b, `informersimTimeline.followed`); f != keyed.Object {
		t.Errorf("%s: Enter on event %d follows %q, want %s", r.Scenario.Name, keyed.Seq, f, keyed.Object)
	}
}
