package sim

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/informersim/informersim/internal/chunklog"
)

// Goal: a trace keeps exactly the newest MaxTraceEvents events with their own fields, however
// its chunks of events and of fields fall (Trace.record). Method: for bounds around the chunk
// sizes, record up to 2,000 events with 0 to 5 fields each (one with more fields than a field
// chunk), reusing the caller's field slice between events; Events, Dropped, Len and WriteText
// must equal those of a plain list of the newest events, Narrate the narration of that list
// (three events a step, some values quoted), and appending to a returned event's fields must
// leave the trace's events as they were.
func TestTraceKeepsTheNewestEvents(t *testing.T) {
	for _, bound := range []int{1, 7, chunklog.FirstChunk - 1, chunklog.FirstChunk, chunklog.FirstChunk + 1, 3*chunklog.FirstChunk - 1, 3 * chunklog.FirstChunk, 3*chunklog.FirstChunk + 1, chunklog.DefaultMaxChunk - 1, chunklog.DefaultMaxChunk, chunklog.DefaultMaxChunk + 1, 3*chunklog.DefaultMaxChunk + 5, 5000} {
		for _, total := range []int{0, 1, chunklog.DefaultMaxChunk, 2000} {
			tr := newTrace(TraceFull, bound)
			var want []Event
			scratch := make([]Field, 0, fieldChunk+1)
			for i := range total {
				n := i % 6
				if i == total/2 {
					n = fieldChunk + 1
				}
				scratch = scratch[:0]
				for j := range n {
					v := fmt.Sprintf("v%d.%d", i, j)
					if j == 2 {
						v = fmt.Sprintf("v %d", i) // quoted
					}
					scratch = append(scratch, F(fmt.Sprintf("k%d", j), v))
				}
				e := Event{Step: int64(i / 3), Time: time.Duration(i) * time.Millisecond, Actor: "a", Kind: "k", Fields: scratch}
				tr.record(&e)
				if n > 0 {
					e.Fields = append([]Field(nil), scratch...)
				} else {
					e.Fields = nil
				}
				want = append(want, e)
				for j := range scratch { // the caller reuses its slice
					scratch[j] = F("reused", "x")
				}
			}
			want = want[max(0, len(want)-bound):]
			got := tr.Events()
			if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
				t.Fatalf("bound %d, %d events: kept %d events, want %d (first difference at %d)", bound, total, len(got), len(want), firstDiff(got, want))
			}
			if d := tr.Dropped(); d != int64(total-len(want)) || tr.Len() != int64(total) {
				t.Fatalf("bound %d, %d events: Dropped %d, Len %d; want %d, %d", bound, total, d, tr.Len(), total-len(want), total)
			}
			var text, wantText strings.Builder
			if err := tr.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if d := total - len(want); d > 0 {
				fmt.Fprintf(&wantText, "... %d earlier events not kept\n", d)
			}
			for _, e := range want {
				wantText.WriteString(e.String() + "\n")
			}
			if text.String() != wantText.String() {
				t.Fatalf("bound %d, %d events: WriteText differs from the newest events' lines", bound, total)
			}
			if n, wantN := tr.Narrate(), narration(want); n != wantN {
				t.Fatalf("bound %d, %d events: Narrate gave\n%s\nwant\n%s", bound, total, n, wantN)
			}
			for i := range got {
				_ = append(got[i].Fields, F("appended", "y"))
			}
			if again := tr.Events(); len(again) != len(want) || (len(want) > 0 && !reflect.DeepEqual(again, want)) {
				t.Fatalf("bound %d, %d events: appending to a returned event's fields changed the trace", bound, total)
			}
		}
	}
}

// narration is what Narrate writes for events, written plainly: a line for each event but the
// first of each step.
func narration(events []Event) string {
	var sb strings.Builder
	for i, e := range events {
		if i == 0 && e.Step != 0 || i > 0 && e.Step != events[i-1].Step {
			continue
		}
		fmt.Fprintf(&sb, "%s %s: %s", FormatSimTime(e.Time), e.Actor, e.Kind)
		for _, f := range e.Fields {
			v := f.Value
			if v == "" || strings.ContainsAny(v, " =\"\\") {
				v = strconv.Quote(v)
			}
			fmt.Fprintf(&sb, " %s=%s", f.Key, v)
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

func firstDiff(a, b []Event) int {
	for i := range min(len(a), len(b)) {
		if !reflect.DeepEqual(a[i], b[i]) {
			return i
		}
	}
	return min(len(a), len(b))
}

// Goal: Trace.Narrate writes the narration once, into a buffer of the kept lines' size, which
// holds it: the kept events' canonical lines are longer than their narration. Method: random
// events (actors and kinds from empty to wider than their columns, steps of one to four
// events, fields with quoted values, times of any width) recorded without a drop; the narration
// must be Narrate's of the events and no longer than the lines counted.
func TestNarrationFitsTheKeptLines(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	name := func() string { return strings.Repeat("x", rnd.IntN(22)) }
	for run := range 200 {
		tr := newTrace(TraceFull, 1000)
		step := int64(0)
		for range rnd.IntN(300) {
			if rnd.IntN(3) == 0 {
				step += int64(rnd.IntN(3))
			}
			var fields []Field
			for range rnd.IntN(4) {
				v := name()
				if rnd.IntN(3) == 0 {
					v += ` "q" `
				}
				fields = append(fields, F(name(), v))
			}
			e := Event{Step: step, Time: time.Duration(rnd.Int64N(1 << 50)), Actor: name(), Kind: name(), Fields: fields}
			tr.record(&e)
		}
		got := tr.Narrate()
		if want := Narrate(tr.Events()); got != want {
			t.Fatalf("run %d: Narrate differs from the events' narration", run)
		}
		if len(got) > tr.keptBytes {
			t.Fatalf("run %d: the narration has %d bytes, the kept lines %d", run, len(got), tr.keptBytes)
		}
	}
}
