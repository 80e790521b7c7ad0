package browser

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/worldtest"
)

// tombstoneBlindController is a controller author's controller with a bug: its handlers
// enqueue keys, its worker (an actor of the world, "ctrl/worker") syncs one key per step from
// the informer's cache, but a delete that arrives as a tombstone (DeletedFinalStateUnknown) is
// dropped, so a pod deleted while the watch was expired is never forgotten.
type tombstoneBlindController struct {
	w     *world.World
	cache informer.Store
	queue []string
	known map[string]bool
}

func (c *tombstoneBlindController) enqueue(obj any) {
	if _, ok := obj.(informer.DeletedFinalStateUnknown); ok {
		return // the bug: a tombstone is not a *Pod, so it is skipped
	}
	key, err := informer.DeletionHandlingMetaNamespaceKeyFunc(obj)
	Expect(err).NotTo(HaveOccurred())
	c.queue = append(c.queue, key)
}

func (c *tombstoneBlindController) Name() string { return "ctrl/worker" }

func (c *tombstoneBlindController) Actions(add func(sim.Action)) {
	if len(c.queue) > 0 {
		add(sim.Action{Name: "sync", Run: c.sync})
	}
}

func (c *tombstoneBlindController) sync() {
	key := c.queue[0]
	c.queue = c.queue[1:]
	_, exists, err := c.cache.GetByKey(key)
	Expect(err).NotTo(HaveOccurred())
	if exists {
		c.known[key] = true
	} else {
		delete(c.known, key)
	}
}

func (c *tombstoneBlindController) check() error {
	list, err := c.w.Server().Snapshot(world.DefaultResource(), "default", metav1.ListOptions{})
	if err != nil {
		return err
	}
	var want, got []string
	for _, p := range list.Items {
		want = append(want, "default/"+p.GetName())
	}
	for k := range c.known {
		got = append(got, k)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("the controller knows %v, the apiserver has %v", got, want)
	}
	return nil
}

// failingSpec is what the Ginkgo spec below leaves for TestFailingGinkgoSpecPage: the failure
// message HaveConverged printed and the spec's full text.
var failingSpec struct {
	message, text string
	w             *world.World
}

// The spec fails HaveConverged on purpose (it asserts the failure, so the suite passes) and
// keeps its message: the page it names is what a controller author opens first.
var _ = Describe("a controller that drops tombstones", func() {
	It("forgets no pod deleted while the watch was expired", func() {
		w, err := worldtest.NewWorld(1, world.Config{})
		Expect(err).NotTo(HaveOccurred())
		for _, name := range []string{"a", "b"} {
			Expect(w.Apply(world.Op{Kind: world.OpCreate, Name: name})).To(Succeed())
		}
		inf, err := w.AddInformer("pods", world.InformerSpec{Namespace: "default"})
		Expect(err).NotTo(HaveOccurred())
		ctrl := &tombstoneBlindController{w: w, cache: inf.SharedIndexInformer().GetStore(), known: map[string]bool{}}
		_, err = w.AddHandler(inf, "ctrl", informer.ResourceEventHandlerFuncs{
			AddFunc: ctrl.enqueue, UpdateFunc: func(_, obj any) { ctrl.enqueue(obj) }, DeleteFunc: ctrl.enqueue,
		}, world.HandlerOptions{CallDuration: 5 * time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		Expect(w.AddActor(ctrl)).To(Succeed())
		Expect(w.AddCheck("the controller knows every pod", ctrl.check)).To(Succeed())
		Expect(inf.Start()).To(Succeed())
		Expect(w).To(worldtest.HaveConverged(time.Minute))
		Expect(w.Apply(world.Op{Kind: world.OpCloseWatches, Code: 410})).To(Succeed())
		Expect(w.Apply(world.Op{Kind: world.OpDelete, Name: "b"})).To(Succeed())
		m := worldtest.HaveConverged(time.Minute)
		ok, err := m.Match(w)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeFalse(), "the tombstone-blind controller converged")
		failingSpec.message, failingSpec.text, failingSpec.w = m.FailureMessage(w), CurrentSpecReport().FullText(), w
	})
})

// Goal: the page a failing Ginkgo spec writes explains the failure by itself: titled with the
// spec's name; opened with the object the failure is about followed (its events highlighted,
// its history listed); the check named in the banner and on the violation's mark; the failure
// report holding what the terminal printed (the object's history, the trace before the
// failure); the controller's worker drawn in its own lane, each of its steps a mark.
func TestFailingGinkgoSpecPage(t *testing.T) {
	t.Setenv(worldtest.ArtifactsEnv, artifacts(t))
	RegisterFailHandler(Fail)
	if !RunSpecs(t, "a failing spec's page") {
		t.Fatal("the spec that writes the failing page failed")
	}
	msg := failingSpec.message
	found := regexp.MustCompile(`(?m)^timeline: (\S+)\n`).FindStringSubmatch(msg)
	if found == nil {
		t.Fatalf("the failure message names no timeline:\n%s", msg)
	}
	t.Logf("the spec's failure message:\n%s", msg)
	r := embeddedRecord(t, found[1])
	const object = "default/b"
	if r.Failure == nil || r.Failure.Check != "the controller knows every pod" || r.Failure.Object != object {
		t.Fatalf("record's failure %+v; want the check, about %s", r.Failure, object)
	}

	b := newBrowser(t)
	b.open(t, found[1], "svg.tl-svg rect.ev")
	b.screenshot(t, "failing-spec-opens")
	checkFailingPageHeader(t, b, object)
	checkFollowedPath(t, b, r, object)
	checkWorkerLane(t, b, r, object)
	checkReportLinks(t, b, r, object)
	// The mark stands at the step the check found it: after the last event of that step.
	last := r.Events[len(r.Events)-1]
	if r.Failure.Step != last.Step {
		t.Errorf("the failure is at step %d, the run's last step is %d", r.Failure.Step, last.Step)
	}
}

// checkFailingPageHeader: the page is titled with the failing spec's name, its banner names the
// check and the object, its failure report holds what the terminal printed, and it opens
// following the object.
func checkFailingPageHeader(t *testing.T, b *browser, object string) {
	t.Helper()
	if h1 := eval[string](t, b, `document.querySelector('h1').textContent`); h1 != failingSpec.text {
		t.Errorf("the page's title is %q, want the spec's name %q", h1, failingSpec.text)
	}
	if title := eval[string](t, b, `document.title`); !strings.HasPrefix(title, failingSpec.text) {
		t.Errorf("the document's title is %q, want it to start with the spec's name", title)
	}
	banner := eval[string](t, b, `document.querySelector('.failure').textContent`)
	if !strings.Contains(banner, `check “the controller knows every pod” failed`) || !strings.Contains(banner, "about "+object) {
		t.Errorf("the banner does not name the check and the object:\n%s", banner)
	}
	report := eval[string](t, b, `document.querySelector('.failure-report').textContent`)
	for _, want := range []string{"history of " + object, "trace before the failure:", "replay: ", "OnDelete"} {
		if !strings.Contains(report, want) {
			t.Errorf("the failure report lacks %q:\n%s", want, report)
		}
	}
	if sel := eval[string](t, b, `document.querySelector('select.tl-follow').value`); sel != object {
		t.Errorf("the page opens following %q, want %s", sel, object)
	}
}

// checkFollowedPath: every event about object is highlighted (at fit all are in view) and listed
// in its history, with an arrow wherever its path changes lanes.
func checkFollowedPath(t *testing.T, b *browser, r *timelineRun, object string) {
	t.Helper()
	// Every event about the object is highlighted (at fit all are in view) and listed.
	b.run(t, chromedpEval(`informersimTimeline.fit()`))
	re := objectPattern(object)
	var want []int64
	var history []string
	for _, e := range drawnEvents(r) {
		if re.MatchString(e.Text) {
			want = append(want, e.Seq)
			history = append(history, e.Text)
		}
	}
	hl := eval[[]int64](t, b, `Array.from(document.querySelectorAll('rect.ev.hl')).map(r => +r.dataset.seq)`)
	slices.Sort(hl)
	if len(want) == 0 || !slices.Equal(hl, want) {
		t.Errorf("highlighted %v, the trace's events about %s are %v", hl, object, want)
	}
	// Arrows join each of its events to the next one in another lane.
	lanes, changes := []string{}, 0
	for _, e := range drawnEvents(r) {
		if re.MatchString(e.Text) {
			if len(lanes) > 0 && lanes[len(lanes)-1] != e.Lane {
				changes++
			}
			lanes = append(lanes, e.Lane)
		}
	}
	if n := eval[int](t, b, `document.querySelectorAll('path.flow-arrow').length`); n != changes || n == 0 {
		t.Errorf("%d arrows along %s's path, which changes lanes %d times (%q)", n, object, changes, lanes)
	}
	if got := eval[string](t, b, `document.querySelector('.followed-history').textContent`); got != strings.Join(history, "\n") {
		t.Errorf("the history listed:\n%s\nwant:\n%s", got, strings.Join(history, "\n"))
	}
}

// checkWorkerLane: the controller's worker lane has one mark per step it took (a sync), as the
// trace has them, and the violation's mark names the check and object.
func checkWorkerLane(t *testing.T, b *browser, r *timelineRun, object string) {
	t.Helper()
	// The worker's lane: one mark per step it took (a sync), as the trace has them.
	var syncs []int64
	for _, e := range r.Events {
		if e.Actor == "ctrl/worker" {
			syncs = append(syncs, e.Seq)
		}
	}
	drawnSyncs := eval[[]int64](t, b, `Array.from(document.querySelectorAll('g.lane[data-lane="ctrl/worker"] rect.ev, g.lane[data-lane="ctrl/worker"] rect.ev-agg')).flatMap(r => r.dataset.b ? informersimTimeline.blockSeqs(+r.dataset.b) : [+r.dataset.seq])`)
	slices.Sort(drawnSyncs)
	if len(syncs) == 0 || !slices.Equal(drawnSyncs, syncs) {
		t.Errorf("the worker's lane draws %v, the trace has its steps %v", drawnSyncs, syncs)
	}
	viol := eval[string](t, b, `document.querySelector('.viol-label').textContent`)
	if !strings.HasPrefix(viol, `check "the controller knows every pod" failed`) || !strings.Contains(viol, object) {
		t.Errorf("the violation's mark is labelled %q", viol)
	}
}

// checkReportLinks: the report's lines link to their events, and the reverse.
func checkReportLinks(t *testing.T, b *browser, r *timelineRun, object string) {
	t.Helper()
	// The report's lines link to their events, and the reverse: the OnDelete line picks the
	// handler's OnDelete, and clicking the worker's last sync makes its report line current.
	var onDelete, lastSync int64 = -1, -1
	for _, e := range drawnEvents(r) {
		if e.Kind == "OnDelete" && e.Object == object {
			onDelete = e.Seq
		}
		if e.Actor == "ctrl/worker" {
			lastSync = e.Seq
		}
	}
	b.run(t, chromedp.Click(`.failure-report .rep-line[data-seq="`+fmt.Sprint(onDelete)+`"]`, chromedp.ByQuery))
	if picked := eval[[]int64](t, b, `Array.from(document.querySelectorAll('rect.ev.picked')).map(r => +r.dataset.seq)`); !slices.Equal(picked, []int64{onDelete}) {
		t.Errorf("clicking the report's OnDelete line picks events %v, want %d", picked, onDelete)
	}
	b.run(t, chromedpEval(fmt.Sprintf(`informersimTimeline.reveal(%d)`, lastSync)))
	b.run(t, chromedp.Click(fmt.Sprintf(`rect.ev[data-seq="%d"]`, lastSync), chromedp.ByQuery))
	if cur := eval[[]string](t, b, `Array.from(document.querySelectorAll('.rep-line.current')).map(l => l.dataset.seq)`); !slices.Equal(cur, []string{fmt.Sprint(lastSync)}) {
		t.Errorf("clicking the worker's sync %d makes report lines %q current", lastSync, cur)
	}
}

// embeddedRecord reads the record a page embeds.
func embeddedRecord(t *testing.T, path string) *timelineRun {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeRecord(t, string(page))
}
