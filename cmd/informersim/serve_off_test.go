//go:build !serve

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestServeNeedsTheTag: the default build, the one `make demo` compiles, has no serve (it would
// link k8s.io/api) and no envtest-assets (whose kube-apiserver stand-in is serve's); asked for
// either, it exits 2 and says how to build it.
func TestServeNeedsTheTag(t *testing.T) {
	var out, errb strings.Builder
	if code := run([]string{"serve", "-addr=127.0.0.1:0"}, &out, &errb); code != 2 {
		t.Fatalf("serve in a build without the tag: exit %d, want 2\n%s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "go run -tags serve . serve") || out.Len() != 0 {
		t.Errorf("serve without the tag printed stdout %q, stderr %q", out.String(), errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"envtest-assets"}, &out, &errb); code != 2 ||
		!strings.HasPrefix(errb.String(), "informersim envtest-assets: ") || !strings.Contains(errb.String(), "go run -tags serve . envtest-assets") || out.Len() != 0 {
		t.Errorf("envtest-assets without the tag: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	t.Setenv("INFORMERSIM_STAND_IN", "kube-apiserver")
	if _, ok := standIn([]string{"/assets/informersim"}); ok {
		t.Error("a build without the serve tag claims to be the kube-apiserver stand-in")
	}
}

// TestDefaultBuildLinksNoKubeAPI: the default build's imports reach neither kube/ nor k8s.io/api,
// so the first `make demo` on a fresh machine compiles only the main module and apimachinery.
func TestDefaultBuildLinksNoKubeAPI(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "k8s.io/api/") || pkg == "github.com/informersim/informersim/kube" || strings.HasPrefix(pkg, "sigs.k8s.io/controller-runtime") {
			t.Errorf("the default build of the command imports %s (only serve, built with -tags serve, may)", pkg)
		}
	}
}
