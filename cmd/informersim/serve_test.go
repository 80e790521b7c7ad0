//go:build serve

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a strings.Builder safe for the serving goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServing runs serve with args until ctx ends and returns the address it printed, its
// standard output and where its exit code will come; without an address within 10s it cancels
// and fails the test.
func startServing(t *testing.T, ctx context.Context, cancel context.CancelFunc, args ...string) (string, *syncBuffer, <-chan int) {
	t.Helper()
	var out, errb syncBuffer
	code := make(chan int, 1)
	go func() { code <- serveUntil(ctx, args, &out, &errb) }()
	url := ""
	for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, l := range strings.Split(out.String(), "\n") {
			if u, ok := strings.CutPrefix(l, "informersim: serving the Kubernetes API at "); ok {
				url = u
			}
		}
	}
	if url == "" {
		cancel()
		t.Fatalf("no address printed; stdout %q stderr %q", out.String(), errb.String())
	}
	return url, &out, code
}

// Goal: serve prints its address and a kubeconfig, answers the Kubernetes API there, stops when
// its context ends, and refuses bad flags with exit 2.
func TestServe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	url, out, code := startServing(t, ctx, cancel, "-addr=127.0.0.1:0", "-crd=example.com/v1/Widget/widgets,status")
	if !strings.Contains(out.String(), "server: "+url+"\n") {
		t.Errorf("the kubeconfig does not point at %s:\n%s", url, out.String())
	}
	resp, err := http.Get(url + "/apis/example.com/v1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"widgets/status"`) {
		t.Errorf("discovery of the -crd resource: %d %s", resp.StatusCode, body)
	}
	// Every feature of kube/ is linked: the system namespaces exist, and a client accepting
	// protobuf first gets protobuf.
	req, _ := http.NewRequest("GET", url+"/api/v1/namespaces/kube-system", nil)
	req.Header.Set("Accept", "application/vnd.kubernetes.protobuf, application/json")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/vnd.kubernetes.protobuf" || !strings.HasPrefix(string(body), "k8s\x00") {
		t.Errorf("kube-system in protobuf: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	cancel()
	if c := <-code; c != 0 || !strings.HasSuffix(out.String(), "informersim: stopped\n") {
		t.Errorf("serve exit %d, stdout ends %q", c, out.String())
	}
	for _, args := range [][]string{{"-crd=nope"}, {"-crd=g/v/K/p,weird"}, {"extra"}, {"-addr=256.0.0.1:99999"}} {
		var o, e syncBuffer
		if c := serveUntil(context.Background(), args, &o, &e); c == 0 || e.String() == "" {
			t.Errorf("serve %q = exit %d, stderr %q; want a failure with a message", args, c, e.String())
		}
	}
}

// Goal: -crd's schema=FILE gives server-side apply the custom resource's structural schema: an
// applied field the schema does not declare is refused (400), a declared one is applied; a
// schema that cannot be read or is not an object schema stops serve with exit 2.
func TestServeCRDSchema(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "widget.yaml")
	if err := os.WriteFile(good, []byte("type: object\nproperties:\n  spec:\n    type: object\n    properties:\n      size: {type: integer}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("type: string\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, _, code := startServing(t, ctx, cancel, "-addr=127.0.0.1:0", "-crd=example.com/v1/Widget/widgets,schema="+good)
	apply := func(spec string) int {
		req, _ := http.NewRequest("PATCH", url+"/apis/example.com/v1/namespaces/default/widgets/w?fieldManager=t",
			strings.NewReader(`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":`+spec+`}`))
		req.Header.Set("Content-Type", "application/apply-patch+yaml")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if c := apply(`{"colour":"red"}`); c != 400 {
		t.Errorf("apply of a field the schema lacks: %d, want 400", c)
	}
	if c := apply(`{"size":3}`); c != 201 {
		t.Errorf("apply of a declared field: %d, want 201", c)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("serve exit %d", c)
	}
	for _, arg := range []string{"-crd=example.com/v1/Widget/widgets,schema=" + bad, "-crd=example.com/v1/Widget/widgets,schema=" + filepath.Join(dir, "none.yaml")} {
		var o, e syncBuffer
		if c := serveUntil(context.Background(), []string{"-addr=127.0.0.1:0", arg}, &o, &e); c != 2 || e.String() == "" {
			t.Errorf("serve %s = exit %d, stderr %q; want exit 2 with a message", arg, c, e.String())
		}
	}
}

// Goal: serve runs the control plane by default (an owner's background delete removes its
// dependent) and not with -controllers=false; its flags are checked.
func TestServeControllers(t *testing.T) {
	call := func(method, url, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	for _, on := range []bool{true, false} {
		ctx, cancel := context.WithCancel(context.Background())
		args := []string{"-addr=127.0.0.1:0"} // on by default
		if !on {
			args = append(args, "-controllers=false")
		}
		url, _, code := startServing(t, ctx, cancel, args...)
		cms := url + "/api/v1/namespaces/default/configmaps"
		c, body := call("POST", cms, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owner"}}`)
		var owner struct{ Metadata struct{ UID string } }
		if err := json.Unmarshal([]byte(body), &owner); c != 201 || err != nil {
			t.Fatalf("create owner: %d %s", c, body)
		}
		dep := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dep","ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":%q}]}}`, owner.Metadata.UID)
		if c, body := call("POST", cms, dep); c != 201 {
			t.Fatalf("create dependent: %d %s", c, body)
		}
		if c, body := call("DELETE", cms+"/owner", ""); c != 200 {
			t.Fatalf("delete owner: %d %s", c, body)
		}
		gone := false
		for deadline := time.Now().Add(3 * time.Second); !gone && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			c, _ := call("GET", cms+"/dep", "")
			gone = c == 404
			if !on && time.Now().After(deadline.Add(-2500*time.Millisecond)) {
				break // without controllers: half a second is long enough to see nothing happen
			}
		}
		if gone != on {
			t.Errorf("controllers %v: dependent gone %v", on, gone)
		}
		cancel()
		if c := <-code; c != 0 {
			t.Errorf("serve exit %d", c)
		}
	}
	for _, args := range [][]string{{"-controllers=false", "-stuck=a/b"}, {"-stuck=nameonly"}, {"-status-latency=-1s"}} {
		var o, e syncBuffer
		if c := serveUntil(context.Background(), append([]string{"-addr=127.0.0.1:0"}, args...), &o, &e); c != 2 || e.String() == "" {
			t.Errorf("serve %q = exit %d, stderr %q; want exit 2 with a message", args, c, e.String())
		}
	}
}

// crdManifest is a CustomResourceDefinition as kubebuilder writes one into config/crd/bases.
const crdManifest = `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.org
spec:
  group: example.org
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          apiVersion: {type: string}
          kind: {type: string}
          metadata: {type: object}
          spec:
            type: object
            properties:
              size: {type: integer, minimum: 1, default: 2}
`

// Goal: -crd=DIR installs the definitions of a directory of manifests as a client would, so their
// resources are served and their objects defaulted and validated at once; schema=FILE takes a
// CRD manifest; a definition kube-apiserver would refuse stops serve with exit 2 and its message.
func TestServeCRDManifests(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "example.org_gadgets.yaml"), []byte(crdManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.txt"), []byte("not a manifest"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, _, code := startServing(t, ctx, cancel, "-addr=127.0.0.1:0", "-crd="+dir)
	post := func(spec string) (int, string) {
		resp, err := http.Post(url+"/apis/example.org/v1/namespaces/default/gadgets", "application/json",
			strings.NewReader(`{"apiVersion":"example.org/v1","kind":"Gadget","metadata":{"generateName":"g-"},"spec":`+spec+`}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if c, body := post(`{}`); c != 201 || !strings.Contains(body, `"spec":{"size":2}`) {
		t.Errorf("a gadget with the default: %d %s", c, body)
	}
	if c, body := post(`{"size":0}`); c != 422 || !strings.Contains(body, "spec.size in body should be greater than or equal to 1") {
		t.Errorf("an invalid gadget: %d %s", c, body)
	}
	cancel()
	if c := <-code; c != 0 {
		t.Errorf("serve exit %d", c)
	}

	// schema=FILE with the manifest.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	_, _, code = startServing(t, ctx, cancel, "-addr=127.0.0.1:0", "-crd=example.org/v1/Gadget/gadgets,status,schema="+filepath.Join(dir, "example.org_gadgets.yaml"))
	cancel()
	<-code

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(crdManifest, "scope: Namespaced", "scope: Sideways", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	var o, e syncBuffer
	if c := serveUntil(context.Background(), []string{"-addr=127.0.0.1:0", "-crd=" + bad}, &o, &e); c != 2 || !strings.Contains(e.String(), `spec.scope: Unsupported value: "Sideways"`) {
		t.Errorf("serve with an invalid definition = exit %d, stderr %q", c, e.String())
	}
}
