package kube

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/fakeapi/rest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/json"
)

// goodWebhook is a valid webhook (of either kind) as JSON fields, into which a case splices its
// change.
const goodWebhook = `"name":"v.example.com","clientConfig":{"url":"https://webhook.test:9443/v"},` +
	`"rules":[{"operations":["CREATE"],"apiGroups":[""],"apiVersions":["v1"],"resources":["configmaps"]}],` +
	`"sideEffects":"None","admissionReviewVersions":["v1"]`

// Goal: webhook configurations are validated as kube-apiserver's registry validates them, with
// its field errors in a 422: names, rules (operations, groups, versions, resources with
// subresources, scope), failure, match, side-effect and reinvocation policies, timeoutSeconds,
// selectors, clientConfig (exactly one of url and service; the url https; the service's name
// reported where kube-apiserver reports it), admissionReviewVersions, matchConditions (CEL
// compiled); and an update is held only to the rules its old object met.
// Method: create each configuration through the REST front (defaults applied first, as
// kube-apiserver applies them) and compare the Status's causes with the fields and messages
// written from kube-apiserver's rules; a valid one is created.
func TestWebhookConfigurationValidation(t *testing.T) {
	cases := []struct {
		name, kind, hook string
		want             []string // "field: message" of each cause, in order
	}{
		{"valid", "validating", goodWebhook, nil},
		{"valid mutating", "mutating", goodWebhook + `,"reinvocationPolicy":"IfNeeded"`, nil},
		{"unqualified name", "validating", strings.Replace(goodWebhook, `"v.example.com"`, `"v"`, 1),
			[]string{`webhooks[0].name: Invalid value: "v": should be a domain with at least three segments separated by dots`}},
		{"no sideEffects", "validating", strings.Replace(goodWebhook, `"sideEffects":"None",`, ``, 1),
			[]string{`webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun`}},
		{"sideEffects Some", "validating", strings.Replace(goodWebhook, `"None"`, `"Some"`, 1),
			[]string{`webhooks[0].sideEffects: Unsupported value: "Some": supported values: "None", "NoneOnDryRun"`}},
		{"timeout 31", "validating", goodWebhook + `,"timeoutSeconds":31`,
			[]string{`webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds`}},
		{"timeout 0", "mutating", goodWebhook + `,"timeoutSeconds":0`,
			[]string{`webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must be between 1 and 30 seconds`}},
		{"url and service", "validating", strings.Replace(goodWebhook, `"clientConfig":{"url":"https://webhook.test:9443/v"}`,
			`"clientConfig":{"url":"https://webhook.test/v","service":{"name":"s","namespace":"ns"}}`, 1),
			[]string{`webhooks[0].clientConfig: Required value: exactly one of url or service is required`}},
		{"neither url nor service", "validating", strings.Replace(goodWebhook, `"clientConfig":{"url":"https://webhook.test:9443/v"}`, `"clientConfig":{}`, 1),
			[]string{`webhooks[0].clientConfig: Required value: exactly one of url or service is required`}},
		{"http url", "validating", strings.Replace(goodWebhook, `https://`, `http://`, 1),
			[]string{`webhooks[0].clientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https://host[/path]`}},
		{"service without a name", "validating", strings.Replace(goodWebhook, `"clientConfig":{"url":"https://webhook.test:9443/v"}`,
			`"clientConfig":{"service":{"namespace":"ns","path":"/v"}}`, 1),
			[]string{`webhooks[0].clientConfig.service.namespace: Required value`}},
		{"operations", "validating", strings.Replace(goodWebhook, `["CREATE"]`, `["*","PATCH"]`, 1),
			[]string{`webhooks[0].rules[0].operations: Invalid value: ["*","PATCH"]: if '*' is present, must not specify other operations`,
				`webhooks[0].rules[0].operations[1]: Unsupported value: "PATCH": supported values: "*", "CONNECT", "CREATE", "DELETE", "UPDATE"`}},
		{"no resources", "validating", strings.Replace(goodWebhook, `["configmaps"]`, `[]`, 1),
			[]string{`webhooks[0].rules[0].resources: Required value`}},
		{"resources and subresources", "validating", strings.Replace(goodWebhook, `["configmaps"]`, `["pods/*","pods/status","*","deployments"]`, 1),
			[]string{`webhooks[0].rules[0].resources[1]: Invalid value: "pods/status": if 'pods/*' is present, must not specify pods/status`,
				`webhooks[0].rules[0].resources: Invalid value: ["pods/*","pods/status","*","deployments"]: if '*' is present, must not specify other resources without subresources`}},
		{"*/* with others", "validating", strings.Replace(goodWebhook, `["configmaps"]`, `["*/*","pods"]`, 1),
			[]string{`webhooks[0].rules[0].resources: Invalid value: ["*/*","pods"]: if '*/*' is present, must not specify other resources`}},
		{"groups and versions", "validating", strings.Replace(strings.Replace(goodWebhook, `"apiGroups":[""]`, `"apiGroups":["*","apps"]`, 1), `"apiVersions":["v1"]`, `"apiVersions":[""]`, 1),
			[]string{`webhooks[0].rules[0].apiGroups: Invalid value: ["*","apps"]: if '*' is present, must not specify other API groups`,
				`webhooks[0].rules[0].apiVersions[0]: Required value`}},
		{"scope", "validating", strings.Replace(goodWebhook, `"resources":["configmaps"]`, `"resources":["configmaps"],"scope":"Everywhere"`, 1),
			[]string{`webhooks[0].rules[0].scope: Unsupported value: "Everywhere": supported values: "*", "Cluster", "Namespaced"`}},
		{"policies", "mutating", goodWebhook + `,"failurePolicy":"Maybe","matchPolicy":"Close","reinvocationPolicy":"Always"`,
			[]string{`webhooks[0].failurePolicy: Unsupported value: "Maybe": supported values: "Fail", "Ignore"`,
				`webhooks[0].matchPolicy: Unsupported value: "Close": supported values: "Equivalent", "Exact"`,
				`webhooks[0].reinvocationPolicy: Unsupported value: "Always": supported values: "IfNeeded", "Never"`}},
		{"review versions", "validating", strings.Replace(goodWebhook, `"admissionReviewVersions":["v1"]`, `"admissionReviewVersions":["v2","v2","V3"]`, 1),
			[]string{`webhooks[0].admissionReviewVersions[1]: Invalid value: "v2": duplicate version`,
				`webhooks[0].admissionReviewVersions[2]: Invalid value: "V3": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
				`webhooks[0].admissionReviewVersions: Invalid value: ["v2","v2","V3"]: must include at least one of v1, v1beta1`}},
		{"selector", "validating", goodWebhook + `,"objectSelector":{"matchLabels":{"a":"-bad-"}}`,
			[]string{`webhooks[0].objectSelector.matchLabels: Invalid value: "-bad-": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`}},
		{"match conditions", "validating", goodWebhook + `,"matchConditions":[{"name":"a","expression":"object."},{"name":"a","expression":"true"},{"name":"","expression":" "}]`,
			// The CEL message goes on with the compiler's text: a want ending in ": " is a prefix.
			[]string{`webhooks[0].matchConditions[0].expression: Invalid value: "object.": compilation failed: `,
				`webhooks[0].matchConditions[1].name: Duplicate value: "a"`,
				`webhooks[0].matchConditions[2].expression: Required value`,
				`webhooks[0].matchConditions[2].name: Required value`}},
	}
	_, h := newFront(t)
	for _, c := range cases {
		hook := c.hook
		kind, resource := "ValidatingWebhookConfiguration", "validatingwebhookconfigurations"
		if c.kind == "mutating" {
			kind, resource = "MutatingWebhookConfiguration", "mutatingwebhookconfigurations"
		}
		name := strings.ReplaceAll(c.name, " ", "-")
		name = strings.ReplaceAll(strings.ReplaceAll(name, "*", "x"), "/", "x")
		body := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"` + kind + `","metadata":{"name":"` + name + `"},"webhooks":[{` + hook + `}]}`
		code, status := send(t, h, request{method: http.MethodPost, path: "/apis/admissionregistration.k8s.io/v1/" + resource, contentType: "application/json", body: body})
		if c.want == nil {
			if code != http.StatusCreated {
				t.Errorf("%s: %d %v, want it created", c.name, code, status["message"])
			}
			continue
		}
		if code != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %v, want 422", c.name, code, status["message"])
			continue
		}
		got := causes(status)
		if len(got) != len(c.want) {
			t.Errorf("%s: causes\n%s\nwant\n%s", c.name, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			continue
		}
		for i := range got {
			if got[i] != c.want[i] && !(strings.HasSuffix(c.want[i], ": ") && strings.HasPrefix(got[i], c.want[i])) {
				t.Errorf("%s: cause %d\n%s\nwant\n%s", c.name, i, got[i], c.want[i])
			}
		}
		if msg, _ := status["message"].(string); !strings.HasPrefix(msg, kind+`.admissionregistration.k8s.io "`+name+`" is invalid: `) {
			t.Errorf("%s: message %q", c.name, msg)
		}
	}
}

// Goal: an update is held to the rules the old configuration met, as kube-apiserver ratchets
// them: a configuration stored with side effects Some (written before the rule, here by the
// fake apiserver directly) may be updated keeping them; one stored with None may not move to
// Some.
func TestWebhookConfigurationUpdateRatchets(t *testing.T) {
	srv, h := newFront(t)
	path := "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
	some := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"old"},"webhooks":[{` +
		strings.Replace(goodWebhook, `"None"`, `"Some"`, 1) + `}]}`
	var obj map[string]any
	if err := json.Unmarshal([]byte(some), &obj); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Resource(mutatingConfigGVK.GroupVersion().WithResource("validatingwebhookconfigurations")).Create(t.Context(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	code, status := send(t, h, request{method: http.MethodPatch, path: path + "/old", contentType: "application/merge-patch+json", body: `{"metadata":{"labels":{"a":"b"}}}`})
	if code != http.StatusOK {
		t.Errorf("updating a configuration stored with side effects Some: %d %v, want it accepted", code, status["message"])
	}
	good := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"new"},"webhooks":[{` + goodWebhook + `}]}`
	if code, status := send(t, h, request{method: http.MethodPost, path: path, contentType: "application/json", body: good}); code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, status["message"])
	}
	code, status = send(t, h, request{method: http.MethodPatch, path: path + "/new", contentType: "application/json-patch+json", body: `[{"op":"replace","path":"/webhooks/0/sideEffects","value":"Some"}]`})
	if code != http.StatusUnprocessableEntity || !strings.Contains(status["message"].(string), `webhooks[0].sideEffects: Unsupported value: "Some"`) {
		t.Errorf("moving a configuration to side effects Some: %d %v, want 422", code, status["message"])
	}
}

// causes are a Status's causes as "field: message", in order.
func causes(status map[string]any) []string {
	details, _ := status["details"].(map[string]any)
	list, _ := details["causes"].([]any)
	var out []string
	for _, c := range list {
		m, _ := c.(map[string]any)
		out = append(out, m["field"].(string)+": "+m["message"].(string))
	}
	return out
}

// Goal: a Service written through the front gets kube-apiserver's defaults, then its cluster IP
// from the server's range (fakeapi.md §5.10), as a client reads it back from kube-apiserver; a
// headless one keeps None.
// Method: POST two Services to a front over a server with 10.0.0.0/24.
func TestServiceThroughTheFrontGetsAClusterIP(t *testing.T) {
	srv, err := fakeapi.New(fakeapi.Config{ServiceCIDR: fakeapi.DefaultServiceCIDR})
	if err != nil {
		t.Fatal(err)
	}
	h, err := rest.NewHandler(srv, RESTOptions())
	if err != nil {
		t.Fatal(err)
	}
	code, obj := send(t, h, request{method: http.MethodPost, path: "/api/v1/namespaces/default/services", contentType: "application/json",
		body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"web"},"spec":{"selector":{"app":"web"},"ports":[{"port":80}]}}`})
	spec, _ := obj["spec"].(map[string]any)
	ip, _ := spec["clusterIP"].(string)
	if code != http.StatusCreated || !strings.HasPrefix(ip, "10.0.0.") || spec["type"] != "ClusterIP" || fmt.Sprint(spec["clusterIPs"]) != "["+ip+"]" ||
		fmt.Sprint(spec["ipFamilies"]) != "[IPv4]" || spec["ipFamilyPolicy"] != "SingleStack" {
		t.Errorf("a ClusterIP Service: %d %v", code, spec)
	}
	code, obj = send(t, h, request{method: http.MethodPost, path: "/api/v1/namespaces/default/services", contentType: "application/json",
		body: `{"apiVersion":"v1","kind":"Service","metadata":{"name":"db"},"spec":{"clusterIP":"None","selector":{"app":"db"},"ports":[{"port":5432}]}}`})
	spec, _ = obj["spec"].(map[string]any)
	if code != http.StatusCreated || spec["clusterIP"] != "None" || fmt.Sprint(spec["clusterIPs"]) != "[None]" {
		t.Errorf("a headless Service: %d %v", code, spec)
	}
}
