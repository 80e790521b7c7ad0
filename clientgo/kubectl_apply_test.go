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
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(srv.dir, "kube-cache")
	command := func(env []string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig=" + srv.kubeconfig, "--cache-dir=" + cacheDir}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	run := func(args ...string) string {
		t.Helper()
		out, err := command(nil, args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	expect := func(got, want string) {
		t.Helper()
		if got != want {
			t.Fatalf("kubectl printed %q, want %q", got, want)
		}
	}
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(srv.dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	images := func() string {
		return run("get", "deploy", "web", "-o", "jsonpath={.spec.replicas} {.spec.template.spec.containers[*].image}")
	}

	// Client-side apply: create, then a change sent as a strategic merge patch.
	dep := write("web.yaml", applyDeployment)
	expect(run("apply", "-f", dep), "deployment.apps/web created")
	write("web.yaml", strings.Replace(strings.Replace(applyDeployment, "nginx:1", "nginx:2", 1), "replicas: 2", "replicas: 3", 1))
	expect(run("apply", "-f", dep), "deployment.apps/web configured")
	expect(images(), "3 nginx:2 envoy:1")
	if got := run("get", "deploy", "web", "-o", `jsonpath={.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}`); !strings.Contains(got, `"image":"nginx:2"`) {
		t.Fatalf("last-applied annotation %q", got)
	}
	// Removing the sidecar from the file removes it from the object (the three-way patch
	// deletes by merge key what the last applied configuration had).
	noSidecar := strings.Replace(strings.Replace(applyDeployment, "nginx:1", "nginx:2", 1), "replicas: 2", "replicas: 3", 1)
	noSidecar = noSidecar[:strings.Index(noSidecar, "      - name: sidecar")]
	write("web.yaml", noSidecar)
	expect(run("apply", "-f", dep), "deployment.apps/web configured")
	expect(images(), "3 nginx:2")

	// patch (strategic merge by default): the container is matched by its name.
	expect(run("patch", "deploy", "web", "-p", `{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:3"}]}}}}`), "deployment.apps/web patched")
	expect(images(), "3 nginx:3")
	// set image patches the same way.
	expect(run("set", "image", "deploy/web", "app=nginx:4"), "deployment.apps/web image updated")
	expect(images(), "3 nginx:4")
	// edit: kubectl opens the object in $EDITOR (here a script) and patches what changed.
	editor := write("editor.sh", "#!/bin/sh\nsed -i 's/replicas: 3/replicas: 5/' \"$1\"\n")
	if err := os.Chmod(editor, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := command([]string{"EDITOR=" + editor, "KUBE_EDITOR=" + editor}, "edit", "deploy", "web"); err != nil || out != "deployment.apps/web edited" {
		t.Fatalf("kubectl edit: %v %q", err, out)
	}
	expect(images(), "5 nginx:4")
	// diff: a dry-run patch (and, with --server-side, a dry-run apply) shows what apply would
	// change, exits 1, and changes nothing (--force-conflicts: edit and set image own those
	// fields now, a conflict otherwise, as on a cluster).
	write("web.yaml", strings.Replace(noSidecar, "nginx:2", "nginx:9", 1))
	for _, args := range [][]string{{"diff", "-f", dep}, {"diff", "--server-side", "--force-conflicts", "-f", dep}} {
		out, err := command(nil, args...)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(out, "+      - image: nginx:9") || !strings.Contains(out, "-      - image: nginx:4") {
			t.Fatalf("kubectl %s: %v, want exit 1 and the image's change:\n%s", strings.Join(args, " "), err, out)
		}
	}
	expect(images(), "5 nginx:4")
	// Moving the client-side applied object to server-side apply: kubectl rewrites the
	// client-side manager's managedFields (a JSON patch) and applies; forced, since edit and set
	// image own replicas and the image now.
	expect(run("apply", "--server-side", "--force-conflicts", "-f", dep), "deployment.apps/web serverside-applied")
	expect(images(), "3 nginx:9")
	if got := run("get", "deploy", "web", "-o", "jsonpath={.metadata.managedFields[*].manager}"); strings.Contains(got, "kubectl-client-side-apply") || !strings.Contains(got, "kubectl") {
		t.Fatalf("managers after the move to server-side apply: %q", got)
	}

	// Server-side apply: twice by kubectl's manager, then a conflicting manager.
	cm := write("settings.yaml", applyConfigMap)
	expect(run("apply", "--server-side", "-f", cm), "configmap/settings serverside-applied")
	write("settings.yaml", strings.Replace(applyConfigMap, `"1"`, `"2"`, 1))
	expect(run("apply", "--server-side", "-f", cm), "configmap/settings serverside-applied")
	expect(run("get", "cm", "settings", "-o", "jsonpath={.data.level}"), "2")
	write("settings.yaml", strings.Replace(applyConfigMap, `"1"`, `"3"`, 1))
	out, err := command(nil, "apply", "--server-side", "--field-manager=ops", "-f", cm)
	if err == nil || !strings.Contains(out, `Apply failed with 1 conflict: conflict with "kubectl": .data.level`) {
		t.Fatalf("conflicting server-side apply: %v %q, want a non-zero exit naming the conflict", err, out)
	}
	expect(run("get", "cm", "settings", "-o", "jsonpath={.data.level}"), "2")
	expect(run("apply", "--server-side", "--field-manager=ops", "--force-conflicts", "-f", cm), "configmap/settings serverside-applied")
	expect(run("get", "cm", "settings", "-o", "jsonpath={.data.level} {.metadata.managedFields[*].manager}"), "3 ops")
}
