package oracle

import (
	"fmt"
	"strings"
	"time"

	"github.com/informersim/informersim/informer"
	"github.com/informersim/informersim/sim"
	"github.com/informersim/informersim/sim/world"
	"github.com/informersim/informersim/sim/world/narration"
)

// minimumResyncPeriod is client-go's floor for a handler's period (informer.md §2.1).
const minimumResyncPeriod = time.Second

// resync is the ResyncAlignment oracle (design.md "Oracles"; informer.md §2): it models every
// informer's resync exactly as §2 states it, from the registrations' narration ("register
// requested=… resync=… check=…") and the Reflector's LISTs, and holds the run to it:
//
//   - each registration's effective period, and the informer's check period, are those §2.2
//     computes (the minimum of 1s, a pre-start registration lowering the check period and
//     re-deriving every earlier registration's period, a late one raised to it);
//   - the resync timer ticks exactly one check period after the last successful LIST or the
//     previous tick (§2.3: a relist restarts it, a re-watch does not);
//   - at each tick the handlers due are exactly those whose effective period has run out since
//     their registration or their last resync (§2.4), so each resyncs at its requested period
//     rounded up to a whole number of check periods;
//   - a sync-class notification (equal RVs, §2.5) is buffered for exactly the registrations
//     whose flag the last tick set (all of them before the first tick);
//   - a resync (SyncAll) gives one sync update per cached object, at its cached RV, and nothing
//     for anything not cached.
type resync struct {
	m    *model
	infs map[string]*resyncInf
}

type resyncInf struct {
	check      time.Duration
	checkKnown bool
	anchor     time.Duration // the last LIST or tick the timer runs from
	ticking    bool
	handlers   map[string]*resyncHandler
	// syncAll holds the cached objects a SyncAll still owes a sync update, while one is being
	// processed.
	syncAll map[string]string
	inSync  bool
}

type resyncHandler struct {
	requested time.Duration // after the 1s minimum (and, for a late join, the raise to check)
	effective time.Duration
	next      time.Duration
	syncing   bool
}

func newResync(*world.World) Checker { return &resync{m: newModel(), infs: map[string]*resyncInf{}} }

func (c *resync) Name() string { return ResyncAlignment }

func (c *resync) inf(name string) *resyncInf {
	r := c.infs[name]
	if r == nil {
		r = &resyncInf{handlers: map[string]*resyncHandler{}}
		c.infs[name] = r
	}
	return r
}

// determine is client-go's determineResyncPeriod (informer.md §2.2).
func determine(desired, check time.Duration) time.Duration {
	switch {
	case desired == 0, check == 0:
		return 0
	case desired < check:
		return check
	}
	return desired
}

func (c *resync) Event(e sim.Event) string {
	msg := c.check(e)
	c.m.apply(e)
	return msg
}

func (c *resync) check(e sim.Event) string {
	infName, part := narration.SplitActor(e.Actor)
	if c.m.infs[infName] == nil && part == "" {
		return ""
	}
	r := c.inf(infName)
	n := c.m.inf(infName)
	if r.inSync && !(part == narration.PartQueue && e.Kind == narration.KindBuffer) {
		r.inSync = false
		if len(r.syncAll) > 0 {
			k := sortedKeys(r.syncAll)[0]
			return fmt.Sprintf("%s: a resync gave no sync update for the cached %s@%s", infName, k, r.syncAll[k])
		}
	}
	switch {
	case narration.IsHandlerEvent(e) && (e.Kind == narration.KindRegister || e.Kind == narration.KindJoin):
		return c.register(infName, part, e, n.started)
	case narration.IsHandlerEvent(e) && e.Kind == narration.KindRemove:
		delete(r.handlers, part)
	case part == "" && e.Kind == narration.KindStop:
		r.ticking = false
		clear(r.handlers)
	case part == narration.PartReflector:
		switch e.Kind {
		case narration.KindListed, narration.KindWatchListSynced:
			// A successful LIST, or the end of a watch-list's initial events, starts the timer
			// (informer.md §2.3, §7.5) when the informer resyncs.
			r.anchor, r.ticking = e.Time, r.check > 0 || !r.checkKnown
		case narration.KindRelistAfter, narration.KindList:
			r.ticking = false
		case narration.KindResyncCheck:
			return c.tick(infName, r, e)
		}
	case part == narration.PartQueue:
		switch e.Kind {
		case narration.KindPop:
			if d, _ := narration.Str(e, narration.FieldDelta); d == string(informer.SyncAll) {
				r.inSync = true
				r.syncAll = make(map[string]string, len(n.cache))
				for k, v := range n.cache {
					r.syncAll[k] = v
				}
			}
		case narration.KindBuffer:
			b, to := narration.Buffered(e)
			if r.inSync {
				rv, cached := r.syncAll[b.Key]
				switch {
				case b.Call != narration.CallUpdate || !b.Sync:
					return fmt.Sprintf("%s: a resync buffered %s, which is not a sync update", infName, b)
				case !cached && n.cache[b.Key] == "":
					return fmt.Sprintf("%s: a resync buffered %s for an object the cache does not hold", infName, b)
				case !cached:
					return fmt.Sprintf("%s: a resync buffered %s twice", infName, b)
				case rv != b.RV:
					return fmt.Sprintf("%s: a resync buffered %s, but the cache holds rv=%s", infName, b, rv)
				}
				delete(r.syncAll, b.Key)
			}
			if b.Sync {
				var want []string
				for _, h := range n.current() {
					if hs := r.handlers[h]; hs != nil && hs.syncing {
						want = append(want, h)
					}
				}
				if got := sortedCopy(to); strings.Join(got, ",") != strings.Join(sortedCopy(want), ",") {
					return fmt.Sprintf("%s: sync-class %s buffered for [%s], but the handlers whose resync is due are [%s]", infName, b, strings.Join(to, ","), strings.Join(want, ","))
				}
			}
		}
	}
	return ""
}

// register checks a registration's periods against informer.md §2.2 and starts its schedule.
func (c *resync) register(infName, h string, e sim.Event, started bool) string {
	r := c.inf(infName)
	requested, effective, check := narration.Dur(e, narration.FieldRequested), narration.Dur(e, narration.FieldResync), narration.Dur(e, narration.FieldCheck)
	if requested < 0 || effective < 0 || check < 0 {
		return fmt.Sprintf("%s/%s: unreadable resync periods", infName, h)
	}
	if narration.Bool(e, narration.FieldHosted) {
		// Registered before the world hosted the informer: only its effective period is
		// narrated, so §2.2 cannot be checked; its schedule is (the check period is learned
		// from the first tick when no registration tells it).
		r.handlers[h] = &resyncHandler{requested: effective, effective: effective, next: e.Time + effective, syncing: true}
		return ""
	}
	p := requested
	if p > 0 && p < minimumResyncPeriod {
		p = minimumResyncPeriod
	}
	wantCheck := check
	if r.checkKnown {
		wantCheck = r.check
		if p > 0 && p < r.check {
			if started {
				p = r.check
			} else {
				wantCheck = p
			}
		}
	} else if p > 0 && check != 0 && check < p {
		// The informer's default period (the first check period) is unknown here; whatever it
		// was, §2.2 leaves the check period at p or above.
		return fmt.Sprintf("%s/%s: check period %v below the handler's period %v", infName, h, check, p)
	}
	if check != wantCheck {
		return fmt.Sprintf("%s/%s: check period %v after the registration (requested %v), want %v (informer.md §2.2)", infName, h, check, requested, wantCheck)
	}
	if r.checkKnown && check != r.check {
		// A pre-start registration lowered the check period: every earlier registration's
		// effective period is derived again (its next resync is not moved).
		for _, hs := range r.handlers {
			hs.effective = determine(hs.requested, check)
		}
	}
	r.check, r.checkKnown = check, true
	if want := determine(p, check); effective != want {
		return fmt.Sprintf("%s/%s: effective resync period %v (requested %v, check %v), want %v (informer.md §2.2)", infName, h, effective, requested, check, want)
	}
	r.handlers[h] = &resyncHandler{requested: p, effective: effective, next: e.Time + effective, syncing: true}
	return ""
}

// tick checks one resync tick: its time, then the handlers it found due (informer.md §2.3, §2.4).
func (c *resync) tick(infName string, r *resyncInf, e sim.Event) string {
	if !r.ticking {
		return fmt.Sprintf("%s: resync tick at %s with no resync timer running (check period %v)", infName, sim.FormatSimTime(e.Time), r.check)
	}
	if !r.checkKnown {
		r.check, r.checkKnown = e.Time-r.anchor, true // only hosted registrations: learn it
	}
	if want := r.anchor + r.check; r.check == 0 || e.Time != want {
		return fmt.Sprintf("%s: resync tick at %s, want %s (one check period of %v after %s)", infName, sim.FormatSimTime(e.Time), sim.FormatSimTime(want), r.check, sim.FormatSimTime(r.anchor))
	}
	r.anchor = e.Time
	v, _ := narration.Str(e, narration.FieldDue)
	got := map[string]bool{}
	for _, h := range narration.ParseHandlerList(v) {
		got[h] = true
	}
	var want []string
	for _, h := range c.m.inf(infName).current() {
		hs := r.handlers[h]
		if hs == nil {
			continue
		}
		hs.syncing = hs.effective != 0 && e.Time >= hs.next
		if hs.syncing {
			hs.next = e.Time + hs.effective
			want = append(want, h)
		}
	}
	if strings.Join(sortedKeys(got), ",") != strings.Join(sortedCopy(want), ",") {
		return fmt.Sprintf("%s: resync tick at %s found [%s] due, want [%s] (informer.md §2.4)", infName, sim.FormatSimTime(e.Time), strings.Join(sortedKeys(got), ","), strings.Join(want, ","))
	}
	return ""
}

// Finish ends an open resync at the end of the trace.
func (c *resync) Finish() string {
	for _, name := range sortedKeys(c.infs) {
		if r := c.infs[name]; r.inSync && len(r.syncAll) > 0 {
			return fmt.Sprintf("%s: a resync gave no sync update for the cached %s", name, sortedKeys(r.syncAll)[0])
		}
	}
	return ""
}
