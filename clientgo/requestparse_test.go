package clientgo

import (
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestRequestParsingAsTheLibrary checks pathSegments against strings.Split and queryValue
// against url.ParseQuery on random paths and queries: empty segments and slashes at either end,
// more segments than the array, pairs without "=", empty pairs, semicolons, escapes ('%', '+',
// a bad '%'), repeated keys, and a query past ParseQuery's limit of pairs.
func TestRequestParsingAsTheLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 9))
	const pathChars = "ab/"
	for range 20000 {
		b := make([]byte, r.IntN(30))
		for i := range b {
			b[i] = pathChars[r.IntN(len(pathChars))]
		}
		var buf [maxPathSegments]string
		if got, want := pathSegments(string(b), &buf), strings.Split(strings.Trim(string(b), "/"), "/"); !slices.Equal(got, want) {
			t.Fatalf("pathSegments(%q) = %q, want %q", b, got, want)
		}
	}
	keys := []string{"watch", "resourceVersion", "w%61tch", "wat+ch", "watch;", "", "limit"}
	values := []string{"true", "1", "0", "", "tr%75e", "%zz", "a+b", "false", "tr;ue"}
	for range 20000 {
		var pairs []string
		for range r.IntN(5) {
			switch k := keys[r.IntN(len(keys))]; r.IntN(4) {
			case 0:
				pairs = append(pairs, k)
			default:
				pairs = append(pairs, k+"="+values[r.IntN(len(values))])
			}
		}
		q := strings.Join(pairs, "&")
		parsed, _ := url.ParseQuery(q)
		for _, key := range []string{"watch", "resourceVersion"} {
			if got, want := queryValue(q, key), parsed.Get(key); got != want {
				t.Fatalf("queryValue(%q, %q) = %q, want %q", q, key, got, want)
			}
		}
	}
	long := strings.Repeat("a=b&", 20000) + "watch=true"
	parsed, _ := url.ParseQuery(long)
	if got, want := queryValue(long, "watch"), parsed.Get("watch"); got != want {
		t.Fatalf("a query of 20,001 pairs: %q, want %q", got, want)
	}
}
