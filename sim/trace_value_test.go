package sim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Goal: appendValue quotes exactly the values it quoted when it asked strings.ContainsAny for
// the separators and then checked for printable ASCII. Method: every one- and two-byte string
// and a few longer ones (UTF-8, invalid UTF-8, quotes inside), against that former condition.
func TestPlainValueIsTheFormerCondition(t *testing.T) {
	former := func(v string) bool { // true: quote
		if v == "" || strings.ContainsAny(v, " =\"\\\t\n\r") {
			return true
		}
		for i := 0; i < len(v); i++ {
			if v[i] < 0x21 || v[i] > 0x7e {
				return true
			}
		}
		return false
	}
	values := []string{"", "default/p1@3", "a=b", `say "hi"`, `back\slash`, "tab\there", "é", "\xff", "ok-1.2_3:4/5"}
	for i := 0; i < 256; i++ {
		values = append(values, string([]byte{byte(i)}))
		for _, j := range []byte{'a', '=', ' ', 0x7f, 0x80} {
			values = append(values, string([]byte{byte(i), j}))
		}
	}
	for _, v := range values {
		if got, want := v == "" || !plainValue(v), former(v); got != want {
			t.Errorf("%q: quoted %v, formerly %v", v, got, want)
		}
	}
}

// Goal: appendQuoted is strconv.Quote. Method: every one- and two-byte string, and random
// strings of printable ASCII with quotes and backslashes, of any byte, and of UTF-8.
func TestAppendQuotedIsStrconvQuote(t *testing.T) {
	var values []string
	for i := 0; i < 256; i++ {
		values = append(values, string([]byte{byte(i)}))
		for j := 0; j < 256; j++ {
			values = append(values, string([]byte{byte(i), byte(j)}))
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	alphabets := []string{` "\ab=`, "status of deployments default/web-1 at generation 2 \"\\", "é\t\x00\x7f\xff ok"}
	for range 3000 {
		a := alphabets[rnd.IntN(len(alphabets))]
		b := make([]byte, rnd.IntN(40))
		for i := range b {
			b[i] = a[rnd.IntN(len(a))]
		}
		values = append(values, string(b))
	}
	for _, v := range values {
		if got, want := string(appendQuoted([]byte("x"), v)), "x"+strconv.Quote(v); got != want {
			t.Fatalf("appendQuoted(%q) = %s, want %s", v, got, want)
		}
	}
}

// Goal: appendSimTime's whole-millisecond shortcut prints what its digit loop prints. Method:
// durations of whole and partial milliseconds, microseconds and nanoseconds, both signs,
// against the loop alone.
func TestAppendSimTimeAsItsDigits(t *testing.T) {
	byDigits := func(d time.Duration) string {
		sign := "+"
		if d < 0 {
			sign, d = "-", -d
		}
		frac := fmt.Sprintf("%09d", int64(d%time.Second))
		frac = strings.TrimRight(frac, "0")
		for len(frac) < 3 {
			frac += "0"
		}
		return fmt.Sprintf("%s%d.%ss", sign, int64(d/time.Second), frac)
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	units := []time.Duration{time.Nanosecond, time.Microsecond, time.Millisecond, 10 * time.Millisecond, time.Second}
	for range 20000 {
		d := time.Duration(rnd.Int64N(1000000)) * units[rnd.IntN(len(units))]
		if rnd.IntN(4) == 0 {
			d = -d
		}
		if got, want := FormatSimTime(d), byDigits(d); got != want {
			t.Fatalf("FormatSimTime(%d) = %s, want %s", int64(d), got, want)
		}
	}
}

// TestAppendSimTimeExtremes: the limits of a Duration print as they always did, the most
// negative one (its own negation) included.
func TestAppendSimTimeExtremes(t *testing.T) {
	for d, want := range map[time.Duration]string{
		math.MinInt64:     "--9223372036.(+,))+(0(s",
		math.MaxInt64:     "+9223372036.854775807s",
		math.MinInt64 + 1: "-9223372036.854775807s",
		-1:                "-0.000000001s",
		0:                 "+0.000s",
		time.Microsecond:  "+0.000001s",
		100 * time.Second: "+100.000s",
	} {
		if got := FormatSimTime(d); got != want {
			t.Errorf("FormatSimTime(%d) = %s, want %s", int64(d), got, want)
		}
	}
}
