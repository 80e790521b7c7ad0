//go:build serve

package main

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// writeTestAssets runs envtest-assets into a directory of the test's and returns the path it
// printed. The binary linked is this test binary, whose TestMain is the stand-in its name names.
func writeTestAssets(t *testing.T) string {
	t.Helper()
	var out, errb strings.Builder
	if code := run([]string{"envtest-assets", "-dir=" + t.TempDir()}, &out, &errb); code != 0 {
		t.Fatalf("envtest-assets: exit %d: %s", code, errb.String())
	}
	dir := strings.TrimSpace(out.String())
	for _, name := range []string{"kube-apiserver", "etcd", "kubectl"} {
		if info, err := os.Stat(filepath.Join(dir, name)); err != nil || info.Mode()&0o111 == 0 {
			t.Fatalf("%s/%s is not an executable: %v", dir, name, err)
		}
	}
	return dir
}

// processesRunning returns the pids of the processes whose executable is in dir.
func processesRunning(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("the process check reads /proc: %v", err)
	}
	var pids []string
	for _, e := range entries {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.HasPrefix(exe, dir+string(filepath.Separator)) {
			pids = append(pids, e.Name()+" ("+exe+")")
		}
	}
	return pids
}

// Goal: a kubebuilder suite's envtest.Environment, given only KUBEBUILDER_ASSETS from
// `informersim envtest-assets`, starts informersim's kube-apiserver and etcd stand-ins by itself
// (its flags, its certificates, its health checks, its admin client certificate), installs a
// CRD directory, and its client creates a custom resource the schema defaults and refuses an
// invalid one; a user outside system:masters is refused as RBAC without bindings refuses it,
// an anonymous client too; Stop leaves no process behind.
func TestEnvtestAssetsStartedByEnvtest(t *testing.T) {
	assets := writeTestAssets(t)
	crds := t.TempDir()
	if err := os.WriteFile(filepath.Join(crds, "example.org_gadgets.yaml"), []byte(crdManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBEBUILDER_ASSETS", assets)
	t.Setenv("USE_EXISTING_CLUSTER", "")
	env := &envtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true}
	start := time.Now()
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("envtest.Environment.Start: %v", err)
	}
	t.Logf("envtest.Environment.Start with informersim's stand-ins, CRDs installed: %v", time.Since(start))
	stopped := false
	defer func() {
		if !stopped {
			_ = env.Stop()
		}
	}()
	if !strings.HasPrefix(cfg.Host, "https://") || len(cfg.CertData) == 0 {
		t.Errorf("envtest's admin config: host %q, client certificate %d bytes; want TLS with a client certificate", cfg.Host, len(cfg.CertData))
	}

	ctx := context.Background()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.org/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g1", "namespace": "default"},
		"spec":     map[string]any{},
	}}
	if err := c.Create(ctx, g); err != nil {
		t.Fatalf("create a gadget: %v", err)
	}
	if size, _, _ := unstructured.NestedInt64(g.Object, "spec", "size"); size != 2 {
		t.Errorf("the created gadget's spec.size is %d, want the schema's default 2: %v", size, g.Object)
	}
	bad := g.DeepCopy()
	bad.SetName("g2")
	bad.SetResourceVersion("")
	_ = unstructured.SetNestedField(bad.Object, int64(0), "spec", "size")
	if err := c.Create(ctx, bad); !apierrors.IsInvalid(err) {
		t.Errorf("create of an invalid gadget: %v, want Invalid", err)
	}

	checkStandInAuth(t, env, cfg, c)
	if pids := processesRunning(t, assets); len(pids) != 2 {
		t.Errorf("while envtest runs, the processes of %s are %v; want the two stand-ins", assets, pids)
	}

	stopped = true
	start = time.Now()
	if err := env.Stop(); err != nil {
		t.Fatalf("envtest.Environment.Stop: %v", err)
	}
	t.Logf("envtest.Environment.Stop: %v", time.Since(start))
	if pids := processesRunning(t, assets); len(pids) > 0 {
		t.Errorf("after envtest.Environment.Stop these processes of %s are left: %v", assets, pids)
	}
}

// Goal: envtest-assets reuses the directory it wrote for the same build, and prints only the
// path on stdout (what $(...) takes).
func TestEnvtestAssetsReused(t *testing.T) {
	parent := t.TempDir()
	var paths []string
	for range 2 {
		var out, errb strings.Builder
		if code := run([]string{"envtest-assets", "-dir=" + parent, "-kubectl=" + os.Args[0]}, &out, &errb); code != 0 {
			t.Fatalf("envtest-assets: exit %d: %s", code, errb.String())
		}
		if lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"); len(lines) != 1 {
			t.Fatalf("envtest-assets printed %q, want one line, the path", out.String())
		}
		paths = append(paths, strings.TrimSpace(out.String()))
	}
	if paths[0] != paths[1] || filepath.Dir(paths[0]) != parent {
		t.Errorf("envtest-assets twice printed %q, want one directory in %s", paths, parent)
	}
	if target, err := os.Readlink(filepath.Join(paths[0], "kubectl")); err != nil || !filepath.IsAbs(target) {
		t.Errorf("kubectl links to %q (%v), want -kubectl's absolute path", target, err)
	}
	entries, _ := os.ReadDir(parent)
	if len(entries) != 1 {
		t.Errorf("%s holds %d entries after two runs, want one directory", parent, len(entries))
	}
	// Without a kubectl on PATH, kubectl is a script saying what envtest would use one for.
	t.Setenv("PATH", t.TempDir())
	var out, errb strings.Builder
	if code := run([]string{"envtest-assets", "-dir=" + parent}, &out, &errb); code != 0 || !strings.Contains(errb.String(), "no kubectl on PATH") {
		t.Fatalf("envtest-assets without kubectl: exit %d, %q", code, errb.String())
	}
	msg, err := exec.Command(filepath.Join(strings.TrimSpace(out.String()), "kubectl"), "version").CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "envtest itself never runs kubectl") {
		t.Errorf("the kubectl placeholder: %v, %q", err, msg)
	}
	errb.Reset()
	if code := run([]string{"envtest-assets", "-dir=" + parent, "-kubectl=" + filepath.Join(parent, "none")}, io.Discard, &errb); code != 2 ||
		!strings.Contains(errb.String(), "is not a file") {
		t.Errorf("-kubectl naming no file: exit %d, %q", code, errb.String())
	}
}

// Goal: the kube-apiserver stand-in refuses, exit 1 with a message saying why, every flag it
// cannot honour (kube-apiserver's own and unknown ones), and answers --help, without the
// insecure port envtest looks for, with exit 0.
func TestKubeAPIServerStandInFlags(t *testing.T) {
	dir := t.TempDir()
	base := []string{"--etcd-servers=http://127.0.0.1:1", "--cert-dir=" + dir, "--secure-port=6443"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--feature-gates=Foo=true"}, "--feature-gates is not honoured: the stand-in serves kube-apiserver v1.37's default"},
		{[]string{"--insecure-port=8080"}, "--insecure-port is not honoured"},
		{[]string{"--no-such-flag=1"}, "--no-such-flag is not a flag the stand-in honours (it takes --advertise-address, "},
		{[]string{"--authorization-mode=Webhook"}, "--authorization-mode=Webhook is not honoured"},
		{[]string{"--enable-admission-plugins=PodSecurity"}, "--enable-admission-plugins=PodSecurity is not honoured: the stand-in runs only NamespaceLifecycle"},
		{[]string{"--disable-admission-plugins=ValidatingAdmissionWebhook"}, "cannot turn admission webhooks off"},
		{[]string{"--allow-privileged=false"}, "--allow-privileged=false is not honoured"},
		{[]string{"--secure-port=0"}, "--secure-port=0: the stand-in serves HTTPS only"},
		{[]string{"--etcd-servers=http://a:1,http://b:2"}, "want the URL of one etcd stand-in"},
		{[]string{"--service-cluster-ip-range=10.0.0.0/99"}, "--service-cluster-ip-range=10.0.0.0/99"},
		{[]string{"--client-ca-file=" + filepath.Join(dir, "none.crt")}, "--client-ca-file"},
		{[]string{"--service-account-key-file=" + filepath.Join(dir, "none.key")}, "a service account key file"},
		{[]string{"positional"}, "unexpected arguments"},
	} {
		var out, errb strings.Builder
		code := kubeAPIServerStandIn(context.Background(), append(append([]string{}, base...), tc.args...), &out, &errb)
		if code != 1 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("kube-apiserver %v: exit %d, stderr %q; want exit 1 saying %q", tc.args, code, errb.String(), tc.want)
		}
	}
	var out, errb strings.Builder
	if code := kubeAPIServerStandIn(context.Background(), []string{"--help"}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "--secure-port") || strings.Contains(out.String(), "--insecure-port") {
		t.Errorf("kube-apiserver --help: exit %d, %q", code, out.String())
	}
	out.Reset()
	if code := etcdStandIn(context.Background(), []string{"--help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "--unsafe-no-fsync") {
		t.Errorf("etcd --help: exit %d, %q", code, out.String())
	}
	errb.Reset()
	if code := etcdStandIn(context.Background(), []string{"--initial-cluster=a=http://x:1"}, io.Discard, &errb); code != 1 ||
		!strings.Contains(errb.String(), "--initial-cluster is not a flag the stand-in honours") {
		t.Errorf("etcd --initial-cluster: exit %d, %q", code, errb.String())
	}
}

// Goal: a second kube-apiserver stand-in started against the etcd stand-in of a first (what
// restarting envtest's APIServer does, expecting the first's objects back from etcd) refuses to
// start, saying why, instead of starting empty; a kube-apiserver pointed at something that is not
// the etcd stand-in refuses too.
func TestKubeAPIServerStandInRestartRefused(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	etcdURL := "http://" + freeAddr(t)
	var etcdErr syncBuffer
	etcdDone := make(chan int, 1)
	go func() {
		etcdDone <- etcdStandIn(ctx, []string{"--listen-client-urls=" + etcdURL, "--data-dir=" + t.TempDir()}, io.Discard, &etcdErr)
	}()
	waitHealthy(t, etcdURL+"/health")
	if err := registerWithEtcd(ctx, etcdURL); err != nil {
		t.Fatalf("the first registration: %v", err)
	}
	err := registerWithEtcd(ctx, etcdURL)
	if err == nil || !strings.Contains(err.Error(), "the stand-in keeps them in its own memory and would start empty") {
		t.Errorf("a second apiserver registering: %v", err)
	}
	cancel()
	if code := <-etcdDone; code != 0 {
		t.Errorf("etcd stand-in exit %d: %s", code, etcdErr.String())
	}
	notEtcd := httptest.NewServer(http.NotFoundHandler())
	defer notEtcd.Close()
	if err := registerWithEtcd(context.Background(), notEtcd.URL); err == nil || !strings.Contains(err.Error(), "is not informersim's etcd stand-in") {
		t.Errorf("registering with a server that is not the etcd stand-in: %v", err)
	}
}

// freeAddr returns a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitHealthy polls url until it answers 200, for 10s at most.
func waitHealthy(t *testing.T, url string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("%s did not answer 200 within 10s", url)
}

// checkStandInAuth checks the stand-in's authentication and authorisation as envtest's admin
// (c, over cfg) and the users env provisions see them: a user of envtest's AddUser outside
// system:masters is refused as RBAC without bindings refuses it, with kube-apiserver's wording
// and the reason the stand-in gives; the admin impersonating that user is that user; a token the
// stand-in cannot verify is a 401; without a client certificate, system:anonymous may read
// /healthz, not the API.
func checkStandInAuth(t *testing.T, env *envtest.Environment, cfg *rest.Config, c client.Client) {
	t.Helper()
	ctx := context.Background()
	bob, err := env.AddUser(envtest.User{Name: "bob", Groups: []string{"team"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bc, err := client.New(bob.Config(), client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = bc.List(ctx, &corev1.ConfigMapList{}, client.InNamespace("default"))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "bob" cannot list resource "configmaps" in API group "" in the namespace "default"`) ||
		!strings.Contains(err.Error(), "evaluates no RBAC Roles") {
		t.Errorf("bob lists configmaps: %v; want kube-apiserver's 403 for RBAC without bindings, saying the stand-in evaluates no Roles", err)
	}
	// The admin impersonating bob is bob; a token the stand-in cannot verify is a 401.
	as := rest.CopyConfig(cfg)
	as.Impersonate = rest.ImpersonationConfig{UserName: "bob", Groups: []string{"team"}}
	ac, err := client.New(as, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ac.List(ctx, &corev1.ConfigMapList{}, client.InNamespace("default")); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `User "bob" cannot list`) {
		t.Errorf("the admin impersonating bob lists configmaps: %v; want bob's 403", err)
	}
	if err := bc.Get(ctx, client.ObjectKey{Name: "default"}, &corev1.Namespace{}); !apierrors.IsForbidden(err) {
		t.Errorf("bob gets a namespace: %v; want 403", err)
	}
	tokenCfg := rest.AnonymousClientConfig(cfg)
	tokenCfg.BearerToken = "not-a-token"
	tc, err := client.New(tokenCfg, client.Options{Mapper: c.RESTMapper()})
	if err != nil {
		t.Fatal(err)
	}
	if err := tc.List(ctx, &corev1.ConfigMapList{}); !apierrors.IsUnauthorized(err) {
		t.Errorf("a request with a bearer token: %v; want 401", err)
	}
	// Without a client certificate: system:anonymous may read /healthz, not the API.
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for path, want := range map[string]int{"/healthz": 200, "/api/v1/namespaces": 403} {
		resp, err := insecure.Get(strings.TrimSuffix(cfg.Host, "/") + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("anonymous GET %s: %d %s, want %d", path, resp.StatusCode, body, want)
		}
	}
}

// Goal: envtest-assets keeps the directories of the three most recently used builds and removes
// older ones, never the one it prints, and leaves what is not an assets' directory alone.
func TestEnvtestAssetsPrunesOldBuilds(t *testing.T) {
	parent := t.TempDir()
	old := time.Now().Add(-time.Hour)
	for i, name := range []string{"0000000000000001", "0000000000000002", "0000000000000003", "0000000000000004", "notassets"} {
		dir := filepath.Join(parent, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		at := old.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(dir, at, at); err != nil {
			t.Fatal(err)
		}
	}
	var out, errb strings.Builder
	if code := run([]string{"envtest-assets", "-dir=" + parent, "-kubectl=" + os.Args[0]}, &out, &errb); code != 0 {
		t.Fatalf("envtest-assets: exit %d: %s", code, errb.String())
	}
	var left []string
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		left = append(left, e.Name())
	}
	want := []string{"0000000000000003", "0000000000000004", filepath.Base(strings.TrimSpace(out.String())), "notassets"}
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Errorf("after envtest-assets, %s holds %q, want %q", parent, left, want)
	}
}

// BenchmarkEnvtestStartStop: envtest.Environment's Start and Stop with informersim's stand-ins
// (the CRD directory installed), and as the anchor of the same run one start of the binary
// (its initialisation, the part of each stand-in's start envtest waits for that informersim
// cannot shorten): the ratio says how many such starts a Start and Stop cost.
//
//	cd cmd/informersim && go test -tags serve -run '^$' -bench EnvtestStartStop -benchtime 5x .
func BenchmarkEnvtestStartStop(b *testing.B) {
	parent := b.TempDir()
	var out, errb strings.Builder
	if code := run([]string{"envtest-assets", "-dir=" + parent}, &out, &errb); code != 0 {
		b.Fatalf("envtest-assets: exit %d: %s", code, errb.String())
	}
	assets := strings.TrimSpace(out.String())
	crds := b.TempDir()
	if err := os.WriteFile(filepath.Join(crds, "example.org_gadgets.yaml"), []byte(crdManifest), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Setenv("KUBEBUILDER_ASSETS", assets)
	b.Setenv("USE_EXISTING_CLUSTER", "")
	var anchor, startStop time.Duration
	for b.Loop() {
		start := time.Now()
		cmd := exec.Command(filepath.Join(assets, "informersim"), "--help")
		cmd.Env = append(os.Environ(), "INFORMERSIM_STAND_IN=etcd")
		if err := cmd.Run(); err != nil {
			b.Fatalf("the binary's start: %v", err)
		}
		anchor += time.Since(start)
		start = time.Now()
		env := &envtest.Environment{CRDDirectoryPaths: []string{crds}, ErrorIfCRDPathMissing: true}
		if _, err := env.Start(); err != nil {
			b.Fatalf("envtest.Environment.Start: %v", err)
		}
		if err := env.Stop(); err != nil {
			b.Fatalf("envtest.Environment.Stop: %v", err)
		}
		startStop += time.Since(start)
	}
	b.ReportMetric(float64(startStop.Milliseconds())/float64(b.N), "ms-start-stop/op")
	b.ReportMetric(float64(anchor.Milliseconds())/float64(b.N), "ms-binary-start/op")
	b.ReportMetric(float64(startStop)/float64(anchor), "x-binary-starts")
}
