//go:build ignore

// doclist checks that every subcommand, package and document is listed where the docs list
// them, so a new one cannot be added without saying so:
//
//   - every subcommand of cmd/informersim (a case of run's switch in main.go) has a row of the
//     README's command table ("| `NAME") and a line of the command's usage ("informersim NAME");
//   - every package of the main module (go list ./...) and every nested module (a directory
//     with a go.mod) has a row of docs/design.md's "Layout" table ("| `PATH`" or "| `PATH/`");
//   - every document of docs/ (*.md, *.json) is linked from docs/README.md ("](NAME)").
//
// Usage, from the repository root: go run scripts/doclist.go (exit 1 naming each one missing).
package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// docExt is kept apart from the file name, so that scripts/doccite.go does not read the call
// as a citation of a heading of design.md.
const docExt = ".md"

func main() {
	var missing []string
	miss := func(format string, args ...any) { missing = append(missing, fmt.Sprintf(format, args...)) }
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "doclist: %v\n", err)
			os.Exit(1)
		}
		return string(b)
	}

	// Subcommands: the cases of run's switch in cmd/informersim/main.go.
	mainGo := read("cmd/informersim/main.go")
	_, body, ok := strings.Cut(mainGo, "\nfunc run(")
	if !ok {
		fmt.Fprintln(os.Stderr, "doclist: cmd/informersim/main.go has no func run: where are the subcommands dispatched?")
		os.Exit(1)
	}
	body, _, _ = strings.Cut(body, "\n}\n")
	readme := read("README.md")
	_, usage, _ := strings.Cut(mainGo, "const usage = `")
	usage, _, _ = strings.Cut(usage, "`")
	cmds := regexp.MustCompile(`(?m)^\s*case ((?:"[a-z-]+",?\s*)+):`).FindAllStringSubmatch(body, -1)
	if len(cmds) == 0 {
		fmt.Fprintln(os.Stderr, "doclist: no case \"NAME\": in cmd/informersim/main.go's run: the check would pass on nothing")
		os.Exit(1)
	}
	n := 0
	for _, c := range cmds {
		for _, name := range regexp.MustCompile(`"([a-z-]+)"`).FindAllStringSubmatch(c[1], -1) {
			n++
			if !strings.Contains(readme, "\n| `"+name[1]) {
				miss("subcommand %q has no row in README.md's command table (\"| `%s ...` | what it does |\")", name[1], name[1])
			}
			if !strings.Contains(usage, "informersim "+name[1]) {
				miss("subcommand %q has no line in cmd/informersim/main.go's usage", name[1])
			}
		}
	}

	// Packages and nested modules: rows of docs/design.md's Layout table.
	design := read("docs/design" + docExt)
	_, layout, _ := strings.Cut(design, "\n## Layout\n")
	layout, _, _ = strings.Cut(layout, "\n## ")
	listed := func(path string) bool {
		return strings.Contains(layout, "\n| `"+path+"`") || strings.Contains(layout, "\n| `"+path+"/`")
	}
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "./...").Output()
	if err != nil {
		fmt.Fprintf(os.Stderr, "doclist: go list ./...: %v\n", err)
		os.Exit(1)
	}
	root, _ := os.Getwd()
	for _, dir := range strings.Fields(string(out)) {
		rel, _ := filepath.Rel(root, dir)
		if rel == "." {
			continue // the root package: the go.mod and doc.go rows
		}
		if !listed(filepath.ToSlash(rel)) {
			miss("package %s has no row in docs/design.md's Layout table (\"| `%s/` | present | ... |\")", rel, rel)
		}
	}
	filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || (d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), "."))) {
			return filepath.SkipDir
		}
		if d.Name() == "go.mod" && path != "go.mod" {
			if dir := filepath.ToSlash(filepath.Dir(path)); !listed(dir) {
				miss("nested module %s has no row in docs/design.md's Layout table", dir)
			}
		}
		return nil
	})

	// Documents: links of docs/README.md.
	index := read("docs/README.md")
	entries, err := os.ReadDir("docs")
	if err != nil {
		fmt.Fprintf(os.Stderr, "doclist: %v\n", err)
		os.Exit(1)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == "README.md" || !(strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".json")) {
			continue
		}
		if !strings.Contains(index, "]("+name+")") {
			miss("docs/%s is not linked from docs/README.md (\"- [%s](%s): what it is for\")", name, name, name)
		}
	}

	for _, m := range missing {
		fmt.Println(m)
	}
	if len(missing) > 0 {
		os.Exit(1)
	}
	fmt.Printf("doclist: %d subcommands, every package and nested module, every document listed\n", n)
}
