package clientgo_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const applyDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: nginx:1
      - name: sidecar
        image: envoy:1
`

const applyConfigMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  level: "1"
`

// TestKubectlApplyPatchEdit runs kubectl's writing verbs against `informersim serve`:
// client-side apply twice (the second computes a strategic merge patch from the last-applied
// annotation), server-side apply twice, a conflicting field manager (kubectl exits non-zero
// naming the conflict) and --force-conflicts, patch with its default strategic merge type,
// edit through a scripted EDITOR, set image, diff (client- and server-side dry runs), and the
// move of a client-side applied object to server-side apply.
func TestKubectlApplyPatchEdit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	srv := startServe(t, ctx)
	command, run := srv.kubectl(t, ctx)
	k := kubectlCLI{t: t, dir: srv.dir, command: command, run: run}
	dep, noSidecar := k.clientSideApply()
	k.patchSetImageEdit()
	k.diffThenServerSide(dep, noSidecar)
	k.serverSideApplyConflict()
}

// withEnv runs kubectl with args and env added to this process's environment, returning its
// trimmed output and error (edit reads its editor from the environment).
func (k kubectlCLI) withEnv(env []string, args ...string) (string, error) {
	cmd := k.command(args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// expect fails the test unless kubectl printed want.
func (k kubectlCLI) expect(got, want string) {
	k.t.Helper()
	if got != want {
		k.t.Fatalf("kubectl printed %q, want %q", got, want)
	}
}

// write writes a file of the test's directory and returns its path.
func (k kubectlCLI) write(name, content string) string {
	k.t.Helper()
	p := filepath.Join(k.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		k.t.Fatal(err)
	}
	return p
}

// images is Deployment web's replicas and container images, in one line.
func (k kubectlCLI) images() string {
	return k.run("get", "deploy", "web", "-o", "jsonpath={.spec.replicas} {.spec.template.spec.containers[*].image}")
}

// clientSideApply applies Deployment web client-side: a create, then a change sent as a strategic
// merge patch, then a file without the sidecar. It returns the file's path and that last content.
func (k kubectlCLI) clientSideApply() (dep, noSidecar string) {
	t, run, expect := k.t, k.run, k.expect
	t.Helper()
	dep = k.write("web.yaml", applyDeployment)
	expect(run("apply", "-f", dep), "deployment.apps/web created")
	k.write("web.yaml", strings.Replace(strings.Replace(applyDeployment, "nginx:1", "nginx:2", 1), "replicas: 2", "replicas: 3", 1))
	expect(run("apply", "-f", dep), "deployment.apps/web configured")
	expect(k.images(), "3 nginx:2 envoy:1")
	if got := run("get", "deploy", "web", "-o", `jsonpath={.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`); !strings.Contains(got, `"image":"nginx:2"`) {
		t.Fatalf("last-applied annotation %q", got)
	}
	// Removing the sidecar from the file removes it from the object (the three-way patch
	// deletes by merge key what the last applied configuration had).
	noSidecar = strings.Replace(strings.Replace(applyDeployment, "nginx:1", "nginx:2", 1), "replicas: 2", "replicas: 3", 1)
	noSidecar = noSidecar[:strings.Index(noSidecar, "      - name: sidecar")]
	k.write("web.yaml", noSidecar)
	expect(run("apply", "-f", dep), "deployment.apps/web configured")
	expect(k.images(), "3 nginx:2")
	return dep, noSidecar
}

// patchSetImageEdit changes web with patch (strategic merge by default: the container is matched
// by its name), set image (which patches the same way) and edit through a scripted EDITOR.
func (k kubectlCLI) patchSetImageEdit() {
	t, run, expect := k.t, k.run, k.expect
	t.Helper()
	expect(run("patch", "deploy", "web", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:3"}]}}}}`), "deployment.apps/web patched")
	expect(k.images(), "3 nginx:3")
	expect(run("set", "image", "deploy/web", "app=nginx:4"), "deployment.apps/web image updated")
	expect(k.images(), "3 nginx:4")
	// edit: kubectl opens the object in $EDITOR (here a script) and patches what changed.
	editor := k.write("editor.sh", "#!/bin/sh\nsed -i 's/replicas: 3/replicas: 5/' \"$1\"\n")
	if err := os.Chmod(editor, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := k.withEnv([]string{"EDITOR=" + editor, "KUBE_EDITOR=" + editor}, "edit", "deploy", "web"); err != nil || out != "deployment.apps/web edited" {
		t.Fatalf("kubectl edit: %v %q", err, out)
	}
	expect(k.images(), "5 nginx:4")
}

// diffThenServerSide diffs a changed file both ways, then moves the client-side applied web to
// server-side apply.
func (k kubectlCLI) diffThenServerSide(dep, noSidecar string) {
	t, run, expect := k.t, k.run, k.expect
	t.Helper()
	// diff: a dry-run patch (and, with --server-side, a dry-run apply) shows what apply would
	// change, exits 1, and changes nothing (--force-conflicts: edit and set image own those
	// fields now, a conflict otherwise, as on a cluster).
	k.write("web.yaml", strings.Replace(noSidecar, "nginx:2", "nginx:9", 1))
	for _, args := range [][]string{{"diff", "-f", dep}, {"diff", "--server-side", "--force-conflicts", "-f", dep}} {
		out, err := k.withEnv(nil, args...)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(out, "+      - image: nginx:9") || !strings.Contains(out, "-      - image: nginx:4") {
			t.Fatalf("kubectl %s: %v, want exit 1 and the image's change:\n%s", strings.Join(args, " "), err, out)
		}
	}
	expect(k.images(), "5 nginx:4")
	// Moving the client-side applied object to server-side apply: kubectl rewrites the
	// client-side manager's managedFields (a JSON patch) and applies; forced, since edit and set
	// image own replicas and the image now.
	expect(run("apply", "--server-side", "--force-conflicts", "-f", dep), "deployment.apps/web serverside-applied")
	expect(k.images(), "3 nginx:9")
	if got := run("get", "deploy", "web", "-o", "jsonpath={.metadata.managedFields[*].manager}"); strings.Contains(got, "kubectl-client-side-apply") || !strings.Contains(got, "kubectl") {
		t.Fatalf("managers after the move to server-side apply: %q", got)
	}
}

// serverSideApplyConflict applies ConfigMap settings server-side twice by kubectl's manager, then
// by a conflicting manager (refused, naming the conflict) and by it forced.
func (k kubectlCLI) serverSideApplyConflict() {
	t, run, expect := k.t, k.run, k.expect
	t.Helper()
	cm := k.write("settings.yaml", applyConfigMap)
	expect(run("apply", "--server-side", "-f", cm), "configmap/settings serverside-applied")
	k.write("settings.yaml", strings.Replace(applyConfigMap, `"1"`, `"2"`, 1))
	expect(run("apply", "--server-side", "-f", cm), "configmap/settings serverside-applied")
	expect(run("get", "cm", "settings", "-o", "jsonpath={.data.level}"), "2")
	k.write("settings.yaml", strings.Replace(applyConfigMap, `"1"`, `"3"`, 1))
	out, err := k.withEnv(nil, "apply", "--server-side", "--field-manager=ops", "-f", cm)
	if err == nil || !strings.Contains(out, `Apply failed with 1 conflict: conflict with "kubectl": .data.level`) {
		t.Fatalf("conflicting server-side apply: %v %q, want a non-zero exit naming the conflict", err, out)
	}
	expect(run("get", "cm", "settings", "-o", "jsonpath={.data.level}"), "2")
	expect(run("apply", "--server-side", "--field-manager=ops", "--force-conflicts", "-f", cm), "configmap/settings serverside-applied")
	expect(run("get", "cm", "settings", "-o", "jsonpath={.data.level} {.metadata.managedFields[*].manager}"), "3 ops")
}
