package webhooks_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/fakeapi/rest"
	"github.com/informersim/informersim/kube"
	"github.com/informersim/informersim/kube/webhooks"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// front is a REST front with kube's options and the webhook plugins started, and an HTTP client
// of it.
type front struct {
	t      *testing.T
	client *http.Client
}

func newFront(t *testing.T) *front {
	t.Helper()
	srv, err := fakeapi.New(fakeapi.Config{RequireNamespaces: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if err := rest.EnsureNamespaces(ctx, srv, rest.SystemNamespaces...); err != nil {
		t.Fatal(err)
	}
	plugins := &kube.AdmissionPlugins{}
	opts, err := kube.RESTOptionsWith(kube.Options{Plugins: plugins})
	if err != nil {
		t.Fatal(err)
	}
	h, err := rest.NewHandler(srv, opts)
	if err != nil {
		t.Fatal(err)
	}
	hooks, err := webhooks.Start(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	plugins.Set(hooks...)
	tr, err := rest.NewTransport(h)
	if err != nil {
		t.Fatal(err)
	}
	return &front{t: t, client: &http.Client{Transport: tr}}
}

// do sends method path with body (JSON) and returns the status code and body.
func (f *front) do(method, path, contentType, body string) (int, string) {
	f.t.Helper()
	req, err := http.NewRequest(method, "http://informersim"+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := f.client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// webhookServer is an HTTPS admission webhook: /mutate adds data.mutated to ConfigMaps, /deny
// denies those with data.bad (403, "no bad keys"), both count their calls.
type webhookServer struct {
	*httptest.Server
	calls  atomic.Int64
	during func() // called during each /deny call, before answering
}

func newWebhookServer(t *testing.T) *webhookServer {
	w := &webhookServer{}
	w.Server = httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.calls.Add(1)
		var review admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&review); err != nil || review.Request == nil {
			http.Error(rw, fmt.Sprintf("bad review: %v", err), http.StatusBadRequest)
			return
		}
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		var obj struct {
			Data map[string]string `json:"data"`
		}
		_ = json.Unmarshal(review.Request.Object.Raw, &obj)
		switch r.URL.Path {
		case "/mutate":
			op := `{"op":"add","path":"/data/mutated","value":"yes"}`
			if obj.Data == nil {
				op = `{"op":"add","path":"/data","value":{"mutated":"yes"}}`
			}
			pt := admissionv1.PatchTypeJSONPatch
			resp.Patch, resp.PatchType = []byte("["+op+"]"), &pt
		case "/nodelete":
			var old struct {
				Data map[string]string `json:"data"`
			}
			_ = json.Unmarshal(review.Request.OldObject.Raw, &old)
			if _, keep := old.Data["keep"]; keep && review.Request.Operation == admissionv1.Delete && review.Request.Object.Raw == nil {
				resp.Allowed = false
				resp.Result = &metav1.Status{Message: "kept", Code: 403}
			}
		case "/deny":
			if w.during != nil {
				w.during()
			}
			if _, bad := obj.Data["bad"]; bad {
				resp.Allowed = false
				resp.Result = &metav1.Status{Message: "no bad keys", Code: 403}
			}
			resp.Warnings = []string{"checked by deny"}
		}
		review.Response = resp
		review.Request = nil
		_ = json.NewEncoder(rw).Encode(review)
	}))
	t.Cleanup(w.Close)
	return w
}

func (w *webhookServer) caBundle() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: w.Certificate().Raw}))
}

// configure writes a webhook configuration of kind (Mutating or Validating) named name with one
// webhook, whose fields (JSON) are given after its name.
func (f *front) configure(kind, name, webhook string) {
	f.t.Helper()
	resource := strings.ToLower(kind) + "webhookconfigurations"
	code, body := f.do("POST", "/apis/admissionregistration.k8s.io/v1/"+resource, "application/json",
		`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"`+kind+`WebhookConfiguration","metadata":{"name":"`+name+`"},"webhooks":[{"name":"`+name+`",`+webhook+`}]}`)
	if code != http.StatusCreated {
		f.t.Fatalf("create %s %s: %d %s", kind, name, code, body)
	}
}

// clientConfig is a webhook's clientConfig for path on w.
func (w *webhookServer) clientConfig(path string) string {
	ca, _ := json.Marshal([]byte(w.caBundle()))
	return `"clientConfig":{"url":"` + w.URL + path + `","caBundle":` + string(ca) + `}`
}

const configMapRules = `"rules":[{"operations":["CREATE","UPDATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}],"sideEffects":"None","admissionReviewVersions":["v1"]`

// Goal: kube-apiserver's webhook plugins, run by the front, call the webhooks of the
// configurations written to it as kube-apiserver does: over HTTPS verified with the caBundle,
// only for the operations, resources and namespaces their rules and selectors match; a
// mutating webhook's patch stored, a validating webhook's denial answered with its code and
// kube-apiserver's message, its warnings passed on; failurePolicy Ignore letting a write through
// an unreachable webhook and Fail refusing it; and a webhook that reads the API while it is
// called (as one with a client does) answered, for creates, updates and patches alike: the
// write is admitted outside the server's lock; deletes and deletecollection admitted with the
// object deleted.
func TestWebhooksAsKubeAPIServer(t *testing.T) {
	f := newFront(t)
	w := newWebhookServer(t)
	if code, body := f.do("POST", "/api/v1/namespaces", "application/json", `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"hooked","labels":{"webhooks":"on"}}}`); code != http.StatusCreated {
		t.Fatalf("create namespace: %d %s", code, body)
	}
	f.configure("Mutating", "mutate.example.org", w.clientConfig("/mutate")+`,"namespaceSelector":{"matchLabels":{"webhooks":"on"}},`+configMapRules)
	f.configure("Validating", "deny.example.org", w.clientConfig("/deny")+`,`+configMapRules)
	f.configure("Validating", "unreachable.example.org", `"clientConfig":{"url":"https://127.0.0.1:1/down"},"failurePolicy":"Ignore","timeoutSeconds":2,`+configMapRules)
	f.configure("Validating", "down.example.org", `"clientConfig":{"url":"https://127.0.0.1:1/down"},"rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["secrets"]}],"sideEffects":"None","admissionReviewVersions":["v1"]`)
	// The plugins learn of configurations from their informers, as kube-apiserver's do: wait
	// until a dry run is mutated.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, body := f.do("POST", "/api/v1/namespaces/hooked/configmaps?dryRun=All", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"probe"}}`)
		if strings.Contains(body, `"mutated":"yes"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the mutating webhook was not called within 10s: %s", body)
		}
	}
	// The validating webhook reads the API each time it is called.
	var readDuringCall atomic.Int64
	w.during = func() {
		if code, _ := f.do("GET", "/api/v1/namespaces/hooked/configmaps", "", ""); code == http.StatusOK {
			readDuringCall.Add(1)
		}
	}

	code, body := f.do("POST", "/api/v1/namespaces/hooked/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}`)
	if code != http.StatusCreated || !strings.Contains(body, `"data":{"k":"v","mutated":"yes"}`) {
		t.Errorf("create in a selected namespace: %d %s; want the mutating webhook's patch stored", code, body)
	}
	if code, body := f.do("POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"k":"v"}}`); code != http.StatusCreated || strings.Contains(body, "mutated") {
		t.Errorf("create outside the namespaceSelector: %d %s; want it stored unmutated", code, body)
	}
	const denied = `admission webhook \"deny.example.org\" denied the request: no bad keys`
	if code, body := f.do("POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"bad":"1"}}`); code != http.StatusForbidden || !strings.Contains(body, denied) {
		t.Errorf("create denied: %d %s; want 403 %s", code, body, denied)
	}
	if code, body := f.do("PUT", "/api/v1/namespaces/hooked/configmaps/a", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"bad":"1"}}`); code != http.StatusForbidden || !strings.Contains(body, denied) {
		t.Errorf("update denied: %d %s", code, body)
	}
	if code, body := f.do("PATCH", "/api/v1/namespaces/hooked/configmaps/a", "application/merge-patch+json", `{"data":{"bad":"1"}}`); code != http.StatusForbidden || !strings.Contains(body, denied) {
		t.Errorf("merge patch denied: %d %s", code, body)
	}
	if code, body := f.do("PATCH", "/api/v1/namespaces/hooked/configmaps/a", "application/strategic-merge-patch+json", `{"data":{"k":"w"}}`); code != http.StatusOK || !strings.Contains(body, `"data":{"k":"w","mutated":"yes"}`) {
		t.Errorf("strategic merge patch: %d %s", code, body)
	}
	if code, body := f.do("PUT", "/api/v1/namespaces/hooked/configmaps/a", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"x"}}`); code != http.StatusOK || !strings.Contains(body, `"data":{"k":"x","mutated":"yes"}`) {
		t.Errorf("update: %d %s; want the patch of the update stored", code, body)
	}
	if n := readDuringCall.Load(); n < 6 {
		t.Errorf("the validating webhook read the API %d times while called, want once per call (6)", n)
	}

	req, _ := http.NewRequest("POST", "http://informersim/api/v1/namespaces/default/configmaps", strings.NewReader(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"warned"}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Values("Warning"); resp.StatusCode != http.StatusCreated || !slicesContains(got, `299 - "checked by deny"`) {
		t.Errorf("the validating webhook's warning: %d %q", resp.StatusCode, got)
	}

	// Deletes are admitted too: the object deleted is the review's oldObject.
	f.configure("Validating", "nodelete.example.org", w.clientConfig("/nodelete")+`,"rules":[{"operations":["DELETE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}],"sideEffects":"None","admissionReviewVersions":["v1"]`)
	if code, body := f.do("POST", "/api/v1/namespaces/hooked/configmaps", "application/json", `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kept"},"data":{"keep":"1"}}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	const kept = `admission webhook \"nodelete.example.org\" denied the request: kept`
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		code, body := f.do("DELETE", "/api/v1/namespaces/hooked/configmaps/kept?dryRun=All", "", "")
		if code == http.StatusForbidden && strings.Contains(body, kept) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the delete webhook was not called within 10s: %d %s", code, body)
		}
	}
	if code, body := f.do("DELETE", "/api/v1/namespaces/hooked/configmaps/kept", "", ""); code != http.StatusForbidden || !strings.Contains(body, kept) {
		t.Errorf("delete denied: %d %s", code, body)
	}
	if code, body := f.do("DELETE", "/api/v1/namespaces/hooked/configmaps", "", ""); code != http.StatusForbidden || !strings.Contains(body, kept) {
		t.Errorf("deletecollection denied: %d %s", code, body)
	}
	if code, body := f.do("GET", "/api/v1/namespaces/hooked/configmaps/kept", "", ""); code != http.StatusOK {
		t.Errorf("the kept configmap after the denied deletes: %d %s", code, body)
	}
	if code, body := f.do("DELETE", "/api/v1/namespaces/default/configmaps/b", "", ""); code != http.StatusOK {
		t.Errorf("delete allowed: %d %s", code, body)
	}

	code, body = f.do("POST", "/api/v1/namespaces/default/secrets", "application/json", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`)
	if code != http.StatusInternalServerError || !strings.Contains(body, `failed calling webhook \"down.example.org\"`) {
		t.Errorf("a write through an unreachable webhook with failurePolicy Fail: %d %s", code, body)
	}
}

func slicesContains(xs []string, x string) bool {
	for _, e := range xs {
		if e == x {
			return true
		}
	}
	return false
}
