// Command rangeorder prints, for seeds 1, 1, 2 and 3, the order in which maps filled alike
// range (a map of strings, a small map of ints, a map keyed by a struct), after whether
// goseed.Active says the deterministic mode is on. TestOverlayMakesRangesFollowTheSeed builds
// it with the overlay and without.
package main

import (
	"fmt"
	"strings"

	"github.com/informersim/informersim/internal/goseed"
)

type key struct {
	a string
	b int
}

func order(seed uint64) string {
	goseed.Begin(seed, nil)
	defer goseed.End()
	var b strings.Builder
	s := map[string]bool{}
	for _, k := range strings.Fields("a b c d e f g h i j k l m n o p q r s t u v w x y z") {
		s[k] = true
	}
	for k := range s {
		b.WriteString(k)
	}
	b.WriteByte('/')
	n := map[int]bool{1: true, 2: true, 3: true, 4: true, 5: true, 6: true}
	for k := range n {
		fmt.Fprint(&b, k)
	}
	b.WriteByte('/')
	st := map[key]bool{}
	for i := range 20 {
		st[key{fmt.Sprint(i), i}] = true
	}
	for k := range st {
		fmt.Fprint(&b, k.b, ",")
	}
	return b.String()
}

func main() {
	fmt.Println(goseed.Active())
	fmt.Println(order(1))
	fmt.Println(order(1))
	fmt.Println(order(2))
	fmt.Println(order(3))
}
