package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/informersim/informersim/internal/chunklog"
)

// Field is one key=value pair of an event. Events carry an ordered list of fields, never a map,
// so their text is stable.
type Field struct {
	Key   string
	Value string
}

// F returns a field with a string value.
func F(key, value string) Field { return Field{Key: key, Value: value} }

// FInt returns a field with a decimal integer value.
func FInt(key string, v int64) Field { return Field{Key: key, Value: strconv.FormatInt(v, 10)} }

// FBool returns a field whose value is "true" or "false".
func FBool(key string, v bool) Field { return Field{Key: key, Value: strconv.FormatBool(v)} }

// FDur returns a field with a duration value in Go syntax ("1.5s").
func FDur(key string, d time.Duration) Field { return Field{Key: key, Value: d.String()} }

// Event is one entry of the trace: an action the scheduler ran, or narration an actor emitted
// while running one (same step number).
type Event struct {
	Step   int64         // the step the event belongs to; 0 before the first step
	Time   time.Duration // simulated time since the epoch
	Actor  string
	Kind   string
	Fields []Field
}

// AppendText appends the canonical one-line form of e, without a newline:
//
//	12     +1.250s  reflector    list           rv=0 limit=500
//
// Columns: step (right-aligned, 6), time (right-aligned, 14), actor (left, 12), kind (left, 14),
// then the fields. Wider values push the columns right rather than being cut.
func (e *Event) AppendText(b []byte) []byte {
	var sb [20]byte
	b = appendPadLeft(b, strconv.AppendInt(sb[:0], e.Step, 10), 6)
	b = append(b, ' ')
	var tb [32]byte
	b = appendPadLeft(b, appendSimTime(tb[:0], e.Time), 14)
	b = append(b, "  "...)
	b = appendPadRight(b, e.Actor, 12)
	b = append(b, ' ')
	if len(e.Fields) == 0 {
		return append(b, e.Kind...)
	}
	// Padded to 13 plus one separating space: a 13-character kind lines up exactly as before,
	// and a longer one still stays apart from its first field.
	b = appendPadRight(b, e.Kind, 13)
	b = append(b, ' ')
	for i, f := range e.Fields {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, f.Key...)
		b = append(b, '=')
		b = appendValue(b, f.Value)
	}
	return b
}

// String returns the canonical line of e.
func (e Event) String() string { return string(e.AppendText(nil)) }

// appendValue quotes values that would make the line ambiguous (spaces, '=', quotes, control
// characters, empty), so a line splits back into its fields.
func appendValue(b []byte, v string) []byte {
	if v == "" || !plainValue(v) {
		return appendQuoted(b, v)
	}
	return append(b, v...)
}

// appendQuoted appends strconv.Quote(v). A value of printable ASCII (a control plane's "status
// of deployments default/web at generation 2", an error's text: most quoted values) is quoted
// here, byte by byte: strconv decodes and classifies each rune, which made the quoting most of
// the cost of hashing and narrating those events. Anything else goes to strconv.
func appendQuoted(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return strconv.AppendQuote(b, v)
		}
	}
	b = append(b, '"')
	for i := 0; i < len(v); {
		// The longest run without a byte to escape goes at once.
		j := i
		for j < len(v) && v[j] != '"' && v[j] != '\\' {
			j++
		}
		b = append(b, v[i:j]...)
		if j == len(v) {
			break
		}
		b = append(b, '\\', v[j])
		i = j + 1
	}
	return append(b, '"')
}

// plainValue reports whether v needs no quotes: printable ASCII without '=', '"' or '\\' (space,
// tab and line ends are not printable). One pass over the bytes: every event's every field
// value goes through it when the trace is hashed.
func plainValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x21 || c > 0x7e || c == '=' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// spaces pads the trace's columns (the widest is 14).
const spaces = "                "

func appendPadLeft(b, s []byte, width int) []byte {
	if n := width - len(s); n > 0 {
		b = append(b, spaces[:n]...)
	}
	return append(b, s...)
}

func appendPadRight(b []byte, s string, width int) []byte {
	b = append(b, s...)
	if n := width - len(s); n > 0 {
		b = append(b, spaces[:n]...)
	}
	return b
}

// appendSimTime formats d as signed seconds with at least 3 and at most 9 decimals ("+1.250s",
// "+0.000000001s"). Exact to the nanosecond, so the hash covers every difference in time.
func appendSimTime(b []byte, d time.Duration) []byte {
	if d < 0 {
		b = append(b, '-')
		d = -d
	} else {
		b = append(b, '+')
	}
	if d < 0 { // math.MinInt64, its own negation: printed as it always was
		return appendSimTimeSigned(b, d)
	}
	b = strconv.AppendUint(b, uint64(d/time.Second), 10)
	frac := uint32(d % time.Second)
	ms, rest := frac/1e6, frac%1e6
	if rest == 0 { // whole milliseconds
		return append(b, '.', byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 's')
	}
	// Nine digits in three groups without a loop (most of a run's times are drawn to the
	// nanosecond), then the trailing zeros cut: the last six digits are not all zeros, so the
	// millisecond's three stay.
	us, ns := rest/1000, rest%1000
	digits := [11]byte{'.',
		byte('0' + ms/100), byte('0' + ms/10%10), byte('0' + ms%10),
		byte('0' + us/100), byte('0' + us/10%10), byte('0' + us%10),
		byte('0' + ns/100), byte('0' + ns/10%10), byte('0' + ns%10), 's'}
	n := 10
	for digits[n-1] == '0' {
		n--
	}
	digits[n] = 's'
	return append(b, digits[:n+1]...)
}

// appendSimTimeSigned is appendSimTime's digits of a d that stayed negative after the sign was
// written (math.MinInt64), by the signed arithmetic appendSimTime always used for it.
func appendSimTimeSigned(b []byte, d time.Duration) []byte {
	b = strconv.AppendInt(b, int64(d/time.Second), 10)
	b = append(b, '.')
	frac := int64(d % time.Second)
	var digits [9]byte
	for i := 8; i >= 0; i-- {
		digits[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := 9
	for n > 3 && digits[n-1] == '0' {
		n--
	}
	b = append(b, digits[:n]...)
	return append(b, 's')
}

// FormatSimTime formats a simulated time as the trace does ("+1.250s").
func FormatSimTime(d time.Duration) string { return string(appendSimTime(nil, d)) }

// Trace is the record of a run: a streaming SHA-256 over the canonical text of every event, and
// the most recent events kept in memory (see Config.Trace and Config.MaxTraceEvents).
//
// Kept events live in a chunklog.Log and their fields in a shared arena of fieldChunk fields: a
// run keeps every event it emits (up to the bound), and a slice grown by append copied every
// kept event each time it doubled, while copying each event's fields into a slice of its own
// cost an allocation per event. Together they were most of what keeping the trace (TraceFull,
// what world.New uses) added to a run.
type Trace struct {
	level  TraceLevel
	max    int
	hash   hash.Hash
	line   []byte // scratch for the canonical line; reused so hashing does not allocate
	events chunklog.Log[Event]
	// fields is the arena chunk the kept events' fields are copied into; each event's Fields
	// is a slice of it capped at its own end, so an append to it cannot reach a neighbour.
	fields  []Field
	total   int64
	dropped int64
	// keptBytes is the size of the kept events' canonical lines while none was dropped: more
	// than their narration (Narrate), whose line of an event is at least seven bytes shorter.
	keptBytes int
}

// fieldChunk is the most fields a chunk of the field arena holds (an event with more fields
// gets a chunk of its own size). The first chunks are smaller, each twice the one before from
// chunklog.FirstChunk, so that a short run does not take room for thousands.
const fieldChunk = 1024

func newTrace(level TraceLevel, maxEvents int) *Trace {
	t := &Trace{level: level, max: maxEvents}
	if level != TraceNone {
		t.hash = sha256.New()
		t.line = make([]byte, 0, 256)
	}
	return t
}

func (t *Trace) record(e *Event) {
	t.total++
	if t.level == TraceNone {
		return
	}
	t.line = e.AppendText(t.line[:0])
	t.line = append(t.line, '\n')
	t.hash.Write(t.line)
	if t.level != TraceFull {
		return
	}
	kept := *e
	kept.Fields = nil // not the caller's slice, which it may reuse
	if n := len(e.Fields); n > 0 {
		if cap(t.fields)-len(t.fields) < n {
			size := min(fieldChunk, max(chunklog.FirstChunk, 2*cap(t.fields)))
			t.fields = make([]Field, 0, max(size, n))
		}
		from := len(t.fields)
		t.fields = append(t.fields, e.Fields...)
		kept.Fields = t.fields[from:len(t.fields):len(t.fields)]
	}
	t.events.Append(kept)
	t.keptBytes += len(t.line)
	if t.events.Len() > t.max {
		t.events.DropOldest(1)
		t.dropped++
	}
}

// Hash returns the hex SHA-256 of the canonical text of every event so far (each line ending in
// a newline), whether or not the events are kept. Empty with TraceNone.
func (t *Trace) Hash() string {
	if t.hash == nil {
		return ""
	}
	return hex.EncodeToString(t.hash.Sum(nil))
}

// Len returns the number of events recorded so far, kept or not.
func (t *Trace) Len() int64 { return t.total }

// Dropped returns how many events were recorded but are no longer kept.
func (t *Trace) Dropped() int64 { return t.dropped }

// Events returns a copy of the kept events, oldest first.
func (t *Trace) Events() []Event {
	return t.events.All()
}

// WriteText writes the kept events in canonical form, one per line. If older events were
// dropped, a first line says how many.
func (t *Trace) WriteText(w io.Writer) error {
	var b []byte
	if t.dropped > 0 {
		b = append(b, "... "...)
		b = strconv.AppendInt(b, t.dropped, 10)
		b = append(b, " earlier events not kept\n"...)
	}
	for _, e := range t.Events() {
		b = e.AppendText(b)
		b = append(b, '\n')
	}
	_, err := w.Write(b)
	return err
}

// String returns what WriteText writes.
func (t *Trace) String() string {
	var sb strings.Builder
	_ = t.WriteText(&sb)
	return sb.String()
}

// jsonEvent is the JSON Lines form of an event. Fields stay an ordered list of [key, value].
type jsonEvent struct {
	Step   int64       `json:"step"`
	TimeNS int64       `json:"time_ns"`
	Time   string      `json:"time"`
	Actor  string      `json:"actor"`
	Kind   string      `json:"kind"`
	Fields [][2]string `json:"fields,omitempty"`
}

// AppendJSON appends e as one JSON object, without a newline.
func (e *Event) AppendJSON(b []byte) []byte {
	je := jsonEvent{Step: e.Step, TimeNS: int64(e.Time), Time: FormatSimTime(e.Time), Actor: e.Actor, Kind: e.Kind}
	for _, f := range e.Fields {
		je.Fields = append(je.Fields, [2]string{f.Key, f.Value})
	}
	out, err := json.Marshal(je)
	if err != nil {
		panic(err) // cannot happen: only strings and integers
	}
	return append(b, out...)
}

// WriteJSON writes the kept events as JSON Lines.
func (t *Trace) WriteJSON(w io.Writer) error {
	var b []byte
	for _, e := range t.Events() {
		b = e.AppendJSON(b)
		b = append(b, '\n')
	}
	_, err := w.Write(b)
	return err
}

// Narrate renders the narration of events, one line each, as "time actor: kind fields"
// ("+0.017s inf1/h1: OnAdd obj=default/p1 rv=2 initial=true"), leaving out the scheduler's step
// events (the first event of each step), so a run reads like a worked trace.
func Narrate(events []Event) string {
	return narrate(func(f func(*Event)) {
		for i := range events {
			f(&events[i])
		}
	}, 0)
}

// Narrate returns Narrate(t.Events()) without copying the kept events. While no event was
// dropped, the narration is formatted once, into a buffer of the kept lines' size (keptBytes):
// a harness run narrates every trace it keeps, and counting the narration's bytes first was
// formatting it twice.
func (t *Trace) Narrate() string {
	if t.dropped == 0 {
		return narrate(t.events.Each, t.keptBytes)
	}
	return narrate(t.events.Each, 0)
}

// narrate renders the events each hands its argument, in order, as Narrate does, into a buffer
// of size bytes when size is at least the narration's size. With size 0 it formats them twice,
// first to count the bytes, so that the text is still written once into a buffer of its size:
// a narration grown by append and copied into a string allocated three times its size.
func narrate(each func(func(*Event)), size int) string {
	var line []byte
	var n narrator
	if size == 0 {
		each(func(e *Event) {
			line = n.appendLine(line[:0], e)
			size += len(line)
		})
		n = narrator{}
	}
	var sb strings.Builder
	sb.Grow(size)
	each(func(e *Event) {
		line = n.appendLine(line[:0], e)
		sb.Write(line)
	})
	return sb.String()
}

// narrator writes the narration's lines, leaving out the first event of each step.
type narrator struct{ last int64 }

// appendLine appends e's line, or nothing when e is the first event of its step.
func (n *narrator) appendLine(b []byte, e *Event) []byte {
	if e.Step != n.last {
		n.last = e.Step
		return b
	}
	b = appendSimTime(b, e.Time)
	b = append(b, ' ')
	b = append(b, e.Actor...)
	b = append(b, ": "...)
	b = append(b, e.Kind...)
	for _, f := range e.Fields {
		b = append(b, ' ')
		b = append(b, f.Key...)
		b = append(b, '=')
		b = appendValue(b, f.Value)
	}
	return append(b, '\n')
}
