package fakeapi

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func serviceServer(t *testing.T, cidr string, seed uint64) *Server {
	t.Helper()
	srv, err := New(Config{ServiceCIDR: cidr, Rand: rand.New(rand.NewPCG(seed, seed))})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// service is a Service named name with spec.
func service(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "namespace": "default"}, "spec": spec}}
}

// specOf reads a Service's clusterIP, clusterIPs, ipFamilies and ipFamilyPolicy as one line.
func specOf(u *unstructured.Unstructured) string {
	spec, _ := u.Object["spec"].(map[string]any)
	return fmt.Sprintf("clusterIP=%v clusterIPs=%v ipFamilies=%v ipFamilyPolicy=%v", spec["clusterIP"], spec["clusterIPs"], spec["ipFamilies"], spec["ipFamilyPolicy"])
}

// Goal: with a service range, Services get their cluster IPs as kube-apiserver gives them
// (fakeapi.md §5.10): a dynamic address from the range's upper band, drawn from the seed; an
// address asked for honoured, or a 422 with kube-apiserver's message when it is taken, outside
// the range or the range's network or broadcast address; headless Services keep "None" (with
// both families when they have no selector); ExternalName Services get nothing; dual stack is
// refused on a single-stack range; an update keeps the addresses it leaves out and cannot change
// them; a deleted Service's address is free again; a dry run gives the network address.
// Method: writes to servers with 10.0.0.0/24 (envtest's), each answer compared.
func TestServiceClusterIPs(t *testing.T) {
	ctx := context.Background()
	srv := serviceServer(t, DefaultServiceCIDR, 1)
	svcs := srv.Resource(ServicesGVR).Namespace("default")
	create := func(name string, spec map[string]any) (*unstructured.Unstructured, error) {
		return svcs.Create(ctx, service(name, spec), metav1.CreateOptions{})
	}
	a, err := create("a", map[string]any{"selector": map[string]any{"app": "a"}})
	if err != nil {
		t.Fatal(err)
	}
	ip, _ := a.Object["spec"].(map[string]any)["clusterIP"].(string)
	addr, err := netip.ParseAddr(ip)
	if err != nil || addr.Less(netip.MustParseAddr("10.0.0.17")) || netip.MustParseAddr("10.0.0.254").Less(addr) {
		t.Errorf("a's clusterIP %q: want one of the upper band, 10.0.0.17 to 10.0.0.254", ip)
	}
	if got, want := specOf(a), fmt.Sprintf("clusterIP=%s clusterIPs=[%s] ipFamilies=[IPv4] ipFamilyPolicy=SingleStack", ip, ip); got != want {
		t.Errorf("a: %s, want %s", got, want)
	}
	again, _ := serviceServer(t, DefaultServiceCIDR, 1).Resource(ServicesGVR).Namespace("default").Create(ctx, service("a", map[string]any{}), metav1.CreateOptions{})
	if specOf(again) != specOf(a) {
		t.Errorf("the same seed allocated %s, then %s", specOf(a), specOf(again))
	}

	if b, err := create("b", map[string]any{"clusterIP": "10.0.0.5"}); err != nil || specOf(b) != "clusterIP=10.0.0.5 clusterIPs=[10.0.0.5] ipFamilies=[IPv4] ipFamilyPolicy=SingleStack" {
		t.Errorf("b asking for 10.0.0.5: %v, %v", b, err)
	}
	refused := []struct {
		spec map[string]any
		want string
	}{
		{map[string]any{"clusterIP": "10.0.0.5"}, `Service "c" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.5"]: failed to allocate IP 10.0.0.5: provided IP is already allocated`},
		{map[string]any{"clusterIPs": []any{ip}}, `Service "c" is invalid: spec.clusterIPs: Invalid value: ["` + ip + `"]: failed to allocate IP ` + ip + `: provided IP is already allocated`},
		{map[string]any{"clusterIP": "10.1.0.5"}, `Service "c" is invalid: spec.clusterIPs: Invalid value: ["10.1.0.5"]: failed to allocate IP 10.1.0.5: the provided network does not match the current range`},
		{map[string]any{"clusterIP": "10.0.0.255"}, `Service "c" is invalid: spec.clusterIPs: Invalid value: ["10.0.0.255"]: failed to allocate IP 10.0.0.255: the provided IP (10.0.0.255) is not in the valid range. The range of valid IPs is 10.0.0.0/24`},
		{map[string]any{"clusterIP": "10.0.0.300"}, `Service "c" is invalid: spec.clusterIPs[0]: Invalid value: "10.0.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)`},
		{map[string]any{"ipFamilyPolicy": "RequireDualStack"}, `Service "c" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services`},
		{map[string]any{"ipFamilies": []any{"IPv6"}}, `Service "c" is invalid: spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster`},
		{map[string]any{"clusterIP": "fd00::5"}, `Service "c" is invalid: spec.clusterIPs[0]: Invalid value: ["fd00::5"]: IPv6 is not configured on this cluster`},
	}
	for _, r := range refused {
		_, err := create("c", r.spec)
		if !apierrors.IsInvalid(err) || err.Error() != r.want {
			t.Errorf("c with %v: %v\nwant the 422 %s", r.spec, err, r.want)
		}
	}

	headless := []struct {
		spec map[string]any
		want string
	}{
		{map[string]any{"clusterIP": "None", "selector": map[string]any{"app": "h"}}, "clusterIP=None clusterIPs=[None] ipFamilies=[IPv4] ipFamilyPolicy=SingleStack"},
		{map[string]any{"clusterIP": "None"}, "clusterIP=None clusterIPs=[None] ipFamilies=[IPv4 IPv6] ipFamilyPolicy=RequireDualStack"},
		{map[string]any{"type": "ExternalName", "externalName": "example.com"}, "clusterIP=<nil> clusterIPs=<nil> ipFamilies=<nil> ipFamilyPolicy=<nil>"},
	}
	for i, h := range headless {
		got, err := create(fmt.Sprintf("h%d", i), h.spec)
		if err != nil || specOf(got) != h.want {
			t.Errorf("%v: %v %v, want %s", h.spec, specOf(got), err, h.want)
		}
	}

	// An update that leaves the address out keeps it; one that changes it is refused.
	up := service("a", map[string]any{"selector": map[string]any{"app": "a2"}})
	up.SetResourceVersion(a.GetResourceVersion())
	if got, err := svcs.Update(ctx, up, metav1.UpdateOptions{}); err != nil || specOf(got) != specOf(a) {
		t.Errorf("update leaving the address out: %v %v, want %s", got, err, specOf(a))
	}
	cur, _ := svcs.Get(ctx, "a", metav1.GetOptions{})
	cur.Object["spec"].(map[string]any)["clusterIP"] = "10.0.0.9"
	cur.Object["spec"].(map[string]any)["clusterIPs"] = []any{"10.0.0.9"}
	if _, err := svcs.Update(ctx, cur, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), `spec.clusterIPs[0]: Invalid value: ["10.0.0.9"]: may not change once set`) {
		t.Errorf("update changing the address: %v", err)
	}

	if d, err := svcs.Create(ctx, service("dry", map[string]any{}), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil || specOf(d) != "clusterIP=10.0.0.0 clusterIPs=[10.0.0.0] ipFamilies=[IPv4] ipFamilyPolicy=SingleStack" {
		t.Errorf("a dry run: %v %v, want the network address, as kube-apiserver's dry run gives", specOf(d), err)
	}

}

// Goal: a range's addresses are shared by its Services until one is deleted: a /28 holds 14,
// all in one band (no lower band below 17 addresses); the fifteenth Service finds none (500
// range is full), until one is deleted, whose address the next one gets. Without a range,
// Services are stored as written; a range kube-apiserver would refuse is refused.
func TestServiceRangeFullAndFreed(t *testing.T) {
	ctx := context.Background()
	small := serviceServer(t, "10.1.0.0/28", 2).Resource(ServicesGVR).Namespace("default")
	held := map[string]string{}
	for i := range 14 {
		got, err := small.Create(ctx, service(fmt.Sprint("s", i), map[string]any{}), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		held[got.Object["spec"].(map[string]any)["clusterIP"].(string)] = got.GetName()
	}
	if len(held) != 14 {
		t.Errorf("14 Services hold %d addresses", len(held))
	}
	if _, err := small.Create(ctx, service("full", map[string]any{}), metav1.CreateOptions{}); !apierrors.IsInternalError(err) || !strings.Contains(err.Error(), "range is full") {
		t.Errorf("a fifteenth Service in a /28: %v", err)
	}
	if err := small.Delete(ctx, "s3", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := small.Create(ctx, service("next", map[string]any{}), metav1.CreateOptions{})
	if err != nil || held[got.Object["spec"].(map[string]any)["clusterIP"].(string)] != "s3" {
		t.Errorf("after s3's delete: %v %v, want s3's address", specOf(got), err)
	}

	plain, _ := New(Config{})
	if got, err := plain.Resource(ServicesGVR).Namespace("default").Create(ctx, service("x", map[string]any{}), metav1.CreateOptions{}); err != nil || specOf(got) != "clusterIP=<nil> clusterIPs=<nil> ipFamilies=<nil> ipFamilyPolicy=<nil>" {
		t.Errorf("without a ServiceCIDR: %v %v, want the Service as written", specOf(got), err)
	}
	for _, bad := range []string{"10.0.0.1/24", "fd00::/48", "10.0.0.0/32", "nonsense"} {
		if _, err := New(Config{ServiceCIDR: bad}); err == nil || !strings.HasPrefix(err.Error(), "fakeapi: ServiceCIDR") {
			t.Errorf("ServiceCIDR %q: %v", bad, err)
		}
	}
}
