//go:build ignore

// doccite checks that every citation of the repository's docs resolves: "fakeapi.md §4.6",
// "informer.md §7.5", "simulation.md §E4" must name a heading of that file, "§10.4 items 1-15" an
// item of that list, design.md "Oracles" a heading of docs/design.md, "design.md rule 1" a
// determinism rule, and "style rule 16" (or "style.md rule 9", "style.md rules 4 and 21") a rule
// of docs/style.md. It also fails on any pointer outside the repository to the old shared
// folder (or to its spec/ layout). Comment lines are joined first, so a citation broken across
// two lines still counts.
//
// Usage, from the repository root:
//
//	go run scripts/doccite.go            # prints a summary; exit 1 if a citation is dangling
//	go run scripts/doccite.go -v         # also lists every citation checked
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// docExt is kept apart from the format strings above, so that a grep for cited file names
// (a word followed by .md) does not read a format verb as one.
const docExt = ".md"

var (
	verbose = flag.Bool("v", false, "list every citation checked")
	docsDir = flag.String("docs", "docs", "directory holding the cited documents")
)

// doc is what a docs/*.md file offers to cite.
type doc struct {
	sections map[string]bool // "4.6", "E4", "10.4"
	headings []string        // lower-cased heading texts
	items    map[string]int  // section id -> number of items in its first numbered list
	rules    map[int]bool    // style.md: rules 1-30; design.md: the determinism rules
}

var (
	headingRE  = regexp.MustCompile(`^#+\s+(.*)$`)
	sectionRE  = regexp.MustCompile(`^(\d+(?:\.\d+)*|[A-Z]\d*)\.?(?:\s|$)`)
	numItemRE  = regexp.MustCompile(`^(\d+)\.\s`)
	styleRule  = regexp.MustCompile(`^(\d+)\.\s+\*\*`)
	citeSecRE  = regexp.MustCompile(`\b(informer|fakeapi|simulation)\.md((?:(?:,\s*|\s+and\s+|\s+|–)§[0-9A-Z][0-9.]*)+)`)
	oneSecRE   = regexp.MustCompile(`§([0-9A-Z][0-9.]*)`)
	itemsRE    = regexp.MustCompile(`^\s*\(?items?\s+(\d+)(?:\s*[-–]\s*(\d+))?`)
	designHead = regexp.MustCompile(`\bdesign\.md[,:]?\s*"([^"]+)"`)
	designRule = regexp.MustCompile(`\bdesign\.md\s+rules?\s+(\d+)`)
	styleCite  = regexp.MustCompile(`\bstyle(?:\.md)?\s+(?:rules?\s+)?(\d+)(?:\s*(?:and|,)\s*(\d+))?`)
	sharedRE   = regexp.MustCompile(`\.\./shar[e]d|/work/shar[e]d|(^|[^a-z/])spec/(informer|fakeapi|simulation)\.md`) // [e]: this line must not match itself
)

func loadDoc(path string) *doc {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	d := &doc{sections: map[string]bool{}, items: map[string]int{}, rules: map[int]bool{}}
	cur, inDeterminism := "", false
	listDone := map[string]bool{}
	for _, line := range strings.Split(string(b), "\n") {
		if m := headingRE.FindStringSubmatch(line); m != nil {
			text := strings.TrimSpace(m[1])
			d.headings = append(d.headings, strings.ToLower(text))
			cur = ""
			if s := sectionRE.FindStringSubmatch(text); s != nil {
				cur = s[1]
				d.sections[cur] = true
			}
			inDeterminism = strings.HasPrefix(strings.ToLower(text), "determinism rules")
			continue
		}
		if strings.HasSuffix(path, "style.md") {
			if m := styleRule.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				d.rules[n] = true
			}
			continue
		}
		if m := numItemRE.FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			if inDeterminism {
				d.rules[n] = true
			}
			if cur != "" && !listDone[cur] && n == d.items[cur]+1 {
				d.items[cur] = n
			}
		} else if cur != "" && d.items[cur] > 0 && strings.TrimSpace(line) != "" &&
			!strings.HasPrefix(line, " ") {
			listDone[cur] = true
		}
	}
	return d
}

// joined is a file's text with comment markers and line breaks folded into single spaces, and
// the offset at which each original line starts, to report line numbers.
func joined(text string) (string, []int) {
	var sb strings.Builder
	var starts []int
	for _, line := range strings.Split(text, "\n") {
		starts = append(starts, sb.Len())
		t := strings.TrimSpace(line)
		for _, p := range []string{"//", "#"} {
			t = strings.TrimSpace(strings.TrimPrefix(t, p))
		}
		sb.WriteString(t)
		sb.WriteByte(' ')
	}
	return sb.String(), starts
}

func lineOf(starts []int, off int) int {
	return sort.Search(len(starts), func(i int) bool { return starts[i] > off })
}

func main() {
	flag.Parse()
	c := &citations{docs: map[string]*doc{}, perDoc: map[string]int{}}
	for _, name := range []string{"informer", "fakeapi", "simulation", "design", "style"} {
		c.docs[name] = loadDoc(*docsDir + "/" + name + ".md")
	}
	out, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "doccite: git ls-files:", err)
		os.Exit(2)
	}
	for _, file := range strings.Fields(string(out)) {
		if strings.HasPrefix(file, "docs/") || strings.HasSuffix(file, ".sum") ||
			file == "scripts/doccite.go" {
			continue
		}
		b, err := os.ReadFile(file)
		if err != nil || strings.ContainsRune(string(b), 0) {
			continue
		}
		text, starts := joined(string(b))
		for _, m := range sharedRE.FindAllStringIndex(text, -1) {
			c.report(file, lineOf(starts, m[0]), text[m[0]:m[1]], false, "points outside the repository")
		}
		c.checkSections(file, text, starts)
		c.checkDesign(file, text, starts)
		c.checkStyle(file, text, starts)
	}
	c.printSummary()
	if c.bad > 0 {
		os.Exit(1)
	}
}

// citations checks the citations of every file against docs and counts them.
type citations struct {
	docs         map[string]*doc
	checked, bad int
	perDoc       map[string]int // citations checked per cited document
}

// report counts one citation, printing it when it dangles (with why) or with -v.
func (c *citations) report(file string, line int, cite string, ok bool, why string) {
	c.checked++
	if !ok {
		c.bad++
		fmt.Printf("%s:%d: %s: %s\n", file, line, cite, why)
	} else if *verbose {
		fmt.Printf("%s:%d: %s: ok\n", file, line, cite)
	}
}

// checkSections checks the "informer.md §7.5" citations of a file's joined text, and the list
// items some of them name.
func (c *citations) checkSections(file, text string, starts []int) {
	for _, m := range citeSecRE.FindAllStringSubmatchIndex(text, -1) {
		name := text[m[2]:m[3]]
		d := c.docs[name]
		line := lineOf(starts, m[0])
		for _, s := range oneSecRE.FindAllStringSubmatch(text[m[4]:m[5]], -1) {
			id := strings.TrimRight(s[1], ".")
			cite := name + ".md §" + id
			c.perDoc[name]++
			switch {
			case d == nil:
				c.report(file, line, cite, false, *docsDir+"/"+name+".md does not exist")
			case !d.sections[id]:
				c.report(file, line, cite, false, "no such section")
			default:
				c.report(file, line, cite, true, "")
			}
		}
		// "§10.4 items 1-15" / "§10.4 item 16": the items must exist.
		last := oneSecRE.FindAllStringSubmatch(text[m[4]:m[5]], -1)
		id := strings.TrimRight(last[len(last)-1][1], ".")
		if it := itemsRE.FindStringSubmatch(text[m[1]:]); it != nil && d != nil {
			hi := it[1]
			if it[2] != "" {
				hi = it[2]
			}
			n, _ := strconv.Atoi(hi)
			cite := fmt.Sprintf("%s%s §%s item %s", name, docExt, id, hi)
			c.report(file, line, cite, n >= 1 && n <= d.items[id], fmt.Sprintf("§%s has %d items", id, d.items[id]))
		}
	}
}

// checkDesign checks the citations of docs/design.md: a heading by its quoted text, a
// determinism rule by its number.
func (c *citations) checkDesign(file, text string, starts []int) {
	for _, m := range designHead.FindAllStringSubmatchIndex(text, -1) {
		q := strings.ToLower(strings.TrimSpace(text[m[2]:m[3]]))
		ok := false
		for _, h := range c.docs["design"].headings {
			ok = ok || strings.Contains(h, q)
		}
		c.perDoc["design"]++
		c.report(file, lineOf(starts, m[0]), `design.md "`+text[m[2]:m[3]]+`"`, ok, "no such heading")
	}
	for _, m := range designRule.FindAllStringSubmatchIndex(text, -1) {
		n, _ := strconv.Atoi(text[m[2]:m[3]])
		c.perDoc["design"]++
		c.report(file, lineOf(starts, m[0]), "design.md rule "+text[m[2]:m[3]], c.docs["design"].rules[n], "no such determinism rule")
	}
}

// checkStyle checks the citations of style rules by number.
func (c *citations) checkStyle(file, text string, starts []int) {
	for _, m := range styleCite.FindAllStringSubmatchIndex(text, -1) {
		for _, g := range [][2]int{{m[2], m[3]}, {m[4], m[5]}} {
			if g[0] < 0 {
				continue
			}
			n, _ := strconv.Atoi(text[g[0]:g[1]])
			c.perDoc["style"]++
			c.report(file, lineOf(starts, m[0]), "style rule "+text[g[0]:g[1]], c.docs["style"].rules[n], "no such rule")
		}
	}
}

// printSummary prints how many citations were checked, per document, and how many dangle.
func (c *citations) printSummary() {
	checked, bad, perDoc := c.checked, c.bad, c.perDoc
	names := make([]string, 0, len(perDoc))
	for n := range perDoc {
		names = append(names, n)
	}
	sort.Strings(names)
	var parts []string
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s%s %d", n, docExt, perDoc[n]))
	}
	fmt.Printf("doccite: %d citations checked (%s), %d dangling\n", checked, strings.Join(parts, ", "), bad)
}
