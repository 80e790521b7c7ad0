package simtest

import (
	"strconv"
	"time"

	"k8s.io/utils/clock"

	"github.com/informersim/informersim/sim"
)

// ToyConfig shapes a Toy. Zero fields take the defaults in brackets.
type ToyConfig struct {
	Producers        int           // producer actors [3]
	Consumers        int           // consumer actors [2]
	Timers           int           // re-arming timers that also push items; negative: none [2]
	MaxBufferItems   int           // capacity of the shared buffer [8]
	ItemsPerProducer int           // items each producer pushes; negative means no limit [5]
	FiresPerTimer    int           // fires of each timer; negative means no limit [3]
	MaxTimerDelay    time.Duration // timer delays are uniform in (0, MaxTimerDelay] [100ms]
	TickerPeriod     time.Duration // period of the ticker actor; 0 means no ticker
	Ticks            int           // ticks read before the ticker is stopped [3]
	Narrate          bool          // emit narration events for every push and pop
	// Cached adds the producers and consumers with sim.Sim.AddCachedActor, waking them all at
	// every change of the buffer: the run must be the very run of the same toy without it.
	Cached bool
}

func (c ToyConfig) withDefaults() ToyConfig {
	def := func(p *int, v int) {
		if *p == 0 {
			*p = v
		}
	}
	def(&c.Producers, 3)
	def(&c.Consumers, 2)
	def(&c.Timers, 2)
	def(&c.MaxBufferItems, 8)
	def(&c.ItemsPerProducer, 5)
	def(&c.FiresPerTimer, 3)
	c.Timers = max(c.Timers, 0)
	def(&c.Ticks, 3)
	if c.MaxTimerDelay == 0 {
		c.MaxTimerDelay = 100 * time.Millisecond
	}
	return c
}

// Toy is a running toy world.
type Toy struct {
	s   *sim.Sim
	cfg ToyConfig
	buf []int64 // the shared buffer; a ring would do, but it stays small
	// wakers wake the cached actors (ToyConfig.Cached): what they offer depends on the buffer.
	wakers []sim.Waker

	// Consumed counts items popped; Checksum folds each popped item in pop order, so it
	// changes with the interleaving.
	Consumed int64
	Checksum uint64
	Ticks    int
}

// NewToy builds the toy world's actors and timers on s.
func NewToy(s *sim.Sim, cfg ToyConfig) *Toy {
	cfg = cfg.withDefaults()
	t := &Toy{s: s, cfg: cfg, buf: make([]int64, 0, cfg.MaxBufferItems)}
	for i := range cfg.Producers {
		p := &producer{toy: t, name: "producer/" + strconv.Itoa(i), left: cfg.ItemsPerProducer}
		p.act = sim.Action{Name: "push", Run: p.push}
		t.add(p)
	}
	for i := range cfg.Consumers {
		c := &consumer{toy: t, name: "consumer/" + strconv.Itoa(i)}
		c.act = sim.Action{Name: "pop", Run: c.pop}
		t.add(c)
	}
	for i := range cfg.Timers {
		tm := &timer{toy: t, name: "timer/" + strconv.Itoa(i), left: cfg.FiresPerTimer}
		tm.arm()
	}
	if cfg.TickerPeriod > 0 {
		tk := &tickerActor{toy: t, tk: s.ClockFor("ticker").NewTicker(cfg.TickerPeriod)}
		tk.act = sim.Action{Name: "read", Run: tk.read}
		s.AddActor(tk)
	}
	s.SetKnob("toy.producers", strconv.Itoa(cfg.Producers))
	s.SetKnob("toy.consumers", strconv.Itoa(cfg.Consumers))
	s.SetKnob("toy.timers", strconv.Itoa(cfg.Timers))
	s.SetKnob("toy.max_buffer_items", strconv.Itoa(cfg.MaxBufferItems))
	return t
}

// add adds a producer or a consumer, cached or not as the config says.
func (t *Toy) add(a sim.Actor) {
	if t.cfg.Cached {
		t.wakers = append(t.wakers, t.s.AddCachedActor(a))
		return
	}
	t.s.AddActor(a)
}

// changed wakes the cached actors after a change of the buffer.
func (t *Toy) changed() {
	for _, w := range t.wakers {
		w.Wake()
	}
}

// Buffered returns the number of items in the shared buffer.
func (t *Toy) Buffered() int { return len(t.buf) }

func (t *Toy) full() bool { return len(t.buf) >= t.cfg.MaxBufferItems }

func (t *Toy) push(actor string, item int64) {
	t.buf = append(t.buf, item)
	t.changed()
	if t.cfg.Narrate {
		t.s.Emit(actor, "pushed", sim.FInt("item", item), sim.FInt("len", int64(len(t.buf))))
	}
}

type producer struct {
	toy  *Toy
	name string
	left int // items still to push; negative: unlimited
	seq  int64
	act  sim.Action
}

func (p *producer) Name() string { return p.name }

func (p *producer) Actions(add func(sim.Action)) {
	if p.left != 0 && !p.toy.full() {
		add(p.act)
	}
}

func (p *producer) push() {
	if p.left > 0 {
		p.left--
	}
	p.seq++
	v := p.toy.s.Rand(sim.StreamWorkload).Int64N(1000)
	p.toy.push(p.name, p.seq*1000+v)
}

type consumer struct {
	toy  *Toy
	name string
	act  sim.Action
}

func (c *consumer) Name() string { return c.name }

func (c *consumer) Actions(add func(sim.Action)) {
	if len(c.toy.buf) > 0 {
		add(c.act)
	}
}

func (c *consumer) pop() {
	t := c.toy
	item := t.buf[0]
	copy(t.buf, t.buf[1:])
	t.buf = t.buf[:len(t.buf)-1]
	t.changed()
	if t.s.FaultsEnabled() && t.s.Fault("toy/requeue") {
		// A BUGGIFY-style rare path: put the item back at the end, reordering it.
		t.buf = append(t.buf, item)
		return
	}
	t.Consumed++
	t.Checksum = t.Checksum*1_000_003 + uint64(item)
	if t.cfg.Narrate {
		t.s.Emit(c.name, "popped", sim.FInt("item", item), sim.FInt("len", int64(len(t.buf))))
	}
}

// timer re-arms itself with a random delay; each fire pushes an item if there is room, racing
// with the producers.
type timer struct {
	toy  *Toy
	name string
	left int
	t    *sim.Timer // created on the first arm, then Reset: one allocation per timer
}

func (tm *timer) arm() {
	if tm.left == 0 {
		return
	}
	if tm.left > 0 {
		tm.left--
	}
	d := 1 + time.Duration(tm.toy.s.Rand(sim.StreamJitter).Int64N(int64(tm.toy.cfg.MaxTimerDelay)))
	if tm.t == nil {
		tm.t = tm.toy.s.AfterFunc(d, tm.name, "fire", tm.onFire)
		return
	}
	tm.t.Reset(d)
}

func (tm *timer) onFire() {
	if !tm.toy.full() {
		tm.toy.push(tm.name, -tm.toy.s.Now().Milliseconds())
	}
	tm.arm()
}

// tickerActor reads a clock ticker's channel when a tick is pending, and stops the ticker after
// enough ticks.
type tickerActor struct {
	toy *Toy
	tk  clock.Ticker
	act sim.Action
}

func (t *tickerActor) Name() string { return "ticker" }

func (t *tickerActor) Actions(add func(sim.Action)) {
	if t.tk != nil && len(t.tk.C()) > 0 {
		add(t.act)
	}
}

func (t *tickerActor) read() {
	at := <-t.tk.C() // a tick is pending (Actions checked), so this never blocks
	t.toy.Ticks++
	if t.toy.cfg.Narrate {
		t.toy.s.Emit("ticker", "ticked", sim.F("at", sim.FormatSimTime(at.Sub(sim.Epoch()))))
	}
	if t.toy.Ticks >= t.toy.cfg.Ticks {
		t.tk.Stop()
		t.tk = nil
	}
}

// DeterminismToy returns the toy world the determinism checks run: every kind of race the engine
// schedules (producers and consumers, re-arming timers, a ticker), narrated, a few hundred steps.
// A function, not a variable, so no test can change what the others run.
func DeterminismToy() ToyConfig {
	return ToyConfig{
		Producers:        4,
		Consumers:        3,
		Timers:           3,
		MaxBufferItems:   6,
		ItemsPerProducer: 20,
		FiresPerTimer:    10,
		MaxTimerDelay:    50 * time.Millisecond,
		TickerPeriod:     30 * time.Millisecond,
		Ticks:            5,
		Narrate:          true,
	}
}

// Run builds a Sim for cfg, adds a Toy shaped by toy and runs it until quiescent.
func Run(cfg sim.Config, toy ToyConfig) (*sim.Sim, *Toy, error) {
	s, err := sim.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	t := NewToy(s, toy)
	return s, t, s.RunUntilQuiescent()
}

// Hash runs DeterminismToy for seed and policy and returns the trace hash.
func Hash(seed uint64, policy sim.Policy) (string, error) {
	s, _, err := Run(sim.Config{Seed: seed, Policy: policy, Trace: sim.TraceHashOnly}, DeterminismToy())
	if err != nil {
		return "", err
	}
	return s.Trace().Hash(), nil
}
