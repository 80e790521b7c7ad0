package sim

import (
	"strings"
	"testing"
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
