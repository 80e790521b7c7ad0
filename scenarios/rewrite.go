package scenarios

import (
	"fmt"
	"strconv"
	"strings"
)

// Rewrite returns text (the file the run read) with each directive's expected block replaced by
// what the directive printed in this run: a scenario file kept as a regression test is renewed
// this way after a deliberate change (informersim run FILE --rewrite). Everything else in the
// file, comments and blank lines included, is kept as written. It is an error when the text is
// not the one the run read (a step's directive is not where its position says).
func (r *Result) Rewrite(text string) (string, error) {
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	next := 0 // the first line (0-based) not yet copied
	for _, s := range r.Steps {
		_, num, _ := strings.Cut(s.Pos[len(r.Name):], ":")
		n, err := strconv.Atoi(num)
		if err != nil || n < 1 || n-1 < next || n > len(lines) {
			return "", fmt.Errorf("scenarios: %s: rewrite: the step at %q is not in the text", r.Name, s.Pos)
		}
		sep := n - 1
		for sep < len(lines) && strings.TrimRight(lines[sep], "\r\n") != "----" {
			sep++
		}
		if sep == len(lines) {
			return "", fmt.Errorf("scenarios: %s:%d: rewrite: no \"----\" after the directive", r.Name, n)
		}
		end := blockEnd(lines, sep+1)
		b.WriteString(strings.Join(lines[next:sep], ""))
		b.WriteString(formatBlock(s.Output))
		next = end
	}
	b.WriteString(strings.Join(lines[next:], ""))
	return b.String(), nil
}

// blockEnd returns the index of the first line after the expected block that starts at line i:
// a block fenced by a second "----" ends after its closing "----\n----"; any other block ends at
// its first blank line (which is kept as the separator to the next directive).
func blockEnd(lines []string, i int) int {
	if i < len(lines) && strings.TrimRight(lines[i], "\r\n") == "----" {
		for j := i + 1; j+1 < len(lines); j++ {
			if strings.TrimRight(lines[j], "\r\n") == "----" && strings.TrimRight(lines[j+1], "\r\n") == "----" {
				return j + 2
			}
		}
		return len(lines)
	}
	for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
		i++
	}
	return i
}

// formatBlock is the separator and expected block of one directive, as Format writes them.
func formatBlock(out string) string {
	out = normalize(out)
	switch {
	case strings.Contains(out, "\n\n") || strings.HasPrefix(out, "\n"):
		return "----\n----\n" + out + "\n----\n----\n"
	case out != "":
		return "----\n" + out + "\n"
	default:
		return "----\n"
	}
}

// Diff describes every step whose output differs from the file's expected block: its position
// and directive, then the block's lines as a line diff ("-" expected, "+" printed by this run,
// " " both). It is empty when the run matches the file.
func (r *Result) Diff() string {
	var b strings.Builder
	for _, s := range r.Mismatches() {
		fmt.Fprintf(&b, "%s: %s: output differs from the expected block (- expected, + got):\n", s.Pos, s.Directive.Line())
		for _, l := range lineDiff(splitLines(normalize(s.Expected)), splitLines(normalize(s.Output))) {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// lineDiff is the classic longest-common-subsequence diff of two short line lists: blocks are a
// few dozen lines, so the quadratic table is small.
func lineDiff(a, b []string) []string {
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, " "+a[i])
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "-"+a[i])
			i++
		default:
			out = append(out, "+"+b[j])
			j++
		}
	}
	return out
}
