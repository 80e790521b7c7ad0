//go:build ignore

// shape checks two limits on the code's shape in every module of the repository (every tracked
// .go file but testdata and the vendored compare/ copies of client-go's tests):
//
//   - no function or method is longer than maxLines lines, from its func keyword to its closing
//     brace, not counting its tables: composite literals of minRows elements or more (the rows
//     of a table-driven test, a family's list), which are long because the family is;
//   - no type of the clientgo harness (the module clientgo/, where the bubble was split by
//     concern) has more than maxMethods methods declared on it (value and pointer receivers
//     together, test files included). Elsewhere the largest sets are printed with -top only:
//     fakeapi.Server and sim.Sim are facades whose methods are their API;
//   - clientgo.Config and clientgo.Report, the harness's face, have at most maxFaceFields
//     top-level fields each (what grows goes into their groups: Cluster, Checks, Diagnostics).
//
// Usage, from the repository root: go run scripts/shape.go [-top N] (exit 1 naming each one
// over its limit; -top prints the N longest functions and largest method sets either way).
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const (
	maxLines   = 100
	maxMethods = 20
	// maxFaceFields bounds the top-level fields of the structs users write and read first.
	maxFaceFields = 10
	minRows       = 4
)

// exempt are the types whose method set is an interface of another project's that they
// implement, with why.
var exempt = map[string]string{
	"clientgo.kubeFactory": "client-go's informers.SharedInformerFactory: its methods are the interface's",
}

type fn struct {
	where string // file:line name
	lines int
}

func main() {
	top := flag.Int("top", 0, "print the N longest functions and largest method sets")
	flag.Parse()
	out, err := exec.Command("git", "ls-files", "--cached", "--others", "--exclude-standard", "*.go").Output()
	if err != nil {
		fmt.Fprintln(os.Stderr, "shape: git ls-files:", err)
		os.Exit(2)
	}
	var fns []fn
	methods := map[string]int{} // directory.Type -> methods
	faceFields := map[string]int{"clientgo.Config": -1, "clientgo.Report": -1}
	fset := token.NewFileSet()
	for _, path := range strings.Fields(string(out)) {
		if strings.Contains(path, "testdata/") || strings.HasPrefix(path, "compare/") && strings.Contains(path, "upstream") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			fmt.Fprintln(os.Stderr, "shape:", err)
			os.Exit(2)
		}
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				countFaceFields(gd, filepath.Dir(path), faceFields)
			}
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				recv := typeName(fd.Recv.List[0].Type)
				name = recv + "." + name
				methods[filepath.Dir(path)+"."+recv]++
			}
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1 - tableLines(fset, fd)
			fns = append(fns, fn{fmt.Sprintf("%s:%d %s", path, fset.Position(fd.Pos()).Line, name), n})
		}
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].lines > fns[j].lines })
	types := make([]string, 0, len(methods))
	for t := range methods {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool {
		if methods[types[i]] != methods[types[j]] {
			return methods[types[i]] > methods[types[j]]
		}
		return types[i] < types[j]
	})
	if *top > 0 {
		fmt.Println("longest functions:")
		for _, f := range fns[:min(*top, len(fns))] {
			fmt.Printf("  %4d lines  %s\n", f.lines, f.where)
		}
		fmt.Println("largest method sets:")
		for _, t := range types[:min(*top, len(types))] {
			fmt.Printf("  %4d methods  %s\n", methods[t], t)
		}
	}
	failed := false
	for _, f := range fns {
		if f.lines > maxLines {
			fmt.Fprintf(os.Stderr, "shape: %s is %d lines (at most %d but tables)\n", f.where, f.lines, maxLines)
			failed = true
		}
	}
	for _, t := range types {
		if methods[t] > maxMethods && strings.HasPrefix(t, "clientgo") && exempt[t] == "" {
			fmt.Fprintf(os.Stderr, "shape: %s has %d methods (at most %d)\n", t, methods[t], maxMethods)
			failed = true
		}
	}
	for _, t := range []string{"clientgo.Config", "clientgo.Report"} {
		switch n := faceFields[t]; {
		case n < 0:
			fmt.Fprintf(os.Stderr, "shape: %s not found\n", t)
			failed = true
		case n > maxFaceFields:
			fmt.Fprintf(os.Stderr, "shape: %s has %d top-level fields (at most %d)\n", t, n, maxFaceFields)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// countFaceFields records, for the struct types of faceFields declared in gd, their number of
// fields (a line naming two counts two).
func countFaceFields(gd *ast.GenDecl, dir string, faceFields map[string]int) {
	for _, spec := range gd.Specs {
		ts, ok := spec.(*ast.TypeSpec)
		if !ok {
			continue
		}
		name := dir + "." + ts.Name.Name
		st, isStruct := ts.Type.(*ast.StructType)
		if _, tracked := faceFields[name]; !tracked || !isStruct {
			continue
		}
		n := 0
		for _, f := range st.Fields.List {
			n += max(1, len(f.Names))
		}
		faceFields[name] = n
	}
}

// typeName is a receiver's type name, without its pointer and type parameters.
func typeName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return typeName(t.X)
	case *ast.IndexExpr:
		return typeName(t.X)
	case *ast.IndexListExpr:
		return typeName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// tableLines is how many of a function's lines are tables: composite literals of minRows
// elements or more (rows), the outermost ones only.
func tableLines(fset *token.FileSet, fd *ast.FuncDecl) int {
	n := 0
	ast.Inspect(fd.Body, func(node ast.Node) bool {
		cl, ok := node.(*ast.CompositeLit)
		if !ok || len(cl.Elts) < minRows {
			return true
		}
		n += fset.Position(cl.Rbrace).Line - fset.Position(cl.Lbrace).Line + 1
		return false
	})
	return n
}
