package record

import (
	"fmt"
	"html"
	"slices"
	"strings"
)

// The pipeline's parts, by client-go's names: what a lesson's "pipeline:" header line and a
// Component's Stage name.
const (
	StageAPIServer     = "kube-apiserver"
	StageListerWatcher = "ListerWatcher"
	StageReflector     = "Reflector"
	StageDeltaFIFO     = "DeltaFIFO"
	StageRealFIFO      = "RealFIFO"
	StageIndexer       = "Indexer"
	StageProcessor     = "sharedProcessor"
	StageListener      = "processorListener"
	StageHandler       = "ResourceEventHandler"
	StageWorkqueue     = "workqueue"
	StageWorker        = "worker"
	// StageInformer is the SharedIndexInformer around them (Run, HasSynced, WaitForCacheSync).
	StageInformer = "SharedIndexInformer"
)

// Stages lists every part in the pipeline's order.
var Stages = []string{StageAPIServer, StageListerWatcher, StageReflector, StageDeltaFIFO, StageRealFIFO,
	StageIndexer, StageProcessor, StageListener, StageHandler, StageWorkqueue, StageWorker, StageInformer}

// CheckStages returns an error naming the first of names that is not a part of the pipeline.
func CheckStages(names []string) error {
	for _, n := range names {
		if !slices.Contains(Stages, n) {
			return fmt.Errorf("timeline: %q is not a part of the pipeline (expected one of: %s)", n, strings.Join(Stages, ", "))
		}
	}
	return nil
}

// box is one box of the picture: the parts it stands for, its title and what the narration
// calls it.
type box struct {
	parts []string
	title string
	short string
	role  string
}

var boxes = []box{
	{[]string{StageAPIServer}, "kube-apiserver", "apiserver", "apiserver"},
	{[]string{StageReflector, StageListerWatcher}, "Reflector", "reflector, net, watch", "reflector"},
	{[]string{StageDeltaFIFO, StageRealFIFO}, "DeltaFIFO / RealFIFO", "queue: pop", "queue"},
	{[]string{StageIndexer}, "Indexer", "queue: cache-*", "cache"},
	{[]string{StageProcessor}, "sharedProcessor", "queue: buffer", "processor"},
	{[]string{StageListener, StageHandler}, "processorListener", "<h>: OnAdd, OnUpdate…", "handler"},
	{[]string{StageWorkqueue, StageWorker}, "workqueue", "<q>, workers <q>/w1", "workqueue"},
}

// PipelineSVG draws the informer's pipeline, client-go's names in the boxes and the narration's
// short names under them; the boxes of the parts in highlight are drawn highlighted (class
// "hl"), and a highlighted SharedIndexInformer highlights the frame around its parts.
func PipelineSVG(highlight []string) string {
	const w, h, gap, top = 146, 46, 20, 34
	width := len(boxes)*(w+gap) - gap + 20
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="pipeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d 150" width="%d" height="150" role="img" aria-label="client-go's informer pipeline">`, width, width)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>`)
	// The SharedIndexInformer's frame: from the Reflector to the processorListeners.
	fx := 10 + (w + gap) - 8
	fw := 5*(w+gap) - gap + 16
	cls := "frame"
	if slices.Contains(highlight, StageInformer) {
		cls += " hl"
	}
	fmt.Fprintf(&b, `<rect class="%s" data-stage="%s" data-parts="%s" x="%d" y="6" width="%d" height="%d" rx="8"/>`, cls, StageInformer, StageInformer, fx, fw, h+top+2)
	fmt.Fprintf(&b, `<text class="frame-title" x="%d" y="22">SharedIndexInformer · HasSynced / WaitForCacheSync</text>`, fx+10)
	for i, bx := range boxes {
		x := 10 + i*(w+gap)
		cls := "stage role-" + bx.role
		for _, p := range bx.parts {
			if slices.Contains(highlight, p) {
				cls += " hl"
				break
			}
		}
		title := bx.title
		if bx.parts[0] == StageDeltaFIFO {
			// A lesson about one of the two queues names that one.
			switch {
			case slices.Contains(highlight, StageDeltaFIFO) && !slices.Contains(highlight, StageRealFIFO):
				title = "DeltaFIFO"
			case slices.Contains(highlight, StageRealFIFO) && !slices.Contains(highlight, StageDeltaFIFO):
				title = "RealFIFO"
			}
		}
		fmt.Fprintf(&b, `<g class="%s" data-stage="%s" data-parts="%s"><rect x="%d" y="%d" width="%d" height="%d" rx="6"/>`, cls, html.EscapeString(bx.parts[0]), html.EscapeString(strings.Join(bx.parts, " ")), x, top, w, h)
		fmt.Fprintf(&b, `<text class="name" x="%d" y="%d">%s</text>`, x+w/2, top+19, html.EscapeString(title))
		fmt.Fprintf(&b, `<text class="short" x="%d" y="%d">%s</text></g>`, x+w/2, top+36, html.EscapeString(bx.short))
		if i > 0 {
			fmt.Fprintf(&b, `<line class="flow" x1="%d" y1="%d" x2="%d" y2="%d" marker-end="url(#arrow)"/>`, x-gap+1, top+h/2, x-2, top+h/2)
		}
	}
	// The worker reads the object back from the Indexer by its key (a lister's Get): it acts on
	// the cache's latest state, not on the event that queued the key. That is what makes a
	// controller level-triggered (docs/informer.md), and it closes the loop.
	ix, wx := 10+3*(w+gap)+w/2, 10+6*(w+gap)+w/2
	yb, yl := top+h, top+h+22
	fmt.Fprintf(&b, `<path class="readback" data-parts="%s %s" d="M%d,%d L%d,%d L%d,%d L%d,%d" marker-end="url(#arrow)"/>`, StageWorker, StageIndexer, wx, yb+1, wx, yl, ix, yl, ix, yb+3)
	fmt.Fprintf(&b, `<text class="readback-label" x="%d" y="%d">worker: lister Get(key) reads the Indexer's latest object, not the event (level-triggered)</text>`, ix+10, yl+14)
	fmt.Fprintf(&b, `<text class="caption" x="10" y="144">LIST/WATCH → Deltas queued → cache written → notifications distributed → each handler's own buffer → your handler → your workqueue</text>`)
	b.WriteString(`</svg>`)
	return b.String()
}
