package kube

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestBuiltinDefaults creates objects of the kinds controllers write most through the front and
// compares what is stored with what kube-apiserver v1.37 stores for the same body (its
// defaulters, pkg/apis/*/v1/defaults.go, read for each field below): the defaults filled in
// where the body leaves a field unset, and a field the body sets kept as it is.
func TestBuiltinDefaults(t *testing.T) {
	_, h := newFront(t)
	for _, tt := range []struct {
		path, body string
		at         []string // the path in the answer to compare
		want       string   // YAML
	}{
		{"/apis/apps/v1/namespaces/default/deployments",
			`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},
			"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"nginx:1.27","ports":[{"containerPort":80}],
			"readinessProbe":{"httpGet":{"port":80}},"env":[{"name":"N","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}]}],
			"volumes":[{"name":"v"},{"name":"s","secret":{"secretName":"x"}}]}}}}`,
			[]string{"spec"}, `
progressDeadlineSeconds: 600
replicas: 1
revisionHistoryLimit: 10
selector: {matchLabels: {a: b}}
strategy: {rollingUpdate: {maxSurge: 25%, maxUnavailable: 25%}, type: RollingUpdate}
template:
  metadata: {labels: {a: b}}
  spec:
    containers:
    - env: [{name: "N", valueFrom: {fieldRef: {apiVersion: v1, fieldPath: metadata.name}}}]
      image: nginx:1.27
      imagePullPolicy: IfNotPresent
      name: c
      ports: [{containerPort: 80, protocol: TCP}]
      readinessProbe: {failureThreshold: 3, httpGet: {path: /, port: 80, scheme: HTTP}, periodSeconds: 10, successThreshold: 1, timeoutSeconds: 1}
      resources: {}
      terminationMessagePath: /dev/termination-log
      terminationMessagePolicy: File
    dnsPolicy: ClusterFirst
    restartPolicy: Always
    schedulerName: default-scheduler
    securityContext: {}
    terminationGracePeriodSeconds: 30
    volumes: [{emptyDir: {}, name: v}, {name: s, secret: {defaultMode: 420, secretName: x}}]
`},
		{"/apis/batch/v1/namespaces/default/jobs",
			`{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}}}}`,
			[]string{"spec"}, `
backoffLimit: 6
completionMode: NonIndexed
completions: 1
parallelism: 1
podReplacementPolicy: TerminatingOrFailed
suspend: false
template:
  metadata: {}
  spec:
    containers: [{image: busybox, imagePullPolicy: Always, name: c, resources: {}, terminationMessagePath: /dev/termination-log, terminationMessagePolicy: File}]
    dnsPolicy: ClusterFirst
    restartPolicy: Never
    schedulerName: default-scheduler
    securityContext: {}
    terminationGracePeriodSeconds: 30
`},
		{"/apis/batch/v1/namespaces/default/cronjobs",
			`{"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"cj"},"spec":{"schedule":"*/1 * * * *","jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"busybox:latest"}]}}}}}}`,
			[]string{"spec"}, `
concurrencyPolicy: Allow
failedJobsHistoryLimit: 1
jobTemplate:
  metadata: {}
  spec:
    template:
      metadata: {}
      spec:
        containers: [{image: "busybox:latest", imagePullPolicy: Always, name: c, resources: {}, terminationMessagePath: /dev/termination-log, terminationMessagePolicy: File}]
        dnsPolicy: ClusterFirst
        restartPolicy: Always
        schedulerName: default-scheduler
        securityContext: {}
        terminationGracePeriodSeconds: 30
schedule: "*/1 * * * *"
successfulJobsHistoryLimit: 3
suspend: false
`},
		{"/api/v1/namespaces/default/services",
			`{"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},"spec":{"type":"NodePort","ports":[{"port":80}]}}`,
			[]string{"spec"}, `
externalTrafficPolicy: Cluster
internalTrafficPolicy: Cluster
ports: [{port: 80, protocol: TCP, targetPort: 80}]
sessionAffinity: None
type: NodePort
`},
		{"/api/v1/namespaces/default/secrets", `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}`, []string{"type"}, `Opaque`},
		{"/apis/apps/v1/namespaces/default/statefulsets",
			`{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"s"},"spec":{"serviceName":"s","selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"x@sha256:0"}]}}}}`,
			[]string{"spec", "updateStrategy"}, `{rollingUpdate: {partition: 0}, type: RollingUpdate}`},
		{"/apis/apps/v1/namespaces/default/daemonsets",
			`{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}}`,
			[]string{"spec", "updateStrategy"}, `{rollingUpdate: {maxSurge: 0, maxUnavailable: 1}, type: RollingUpdate}`},
		{"/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
			`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"r"},"roleRef":{"kind":"Role","name":"r"},"subjects":[{"kind":"User","name":"u"},{"kind":"ServiceAccount","name":"sa","namespace":"default"}]}`,
			[]string{"subjects"}, `[{apiGroup: rbac.authorization.k8s.io, kind: User, name: u}, {kind: ServiceAccount, name: sa, namespace: default}]`},
	} {
		code, body := send(t, h, request{method: "POST", path: tt.path, body: tt.body})
		if code != http.StatusCreated {
			t.Errorf("POST %s: %d %v", tt.path, code, body["message"])
			continue
		}
		var got any = body
		for _, k := range tt.at {
			got = got.(map[string]any)[k]
		}
		var want any
		if err := yaml.Unmarshal([]byte(tt.want), &want); err != nil {
			t.Fatal(err)
		}
		// Compare in JSON form: the answer's numbers are float64, the YAML's too once through JSON.
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		var gv, wv any
		_ = json.Unmarshal(g, &gv)
		_ = json.Unmarshal(w, &wv)
		if diff := cmp.Diff(wv, gv); diff != "" {
			t.Errorf("POST %s: %v (-want +got):\n%s", tt.path, tt.at, diff)
		}
	}
	// Defaults never override what a body sets.
	code, body := send(t, h, request{method: "POST", path: "/apis/apps/v1/namespaces/default/deployments", body: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"e"},
		"spec":{"replicas":0,"strategy":{"type":"Recreate"},"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"x:1","imagePullPolicy":"Never"}]}}}}`})
	spec, _ := body["spec"].(map[string]any)
	if code != http.StatusCreated || spec["replicas"] != 0.0 || spec["strategy"].(map[string]any)["rollingUpdate"] != nil {
		t.Errorf("set fields kept: %d %v", code, spec)
	}
}

func TestPullPolicy(t *testing.T) {
	for image, want := range map[string]string{
		"nginx": "Always", "nginx:latest": "Always", "nginx:1.27": "IfNotPresent", "registry:5000/nginx": "Always",
		"registry:5000/nginx:v1": "IfNotPresent", "nginx@sha256:abc": "IfNotPresent",
	} {
		if got := pullPolicy(image); got != want {
			t.Errorf("pullPolicy(%q) = %q, want %q", image, got, want)
		}
	}
}
