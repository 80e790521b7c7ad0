//go:build serve

package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
)

// envtestAssets runs `informersim envtest-assets`: it writes (or finds, already written) the
// directory KUBEBUILDER_ASSETS names for controller-runtime's envtest, and prints its path:
//
//	KUBEBUILDER_ASSETS=$(informersim envtest-assets) go test ./...
//
// The directory holds this binary, once per build (named by its SHA-256), as informersim, and
// kube-apiserver and etcd, scripts that run it as the stand-in of that name (standIn). kubectl
// links to the machine's kubectl when there is one on PATH (or -kubectl); otherwise it is a
// script that says what envtest would have used it for.
func envtestAssets(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("envtest-assets", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: informersim envtest-assets [-dir=DIR] [-kubectl=PATH]

Writes the directory controller-runtime's envtest takes in KUBEBUILDER_ASSETS, and prints its path:
kube-apiserver and etcd are informersim's stand-ins (this binary under those names), kubectl the
machine's. A suite then runs against informersim with nothing else changed:

  KUBEBUILDER_ASSETS=$(informersim envtest-assets) go test ./...

The directory is kept in the user's cache directory, one per build of informersim, and reused;
the three most recently used are kept. docs/serve.md.

`)
		fs.PrintDefaults()
	}
	defaultDir := ""
	if cache, err := os.UserCacheDir(); err == nil {
		defaultDir = filepath.Join(cache, "informersim", "envtest-assets")
	}
	dir := fs.String("dir", defaultDir, "the directory to keep the assets' directories in")
	kubectl := fs.String("kubectl", "", "the kubectl to link (default: kubectl on PATH)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "informersim envtest-assets: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if *dir == "" {
		fmt.Fprintln(stderr, "informersim envtest-assets: no user cache directory ($XDG_CACHE_HOME or $HOME): give -dir")
		return 2
	}
	kubectlPath := *kubectl
	if kubectlPath == "" {
		kubectlPath, _ = exec.LookPath("kubectl")
	} else if info, err := os.Stat(kubectlPath); err != nil || info.IsDir() {
		fmt.Fprintf(stderr, "informersim envtest-assets: -kubectl=%s is not a file\n", kubectlPath)
		return 2
	}
	if kubectlPath != "" {
		abs, err := filepath.Abs(kubectlPath)
		if err != nil {
			fmt.Fprintf(stderr, "informersim envtest-assets: %v\n", err)
			return 1
		}
		kubectlPath = abs
	}
	assets, err := writeAssets(*dir, kubectlPath)
	if err != nil {
		fmt.Fprintf(stderr, "informersim envtest-assets: %v\n", err)
		return 1
	}
	if kubectlPath == "" {
		fmt.Fprintf(stderr, "informersim envtest-assets: no kubectl on PATH: %s/kubectl explains itself when run (%s)\n", assets, noKubectlUse)
	}
	fmt.Fprintln(stdout, assets)
	return 0
}

// noKubectlUse is what envtest runs kubectl for.
const noKubectlUse = "envtest itself never runs kubectl; a test does through ControlPlane.KubeCtl() or AuthenticatedUser.Kubectl()"

// assetsKept is how many assets' directories (builds of informersim) are kept.
const assetsKept = 3

var assetsDirName = regexp.MustCompile(`^[0-9a-f]{16}$`)

// writeAssets makes sure dir/HASH holds this binary and the stand-ins' links, kubectl linked to
// kubectlPath (or to this binary when ""), and returns dir/HASH.
func writeAssets(dir, kubectlPath string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return "", err
	}
	sum, size, err := hashFile(exe)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	target := filepath.Join(dir, sum[:16])
	if info, err := os.Stat(filepath.Join(target, "informersim")); err != nil || info.Size() != size {
		if err := populateAssets(dir, target, exe); err != nil {
			return "", err
		}
	}
	if kubectlPath == "" {
		if err := replaceFile(filepath.Join(target, "kubectl"), noKubectlScript(target)); err != nil {
			return "", err
		}
	} else if err := replaceSymlink(kubectlPath, filepath.Join(target, "kubectl")); err != nil {
		return "", err
	}
	now := time.Now()
	if err := os.Chtimes(target, now, now); err != nil {
		return "", err
	}
	return target, pruneAssets(dir, target)
}

func hashFile(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// populateAssets writes target in a temporary directory of dir, then renames it into place; when
// another process got there first, its directory is kept.
func populateAssets(dir, target, exe string) error {
	tmp, err := os.MkdirTemp(dir, ".writing-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "informersim")
	if err := os.Link(exe, bin); err != nil {
		if err := copyExecutable(exe, bin); err != nil {
			return err
		}
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(standInScript(name)), 0o755); err != nil {
			return err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	_ = os.RemoveAll(target) // an incomplete earlier copy
	if err := os.Rename(tmp, target); err != nil {
		if _, statErr := os.Stat(filepath.Join(target, "informersim")); statErr == nil {
			return nil
		}
		return err
	}
	return nil
}

// standInEnv names the stand-in the binary is to be (standIn).
const standInEnv = "INFORMERSIM_STAND_IN"

// standInScript is the executable envtest runs as name: a shell script that answers --help
// itself (envtest asks each binary for its flags before starting it, and the binary's start,
// most of it the initialisation of the Kubernetes packages it links, would cost a tenth of a
// second of CPU time each time) and otherwise runs the binary as that stand-in, in its place
// (exec: same process, so envtest's signals reach it).
func standInScript(name string) string {
	var help strings.Builder
	standIns[name](context.Background(), []string{"--help"}, &help, io.Discard)
	return fmt.Sprintf(`#!/bin/sh
# %[1]s: informersim's stand-in for controller-runtime's envtest (informersim envtest-assets).
if [ "$#" = 1 ] && { [ "$1" = --help ] || [ "$1" = -h ]; }; then
	cat <<'INFORMERSIM_HELP'
%[2]sINFORMERSIM_HELP
	exit 0
fi
%[3]s=%[1]s exec "${0%%/*}/informersim" "$@"
`, name, help.String(), standInEnv)
}

// noKubectlScript is the kubectl of a directory written without a kubectl to link.
func noKubectlScript(dir string) string {
	return fmt.Sprintf(`#!/bin/sh
echo "kubectl: informersim envtest-assets found no kubectl on PATH when it wrote %s (%s): install kubectl and run informersim envtest-assets again, or set TEST_ASSET_KUBECTL" >&2
exit 1
`, dir, noKubectlUse)
}

func copyExecutable(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// replaceSymlink points link at target, atomically, unless it already does.
func replaceSymlink(target, link string) error {
	if cur, err := os.Readlink(link); err == nil && cur == target {
		return nil
	}
	tmp := link + ".new"
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, link)
}

// replaceFile writes an executable file at path, atomically.
func replaceFile(path, content string) error {
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// pruneAssets removes the assets' directories of dir beyond the assetsKept most recently used,
// never keep.
func pruneAssets(dir, keep string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	type used struct {
		path string
		at   time.Time
	}
	var dirs []used
	for _, e := range entries {
		if !e.IsDir() || !assetsDirName.MatchString(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		dirs = append(dirs, used{filepath.Join(dir, e.Name()), info.ModTime()})
	}
	slices.SortFunc(dirs, func(a, b used) int { return b.at.Compare(a.at) })
	for i, d := range dirs {
		if i >= assetsKept && d.path != keep {
			if err := os.RemoveAll(d.path); err != nil {
				return err
			}
		}
	}
	return nil
}

// standIns are the programs envtest starts, by name.
var standIns = map[string]func(context.Context, []string, io.Writer, io.Writer) int{
	"kube-apiserver": kubeAPIServerStandIn,
	"etcd":           etcdStandIn,
}

// standIn runs this binary as the stand-in $INFORMERSIM_STAND_IN names (kube-apiserver or etcd:
// the scripts of envtest-assets set it) with args[1:], until SIGTERM or SIGINT, and returns its
// exit code; ok is false when the variable is not set.
func standIn(args []string) (code int, ok bool) {
	name, set := os.LookupEnv(standInEnv)
	if !set {
		return 0, false
	}
	serve := standIns[name]
	if serve == nil {
		fmt.Fprintf(os.Stderr, "informersim: %s=%q names no stand-in (kube-apiserver or etcd)\n", standInEnv, name)
		return 2, true
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serve(ctx, args[1:], os.Stdout, os.Stderr), true
}
