package clientgo_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const kubectlManifest = `apiVersion: v1
kind: ConfigMap
metadata:
  name: c1
data:
  greeting: hello
---
apiVersion: v1
kind: Pod
metadata:
  name: p1
  labels:
    app: demo
spec:
  containers:
  - name: c
    image: busybox
---
apiVersion: apps/v1
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
      - name: c
        image: nginx
`

// served is a running `informersim serve` of startServe.
type served struct {
	dir        string // a temporary directory for the test's files
	kubeconfig string // the kubeconfig serve wrote
	url        string // the address serve printed
}

// kubectl returns, for srv's kubeconfig and a cache directory of its own: command, a kubectl
// command with args; and run, which runs one, fails the test on a non-zero exit and returns its
// trimmed output.
func (srv served) kubectl(t *testing.T, ctx context.Context) (command func(args ...string) *exec.Cmd, run func(args ...string) string) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal(err)
	}
	cacheDir := filepath.Join(srv.dir, "kube-cache")
	command = func(args ...string) *exec.Cmd {
		return exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig=" + srv.kubeconfig, "--cache-dir=" + cacheDir}, args...)...)
	}
	run = func(args ...string) string {
		t.Helper()
		out, err := command(args...).CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	return command, run
}

// startServe builds the command with the serve tag (a nested module; serve links kube/), starts `informersim serve` on
// a free port with a kubeconfig in a temporary directory, and stops it at the end of the test,
// checking that it exits 0 and says it stopped. Without kubectl on PATH it skips the test, or
// fails it in CI (CI set).
func startServe(t *testing.T, ctx context.Context, args ...string) served {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		// In CI a kubectl test that cannot look is a failure, not a quiet pass (the machine
		// kind has kubectl); a developer without it gets a skip that says why.
		if os.Getenv("CI") != "" {
			t.Fatal("kubectl is not on PATH, and CI must run the kubectl tests against `informersim serve`")
		}
		t.Skip("kubectl is not on PATH: this test runs the real kubectl binary against `informersim serve`")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "informersim")
	build := exec.CommandContext(ctx, "go", "build", "-tags", "serve", "-o", bin, ".")
	build.Dir = filepath.Join("..", "cmd", "informersim") // its own module, with its own go.sum
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	// Not tied to ctx: the test's context ends before the cleanup, which stops serve with SIGINT.
	serve := exec.Command(bin, append([]string{"serve", "-addr=127.0.0.1:0", "-kubeconfig=" + kubeconfig}, args...)...)
	stdout, err := serve.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	serve.Stderr = os.Stderr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	url := ""
	for url == "" && lines.Scan() {
		if u, ok := strings.CutPrefix(lines.Text(), "informersim: serving the Kubernetes API at "); ok {
			url = u
		}
	}
	if url == "" {
		_ = serve.Process.Kill()
		_ = serve.Wait()
		t.Fatal("informersim serve printed no address")
	}
	rest := make(chan string, 64)
	go func() {
		for lines.Scan() {
			rest <- lines.Text()
		}
		close(rest)
	}()
	t.Cleanup(func() {
		_ = serve.Process.Signal(syscall.SIGINT)
		kill := time.AfterFunc(30*time.Second, func() { _ = serve.Process.Kill() }) // a serve that hangs
		defer kill.Stop()
		// Read the output to its end before Wait: Wait closes the pipe, and a line still
		// unread then (the final "stopped") would be lost.
		stopped := false
		for l := range rest {
			stopped = stopped || l == "informersim: stopped"
		}
		if err := serve.Wait(); err != nil {
			t.Errorf("informersim serve exited with %v", err)
		}
		if !stopped {
			t.Error("informersim serve did not say it stopped")
		}
	})
	return served{dir: dir, kubeconfig: kubeconfig, url: url}
}

// TestKubectlAgainstServe runs the real kubectl binary against `informersim serve`: it creates
// objects from a manifest, lists, labels, selects, watches and deletes them, as docs/serve.md's
// session does, and checks the server's state with client-go through the printed kubeconfig.
func TestKubectlAgainstServe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv := startServe(t, ctx)
	dir, kubeconfig, url := srv.dir, srv.kubeconfig, srv.url
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatal(err)
	}

	cacheDir := filepath.Join(dir, "kube-cache")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, kubectl, append([]string{"--kubeconfig=" + kubeconfig, "--cache-dir=" + cacheDir}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	manifest := filepath.Join(dir, "objects.yaml")
	if err := os.WriteFile(manifest, []byte(kubectlManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	expect := func(got, want string) {
		t.Helper()
		if got != want {
			t.Fatalf("kubectl printed %q, want %q", got, want)
		}
	}

	expect(run("create", "-f", manifest), "configmap/c1 created\npod/p1 created\ndeployment.apps/web created")
	expect(run("get", "configmaps,pods,deployments", "-o", "name"), "configmap/c1\npod/p1\ndeployment.apps/web")
	expect(run("get", "cm", "c1", "-o", "jsonpath={.data.greeting}"), "hello")
	if out := run("get", "pods"); !strings.HasPrefix(out, "NAME") || !strings.Contains(out, "p1") {
		t.Fatalf("kubectl get pods printed %q", out)
	}
	expect(run("label", "configmap", "c1", "team=blue"), "configmap/c1 labeled")
	expect(run("get", "cm", "-l", "team=blue", "-o", "name"), "configmap/c1")
	expect(run("get", "cm", "-l", "team=red", "-o", "name"), "")
	expect(run("get", "deploy", "web", "-o", "jsonpath={.spec.replicas} {.metadata.generation}"), "2 1")

	// A watch: kubectl prints the events of the changes made while it runs.
	watch := exec.CommandContext(ctx, kubectl, "--kubeconfig="+kubeconfig, "--cache-dir="+cacheDir,
		"get", "configmaps", "--watch", "--output-watch-events", "--no-headers")
	wout, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	events := bufio.NewScanner(wout)
	nextEvent := func() []string {
		t.Helper()
		if !events.Scan() {
			t.Fatalf("kubectl --watch ended: %v", events.Err())
		}
		return strings.Fields(events.Text())
	}
	if ev := nextEvent(); len(ev) < 2 || ev[0] != "ADDED" || ev[1] != "c1" {
		t.Fatalf("first watch line %q", ev)
	}
	expect(run("annotate", "configmap", "c1", "note=watched"), "configmap/c1 annotated")
	if ev := nextEvent(); len(ev) < 2 || ev[0] != "MODIFIED" || ev[1] != "c1" {
		t.Fatalf("watch line after annotate %q", ev)
	}
	expect(run("delete", "configmap", "c1"), `configmap "c1" deleted`)
	if ev := nextEvent(); len(ev) < 2 || ev[0] != "DELETED" || ev[1] != "c1" {
		t.Fatalf("watch line after delete %q", ev)
	}
	_ = watch.Process.Kill()
	_ = watch.Wait()

	// client-go through the same kubeconfig sees what kubectl left.
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != url {
		t.Fatalf("kubeconfig server %q, serve printed %q", cfg.Host, url)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=demo"})
	if err != nil || len(pods.Items) != 1 || pods.Items[0].Name != "p1" {
		t.Fatalf("client-go list through the kubeconfig: %v %+v", err, pods)
	}
	expect(run("delete", "-f", manifest, "--ignore-not-found", "--wait=false"), `pod "p1" deleted`+"\n"+`deployment.apps "web" deleted`)
	expect(run("get", "deployments", "-o", "name"), "")
}

// TestKubectlEverydayVerbs runs the kubectl commands a user types first against `informersim
// serve`, each of which needs more than JSON bodies: the generators (create configmap
// --from-literal, create namespace, create deployment) send protobuf, get ns needs the system
// namespaces, scale the scale subresource, describe the events, get -w a watch; explain, which
// needs schemas the server does not have, must end with a clear error and a non-zero exit.
func TestKubectlEverydayVerbs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv := startServe(t, ctx)
	command, run := srv.kubectl(t, ctx)
	expect := func(got, want string) {
		t.Helper()
		if got != want {
			t.Fatalf("kubectl printed %q, want %q", got, want)
		}
	}

	expect(run("get", "ns", "-o", "name"), "namespace/default\nnamespace/kube-node-lease\nnamespace/kube-public\nnamespace/kube-system")
	// A watch of namespaces, open while the next commands run.
	watch := command("get", "namespaces", "--watch", "--output-watch-events", "--no-headers")
	wout, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = watch.Process.Kill(); _ = watch.Wait() }()
	events := bufio.NewScanner(wout)
	nextEvent := func() []string {
		t.Helper()
		if !events.Scan() {
			t.Fatalf("kubectl get -w ended: %v", events.Err())
		}
		return strings.Fields(events.Text())
	}
	for i := 0; i < 4; i++ { // the initial ADDED events of the four system namespaces
		if ev := nextEvent(); len(ev) < 2 || ev[0] != "ADDED" {
			t.Fatalf("initial watch line %q", ev)
		}
	}
	expect(run("create", "namespace", "team-a"), "namespace/team-a created")
	if ev := nextEvent(); len(ev) < 2 || ev[0] != "ADDED" || ev[1] != "team-a" {
		t.Fatalf("watch line after create namespace: %q", ev)
	}
	expect(run("get", "ns", "team-a", "-o", "jsonpath={.status.phase}"), "Active")

	expect(run("-n", "team-a", "create", "configmap", "settings", "--from-literal=greeting=hello", "--from-literal=lang=go"), "configmap/settings created")
	expect(run("-n", "team-a", "get", "cm", "settings", "-o", "jsonpath={.data.greeting} {.data.lang}"), "hello go")

	expect(run("-n", "team-a", "create", "deployment", "web", "--image=nginx", "--replicas=2"), "deployment.apps/web created")
	expect(run("-n", "team-a", "scale", "deployment", "web", "--replicas=5"), "deployment.apps/web scaled")
	expect(run("-n", "team-a", "get", "deploy", "web", "-o", "jsonpath={.spec.replicas} {.metadata.generation}"), "5 2")
	// A precondition on the current replica count that does not hold: kubectl refuses.
	if out, err := command("-n", "team-a", "scale", "deployment", "web", "--current-replicas=3", "--replicas=1").CombinedOutput(); err == nil {
		t.Fatalf("scale with a wrong --current-replicas succeeded: %s", out)
	}

	// describe lists the object's events (core/v1 events with involvedObject field selectors).
	ev := fmt.Sprintf(`{"apiVersion":"v1","kind":"Event","metadata":{"name":"web.1","namespace":"team-a"},
"involvedObject":{"apiVersion":"apps/v1","kind":"Deployment","name":"web","namespace":"team-a","uid":%q},
"reason":"ScalingReplicaSet","message":"Scaled up replica set web-1 to 5","type":"Normal","count":1,
"source":{"component":"deployment-controller"}}`, run("-n", "team-a", "get", "deploy", "web", "-o", "jsonpath={.metadata.uid}"))
	evFile := filepath.Join(srv.dir, "event.json")
	if err := os.WriteFile(evFile, []byte(ev), 0o644); err != nil {
		t.Fatal(err)
	}
	expect(run("create", "-f", evFile), "event/web.1 created")
	// events' short name: both event APIs carry it, as on kube-apiserver (one storage), so kubectl
	// says which it took, first.
	expect(run("-n", "team-a", "get", "ev", "-o", "name"), "Warning: short name \"ev\" could also match lower priority resource events.events.k8s.io\nevent/web.1")
	desc := run("-n", "team-a", "describe", "deployment", "web")
	// The strategy is kube-apiserver's default (RollingUpdate, 25% and 25%), which widens
	// describe's first column as against a cluster.
	for _, want := range []string{"Name:                   web", "Namespace:              team-a", "Replicas:               5 desired",
		"RollingUpdateStrategy:  25% max unavailable, 25% max surge", "ScalingReplicaSet", "Scaled up replica set web-1 to 5"} {
		if !strings.Contains(desc, want) {
			t.Errorf("kubectl describe does not show %q:\n%s", want, desc)
		}
	}
	if desc := run("-n", "team-a", "describe", "configmap", "settings"); !strings.Contains(desc, "greeting") || !strings.Contains(desc, "Events:") {
		t.Errorf("kubectl describe configmap:\n%s", desc)
	}

	// explain: the kind's schema from /openapi/v3, its description and fields.
	out, err := command("explain", "pods").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "KIND:       Pod") || !strings.Contains(string(out), "Pod is a collection of containers") ||
		!strings.Contains(string(out), "spec\t<PodSpec>") {
		t.Fatalf("kubectl explain pods: %v\n%s", err, out)
	}
	if out, err := command("explain", "deployment.spec.replicas").CombinedOutput(); err != nil || !strings.Contains(string(out), "FIELD: replicas <integer>") ||
		!strings.Contains(string(out), "Number of desired pods") {
		t.Fatalf("kubectl explain deployment.spec.replicas: %v\n%s", err, out)
	}

	expect(run("delete", "namespace", "team-a"), `namespace "team-a" deleted`)
	if ev := nextEvent(); len(ev) < 2 || (ev[0] != "DELETED" && ev[0] != "MODIFIED") || ev[1] != "team-a" {
		t.Fatalf("watch line after delete namespace: %q", ev)
	}
}
