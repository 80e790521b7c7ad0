package clientgo_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKubectlControlPlane runs the real kubectl against `informersim serve` and its control plane
// (docs/controlplane.md): delete --cascade=foreground|background|orphan on an owner with
// dependents, delete namespace with contents (one held by a finalizer, a create refused while it
// terminates, then a create refused because it no longer exists; creates in the system namespaces
// succeed), rollout status finishing, and a stuck rollout failing at its progress deadline.
func TestKubectlControlPlane(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	srv := startServe(t, ctx, "-stuck=default/stuck")
	command, run := srv.kubectl(t, ctx)
	k := kubectlCLI{t: t, dir: srv.dir, command: command, run: run}
	k.cascades()
	k.namespaceDeletion()
	k.rollouts()
}

// kubectlCLI is kubectl against one `informersim serve` (served.kubectl's command and run), for
// tests made of phases that run one after another on the same server.
type kubectlCLI struct {
	t       *testing.T
	dir     string // the test's directory, for manifests
	command func(args ...string) *exec.Cmd
	run     func(args ...string) string
}

// fails runs kubectl with args and fails the test unless kubectl exits non-zero with want in its
// output: the refusals are what these tests check.
func (k kubectlCLI) fails(want string, args ...string) {
	k.t.Helper()
	out, err := k.command(args...).CombinedOutput()
	if err == nil || !strings.Contains(string(out), want) {
		k.t.Fatalf("kubectl %s: %v, output %q; want a failure saying %q", strings.Join(args, " "), err, out, want)
	}
}

// family creates configmap owner-<p> and two dependents blocking its deletion.
func (k kubectlCLI) family(p string) {
	k.t.Helper()
	k.run("create", "configmap", "owner-"+p)
	uid := k.run("get", "configmap", "owner-"+p, "-o", "jsonpath={.metadata.uid}")
	for _, d := range []string{"a", "b"} {
		manifest := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dep-%s-%s","ownerReferences":[
{"apiVersion":"v1","kind":"ConfigMap","name":"owner-%s","uid":%q,"blockOwnerDeletion":true}]}}`, p, d, p, uid)
		file := filepath.Join(k.dir, "dep-"+p+"-"+d+".json")
		if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
			k.t.Fatal(err)
		}
		k.run("create", "-f", file)
	}
}

// cascades deletes an owner with each --cascade policy and checks what became of its dependents.
func (k kubectlCLI) cascades() {
	t, run := k.t, k.run
	t.Helper()
	names := func(selector string) string {
		return run("get", "configmaps", "-o", "jsonpath={.items[*].metadata.name}", "--field-selector", selector)
	}
	// Foreground: kubectl waits for the owner, which goes only after its dependents.
	k.family("fg")
	run("delete", "configmap", "owner-fg", "--cascade=foreground", "--timeout=20s")
	if got := names("metadata.name=dep-fg-a") + names("metadata.name=dep-fg-b"); got != "" {
		t.Fatalf("dependents outlive a foreground delete: %q", got)
	}
	// Background: the owner at once, the dependents after.
	k.family("bg")
	run("delete", "configmap", "owner-bg", "--cascade=background")
	run("wait", "--for=delete", "configmap/dep-bg-a", "configmap/dep-bg-b", "--timeout=20s")
	// Orphan: the dependents stay and lose the reference.
	k.family("or")
	run("delete", "configmap", "owner-or", "--cascade=orphan", "--timeout=20s")
	deadline := time.Now().Add(20 * time.Second)
	for run("get", "configmap", "dep-or-a", "-o", "jsonpath={.metadata.ownerReferences}") != "" {
		if time.Now().After(deadline) {
			t.Fatal("an orphaned dependent keeps its owner reference")
		}
		time.Sleep(50 * time.Millisecond)
	}
	run("get", "configmap", "dep-or-b")
}

// namespaceDeletion deletes a namespace with contents, one object held by a finalizer: it
// terminates, refuses new content, says what it waits for, goes once the finalizer does, and is
// then not found; the system namespaces cannot be deleted and take creates.
func (k kubectlCLI) namespaceDeletion() {
	t, run, fails := k.t, k.run, k.fails
	t.Helper()
	run("create", "namespace", "team")
	run("-n", "team", "create", "configmap", "plain")
	held := filepath.Join(k.dir, "held.json")
	if err := os.WriteFile(held, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held","namespace":"team","finalizers":["example.com/hold"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run("create", "-f", held)
	run("delete", "namespace", "team", "--wait=false")
	if phase := run("get", "namespace", "team", "-o", "jsonpath={.status.phase}"); phase != "Terminating" {
		t.Fatalf("namespace phase %q, want Terminating", phase)
	}
	fails("unable to create new content in namespace team because it is being terminated", "-n", "team", "create", "configmap", "late")
	run("-n", "team", "wait", "--for=delete", "configmap/plain", "--timeout=20s")
	// The namespace's conditions say what it waits for, as the namespace controller writes them.
	remaining := `{.status.conditions[?(@.type=="NamespaceFinalizersRemaining")].message}`
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		got := run("get", "namespace", "team", "-o", "jsonpath="+remaining)
		if got == "Some finalizers are remaining: example.com/hold in 1 resource instances" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("NamespaceFinalizersRemaining of the terminating namespace: %q", got)
		}
	}
	run("-n", "team", "patch", "configmap", "held", "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	run("wait", "--for=delete", "namespace/team", "--timeout=20s")
	fails("may not be deleted", "delete", "namespace", "kube-system")
	// A namespace that does not exist (any more): kube-apiserver's 404, as kubectl prints it.
	fails(`error: failed to create configmap: namespaces "team" not found`, "-n", "team", "create", "configmap", "after")
	nope := filepath.Join(k.dir, "nope.json")
	if err := os.WriteFile(nope, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"nope"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fails(`Error from server (NotFound): error when creating "`+nope+`": namespaces "nope" not found`, "create", "-f", nope)
	for _, ns := range []string{"default", "kube-system", "kube-public"} {
		run("-n", ns, "create", "configmap", "in-"+ns)
	}
}

// rollouts: rollout status finishes through the workload status stand-in, after a create and
// after a scale; a stuck rollout (serve -stuck) fails at its progress deadline.
func (k kubectlCLI) rollouts() {
	t, run := k.t, k.run
	t.Helper()
	run("create", "deployment", "web", "--image=nginx", "--replicas=3")
	if out := run("rollout", "status", "deployment/web", "--timeout=20s"); !strings.Contains(out, `deployment "web" successfully rolled out`) {
		t.Fatalf("rollout status: %q", out)
	}
	run("scale", "deployment", "web", "--replicas=5")
	run("rollout", "status", "deployment/web", "--timeout=20s")
	if got := run("get", "deployment", "web", "-o", "jsonpath={.status.availableReplicas}"); got != "5" {
		t.Fatalf("available replicas after scale: %q", got)
	}
	run("create", "deployment", "stuck", "--image=nginx")
	run("patch", "deployment", "stuck", "--type=merge", "-p", `{"spec":{"progressDeadlineSeconds":1}}`)
	k.fails(`deployment "stuck" exceeded its progress deadline`, "rollout", "status", "deployment/stuck", "--timeout=30s")
}
