package world

import (
	"strconv"
	"testing"
)

// Goal: keyState.isRV answers as comparing with the formatted resourceVersion does, leading
// zeros included (its shortcut compares with the text the RV was parsed from). Method: every
// pair of a set of parsed texts and compared texts, against strconv.FormatUint.
func TestIsRVIsFormatCompare(t *testing.T) {
	texts := []string{"0", "00", "7", "007", "70", "12", "012", "18446744073709551615", "018446744073709551615"}
	others := append([]string{"", "+7", " 7", "7 "}, texts...)
	for _, parsed := range texts {
		rv, err := strconv.ParseUint(parsed, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		st := keyState{rv: rv, rvText: parsed}
		for _, text := range others {
			if got, want := st.isRV(text), text == strconv.FormatUint(rv, 10); got != want {
				t.Errorf("rv parsed from %q: isRV(%q) = %v, want %v", parsed, text, got, want)
			}
		}
	}
}
