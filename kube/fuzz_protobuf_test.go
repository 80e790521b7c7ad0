package kube_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/fakeapi/rest"
	"github.com/informersim/informersim/kube"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
)

var (
	fuzzPBMethods = []string{"POST", "PUT", "DELETE", "GET", "PATCH"}
	fuzzPBPaths   = []string{
		"/api/v1/namespaces/a/configmaps",
		"/api/v1/namespaces/a/configmaps/c",
		"/api/v1/namespaces/a/pods/p",
		"/api/v1/namespaces/a/pods/p/status",
		"/apis/apps/v1/namespaces/a/deployments",
		"/apis/apps/v1/namespaces/a/deployments/d",
		"/apis/apps/v1/namespaces/a/deployments/d/scale",
		"/apis/example.com/v1/namespaces/a/widgets/w",
		"/api/v1/namespaces/a/events",
		"/api/v1/namespaces/a/configmaps?watch=1&resourceVersion=0",
	}
	fuzzPBTypes  = []string{kube.ProtobufMediaType, "application/json", kube.ProtobufMediaType + "; charset=x", "application/merge-patch+json", ""}
	fuzzPBAccept = []string{
		kube.ProtobufMediaType,
		kube.ProtobufMediaType + ", application/json",
		kube.ProtobufMediaType + ";as=Table;g=meta.k8s.io;v=v1, application/json",
		kube.ProtobufMediaType + ";as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
		"",
	}
)

// flushCancel cancels the request once the handler flushes, so a fuzzed watch returns after
// its first frame.
type flushCancel struct {
	*httptest.ResponseRecorder
	cancel context.CancelFunc
}

func (f flushCancel) Flush() { f.cancel() }

// FuzzProtobuf sends arbitrary protobuf (and other) bodies with every method to the built-in
// kinds, a scale subresource, events, a custom resource and a watch, asking for protobuf,
// Tables and metadata in protobuf or JSON. Whatever the input: no panic, no 500 (nothing is
// injected, so a 500 is a bug: a stored object that cannot be encoded, say), every error is a
// JSON Status whose code is the HTTP code, a 2xx in protobuf starts with the envelope's magic
// (or a stream's frame length), and the server still answers a protobuf list afterwards.
//
//	cd kube && go test -run='^$' -fuzz=FuzzProtobuf -fuzztime=60s .
func FuzzProtobuf(f *testing.F) {
	enc := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	pbBody := func(obj runtime.Object) []byte {
		b, err := runtime.Encode(enc, obj)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"a": "b"}}, Data: map[string]string{"k": "v"}}
	dep := &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: "d"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}}}}
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}, ObjectMeta: metav1.ObjectMeta{Name: "p"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	scale := &autoscalingv1.Scale{TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"}, ObjectMeta: metav1.ObjectMeta{Name: "d"}, Spec: autoscalingv1.ScaleSpec{Replicas: 4}}
	ev := &corev1.Event{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Event"}, ObjectMeta: metav1.ObjectMeta{Name: "e"}, InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "p"}, Reason: "R"}
	del := &metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "DeleteOptions"}, GracePeriodSeconds: ptr.To[int64](0)}
	for _, s := range []struct {
		method, path, ct, accept uint8
		body                     []byte
	}{
		{0, 0, 0, 0, pbBody(cm)},
		{1, 1, 0, 1, pbBody(cm)},
		{0, 4, 0, 0, pbBody(dep)},
		{1, 5, 0, 1, pbBody(dep)},
		{1, 6, 0, 0, pbBody(scale)},
		{1, 3, 0, 0, pbBody(pod)},
		{0, 8, 0, 0, pbBody(ev)},
		{2, 1, 0, 0, pbBody(del)},
		{2, 2, 0, 0, pbBody(del)},
		{3, 9, 4, 0, nil},
		{3, 0, 4, 2, nil},
		{3, 0, 4, 3, nil},
		{1, 7, 0, 1, pbBody(cm)},
		{0, 0, 0, 0, []byte("k8s\x00\x0a\x00")},
		{4, 6, 3, 0, []byte(`{"spec":{"replicas":2}}`)},
	} {
		f.Add(s.method, s.path, s.ct, s.accept, s.body)
	}
	srv, err := fakeapi.New(fakeapi.Config{Resources: []fakeapi.Resource{widgets}, MaxObjects: 2000, MaxLogEntries: 20000, MaxRecords: 1000})
	if err != nil {
		f.Fatal(err)
	}
	h, err := rest.NewHandler(srv, kube.RESTOptions())
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []struct {
		path string
		obj  runtime.Object
	}{{"/api/v1/namespaces/a/configmaps", cm}, {"/apis/apps/v1/namespaces/a/deployments", dep}, {"/api/v1/namespaces/a/pods", pod}} {
		if w := serve(h, "POST", s.path, kube.ProtobufMediaType, "", pbBody(s.obj)); w.Code != 201 {
			f.Fatalf("setup %s: %d %s", s.path, w.Code, w.Body)
		}
	}
	if w := serve(h, "POST", "/apis/example.com/v1/namespaces/a/widgets", "application/json", "", []byte(`{"metadata":{"name":"w"}}`)); w.Code != 201 {
		f.Fatalf("setup widget: %d %s", w.Code, w.Body)
	}
	f.Fuzz(func(t *testing.T, method, path, ct, accept uint8, body []byte) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		target := fuzzPBPaths[int(path)%len(fuzzPBPaths)]
		r := httptest.NewRequestWithContext(ctx, fuzzPBMethods[int(method)%len(fuzzPBMethods)], "http://informersim"+target, strings.NewReader(string(body)))
		if c := fuzzPBTypes[int(ct)%len(fuzzPBTypes)]; c != "" {
			r.Header.Set("Content-Type", c)
		}
		if a := fuzzPBAccept[int(accept)%len(fuzzPBAccept)]; a != "" {
			r.Header.Set("Accept", a)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(flushCancel{rec, cancel}, r)
		switch {
		case rec.Code == http.StatusInternalServerError:
			t.Fatalf("500 for %s %s: %s", r.Method, target, rec.Body)
		case rec.Code >= 400:
			var st metav1.Status
			if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil || st.Kind != "Status" || int(st.Code) != rec.Code || st.Reason == "" {
				t.Fatalf("%s %s: HTTP %d with a body that is not a matching Status (%v): %q", r.Method, target, rec.Code, err, rec.Body)
			}
		case strings.HasPrefix(rec.Header().Get("Content-Type"), kube.ProtobufStreamMediaType):
		case strings.HasPrefix(rec.Header().Get("Content-Type"), kube.ProtobufMediaType):
			if !strings.HasPrefix(rec.Body.String(), "k8s\x00") {
				t.Fatalf("%s %s: a protobuf answer without the envelope: %q", r.Method, target, rec.Body)
			}
		}
		if w := serve(h, "GET", "/api/v1/namespaces/a/configmaps", "", kube.ProtobufMediaType, nil); w.Code != 200 {
			t.Fatalf("server broken after %s %s: %d %s", r.Method, target, w.Code, w.Body)
		}
		if w := serve(h, "GET", "/apis/apps/v1/namespaces/a/deployments", "", kube.ProtobufMediaType, nil); w.Code != 200 {
			t.Fatalf("deployments unreadable in protobuf after %s %s: %d %s", r.Method, target, w.Code, w.Body)
		}
	})
}
