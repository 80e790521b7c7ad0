//go:build !serve

package main

import (
	"fmt"
	"io"
	"strings"
)

// serveBuildHint is what `informersim serve` says in a binary built without the serve tag.
const serveBuildHint = `informersim serve: this binary was built without serve, which links k8s.io/api's types (a minute
or more of compiling that run, explain and the course never need); build it with the serve tag,
from the repository's cmd/informersim:
  go run -tags serve . serve [flags]
  go install -tags serve .
`

// serve, in a build without the serve tag, says how to get a binary with it and exits 2.
func serve(_ []string, _, stderr io.Writer) int {
	fmt.Fprint(stderr, serveBuildHint)
	return 2
}

// envtestAssets, in a build without the serve tag, says how to get a binary with it (its
// kube-apiserver stand-in is serve) and exits 2.
func envtestAssets(_ []string, _, stderr io.Writer) int {
	fmt.Fprint(stderr, strings.NewReplacer("informersim serve:", "informersim envtest-assets:", "serve [flags]", "envtest-assets").Replace(serveBuildHint))
	return 2
}

// standIn: a build without the serve tag has no stand-ins (envtest-assets never writes their
// scripts with one).
func standIn([]string) (int, bool) { return 0, false }
