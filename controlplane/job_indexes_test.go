package controlplane

import (
	"reflect"
	"testing"
)

func TestCompletedIndexesText(t *testing.T) {
	for _, c := range []struct {
		set  []int64
		text string
	}{
		{[]int64{1, 3, 4, 5, 7}, "1,3-5,7"},
		{[]int64{0, 1}, "0,1"},
		{[]int64{0, 1, 2, 3, 4}, "0-4"},
		{[]int64{2}, "2"},
	} {
		set := map[int64]bool{}
		for _, i := range c.set {
			set[i] = true
		}
		if got := formatIndexes(set); got != c.text {
			t.Errorf("%v: %q, want %q", c.set, got, c.text)
		}
		if got := parseIndexes(c.text); !reflect.DeepEqual(got, c.set) {
			t.Errorf("%q parses to %v, want %v", c.text, got, c.set)
		}
	}
}
