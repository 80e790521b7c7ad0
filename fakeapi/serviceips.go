package fakeapi

import (
	"fmt"
	"maps"
	"math"
	"net/netip"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// This file gives Services their cluster IPs as kube-apiserver's Service registry does
// (fakeapi.md §5.10), when Config.ServiceCIDR is set: a single-stack cluster whose service
// range is that CIDR.
//
// On a create, a Service of any type but ExternalName gets spec.ipFamilyPolicy (SingleStack
// unless given; RequireDualStack for a headless Service without a selector), spec.ipFamilies
// (the range's family; a headless Service without a selector also the other one, as
// kube-apiserver lists both for it on any cluster), and, unless it is headless (clusterIP
// "None", kept), spec.clusterIP and spec.clusterIPs: the address it asked for, if it is in the
// range, not the range's network or broadcast address, and held by no other Service, else a 422;
// or one drawn from Config.Rand as kube-apiserver's allocator draws it: a random start in the
// upper band of the range (above its first min(max(16, size/16), 256) addresses, which are kept
// for addresses asked for), scanning up to the first free one, wrapping, then the lower band
// the same way. A dry run checks an address asked for against the range only, and gives a
// dynamic one the range's network address, as kube-apiserver's dry-run allocator does. An update
// keeps the stored addresses when it leaves them out, refuses a change of them, and allocates
// when a Service stops being ExternalName. An address is free again once its Service is gone or
// holds it no more. A request the single-stack range cannot serve (RequireDualStack, the other
// family, two addresses) is a 422 with kube-apiserver's field errors.
//
// Without a ServiceCIDR Services are stored as written: a world's writers create Services that
// name no address, and every pinned trace relies on it. NodePorts are not allocated.

// ServicesGVR is the resource of Services.
var ServicesGVR = schema.GroupVersionResource{Version: "v1", Resource: "services"}

// DefaultServiceCIDR is the service range envtest gives its kube-apiserver, and the one a server
// standing for a cluster (informersim serve, the envtest stand-in, the clientgo harness) uses
// unless told another.
const DefaultServiceCIDR = "10.0.0.0/24"

// serviceRange is a parsed service CIDR: the usable addresses (first to last), and the start of
// the upper band dynamic allocation draws from first.
type serviceRange struct {
	prefix      netip.Prefix
	first, last netip.Addr
	upper       netip.Addr // first + lowerSize
	lowerSize   uint64
	upperSize   uint64
	family      string // "IPv4" or "IPv6"
}

// parseServiceRange parses cidr as kube-apiserver's allocator takes its range.
func parseServiceRange(cidr string) (*serviceRange, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, err
	}
	if p != p.Masked() {
		return nil, fmt.Errorf("%s is not a network address (want %s)", cidr, p.Masked())
	}
	bits := p.Addr().BitLen() - p.Bits()
	r := &serviceRange{prefix: p, family: "IPv4"}
	if p.Addr().Is6() {
		r.family = "IPv6"
		if p.Bits() < 64 {
			return nil, fmt.Errorf("shortest allowed prefix length for service CIDR is 64, got %d", p.Bits())
		}
	}
	// Hosts: never the network address, and for IPv4 never the broadcast one.
	var hosts uint64
	if bits >= 64 {
		hosts = math.MaxUint64
	} else {
		hosts = uint64(1)<<bits - 1
		if r.family == "IPv4" && hosts > 0 {
			hosts--
		}
	}
	if hosts == 0 {
		return nil, fmt.Errorf("%s has no address to allocate", cidr)
	}
	r.first = p.Addr().Next()
	r.last = addOffset(r.first, hosts-1)
	// The lower band: min(max(16, size/16), 256) of a range larger than 16 addresses.
	if bits >= 64 || uint64(1)<<bits > 16 {
		size := uint64(math.MaxUint64)
		if bits < 64 {
			size = uint64(1) << bits
		}
		r.lowerSize = min(max(16, size/16), 256)
	}
	r.lowerSize = min(r.lowerSize, hosts)
	r.upper = addOffset(r.first, r.lowerSize)
	r.upperSize = hosts - r.lowerSize
	return r, nil
}

// addOffset returns a + n (n within the range, which never overflows it).
func addOffset(a netip.Addr, n uint64) netip.Addr {
	b := a.As16()
	carry := n
	for i := 15; i >= 0 && carry > 0; i-- {
		sum := uint64(b[i]) + carry&0xff
		b[i] = byte(sum)
		carry = carry>>8 + sum>>8
	}
	out := netip.AddrFrom16(b)
	if a.Is4() {
		out = out.Unmap()
	}
	return out
}

// scan returns the first address not taken from start (the n-th address from lo) up to hi,
// wrapping to lo, or false when all are taken.
func scan(lo, hi netip.Addr, n uint64, taken map[netip.Addr]bool) (netip.Addr, bool) {
	start := addOffset(lo, n)
	a := start
	for {
		if !taken[a] {
			return a, true
		}
		if a = a.Next(); hi.Less(a) {
			a = lo
		}
		if a == start {
			return netip.Addr{}, false
		}
	}
}

var servicePath = field.NewPath("spec")

// serviceIPs_locked gives u, a Service being created (cur nil) or updated from cur, its cluster
// IPs (see above). It changes u's spec through a copy of it: u may share values with stored
// objects.
func (s *Server) serviceIPs_locked(res *resourceStore, key objKey, u, cur *unstructured.Unstructured, dryRun bool) error {
	r := s.serviceRange
	if r == nil || res.info.GVR != ServicesGVR {
		return nil
	}
	spec := map[string]any{}
	if m, ok := u.Object["spec"].(map[string]any); ok {
		maps.Copy(spec, m)
	}
	var old map[string]any
	if cur != nil {
		old, _ = cur.Object["spec"].(map[string]any)
	}
	if specString(spec, "type") == "ExternalName" {
		return nil
	}
	// clusterIP and clusterIPs, synced as kube-apiserver's defaulting and strategy sync them,
	// and an update's left out taken from the stored object.
	ips := specStrings(spec, "clusterIPs")
	ip := specString(spec, "clusterIP")
	if old != nil && specString(old, "type") != "ExternalName" {
		if ip == "" {
			ip = specString(old, "clusterIP")
		}
		if len(ips) == 0 {
			ips = specStrings(old, "clusterIPs")
		}
		if _, ok := spec["ipFamilyPolicy"]; !ok && old["ipFamilyPolicy"] != nil {
			spec["ipFamilyPolicy"] = old["ipFamilyPolicy"]
		}
		if len(specStrings(spec, "ipFamilies")) == 0 && old["ipFamilies"] != nil {
			spec["ipFamilies"] = old["ipFamilies"]
		}
	}
	if len(ips) == 0 && ip != "" {
		ips = []string{ip}
	}
	if ip == "" && len(ips) > 0 {
		ip = ips[0]
	}
	headless := ip == "None"
	_, hasSelector := spec["selector"].(map[string]any)
	hasSelector = hasSelector && len(spec["selector"].(map[string]any)) > 0
	policy := specString(spec, "ipFamilyPolicy")
	if policy == "" {
		policy = "SingleStack"
		if headless && !hasSelector {
			policy = "RequireDualStack"
		}
	}
	families := specStrings(spec, "ipFamilies")
	if errs := r.checkFamilies(ips, families, policy, headless, old); len(errs) > 0 {
		return s.invalid(res, key.name, errs)
	}
	if old != nil && specString(old, "type") != "ExternalName" {
		if errs := unchangedIPs(specStrings(old, "clusterIPs"), ips, headless); len(errs) > 0 {
			return s.invalid(res, key.name, errs)
		}
	}
	if len(families) == 0 {
		families = []string{r.family}
	}
	if headless && !hasSelector && len(families) < 2 && policy != "SingleStack" {
		families = append(families, otherFamily(families[0]))
	}
	if !headless && (len(ips) == 0 || old == nil || specString(old, "type") == "ExternalName") {
		got, err := s.allocateServiceIP_locked(res, key, r, ips, dryRun)
		if err != nil {
			return err
		}
		ip, ips = got, []string{got}
	}
	spec["ipFamilyPolicy"] = policy
	spec["ipFamilies"] = toAny(families)
	spec["clusterIP"] = ip
	spec["clusterIPs"] = toAny(ips)
	u.Object["spec"] = spec
	return nil
}

// checkFamilies checks what a single-stack range cannot serve, with kube-apiserver's errors.
func (r *serviceRange) checkFamilies(ips, families []string, policy string, headless bool, old map[string]any) field.ErrorList {
	var errs field.ErrorList
	if !slices.Contains([]string{"SingleStack", "PreferDualStack", "RequireDualStack"}, policy) {
		return field.ErrorList{field.NotSupported(servicePath.Child("ipFamilyPolicy"), policy, []string{"PreferDualStack", "RequireDualStack", "SingleStack"})}
	}
	var oldIPs []string
	if old != nil {
		oldIPs = specStrings(old, "clusterIPs")
	}
	for i, ip := range ips {
		if i == 0 && ip == "None" {
			if len(ips) > 1 {
				errs = append(errs, field.Invalid(servicePath.Child("clusterIPs"), ips, "'None' must be the first and only value"))
			}
			continue
		}
		errs = append(errs, validation.IsValidIPForLegacyField(servicePath.Child("clusterIPs").Index(i), ip, true, oldIPs)...)
	}
	if len(ips) > 2 {
		errs = append(errs, field.Invalid(servicePath.Child("clusterIPs"), ips, "may only hold up to 2 values"))
	}
	for i, f := range families {
		if f != "IPv4" && f != "IPv6" {
			errs = append(errs, field.NotSupported(servicePath.Child("ipFamilies").Index(i), f, []string{"IPv4", "IPv6"}))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if policy == "SingleStack" && len(ips) == 2 {
		errs = append(errs, field.Invalid(servicePath.Child("ipFamilyPolicy"), policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"))
	}
	if policy == "SingleStack" && len(families) == 2 {
		errs = append(errs, field.Invalid(servicePath.Child("ipFamilyPolicy"), policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"))
	}
	for i, ip := range ips {
		if ip == "None" {
			break
		}
		if a, err := netip.ParseAddr(ip); err == nil && i >= len(families) && familyOf(a) != r.family {
			errs = append(errs, field.Invalid(servicePath.Child("clusterIPs").Index(i), ips, familyOf(a)+" is not configured on this cluster"))
		}
	}
	if len(errs) > 0 || headless {
		return errs // a headless Service may name both families on a single-stack cluster
	}
	if policy == "RequireDualStack" {
		errs = append(errs, field.Invalid(servicePath.Child("ipFamilyPolicy"), policy, "this cluster is not configured for dual-stack services"))
	}
	for i, f := range families {
		if f != r.family {
			errs = append(errs, field.Invalid(servicePath.Child("ipFamilies").Index(i), f, "not configured on this cluster"))
		}
	}
	return errs
}

// unchangedIPs refuses an update that changes the stored cluster IPs.
func unchangedIPs(old, ips []string, headless bool) field.ErrorList {
	if headless && len(old) > 0 && old[0] == "None" {
		return nil
	}
	var errs field.ErrorList
	switch {
	case len(old) == len(ips):
		for i := range old {
			if old[i] != ips[i] {
				errs = append(errs, field.Invalid(servicePath.Child("clusterIPs").Index(i), ips, "may not change once set"))
			}
		}
	case len(old) > 0 && len(ips) > 0 && old[0] != ips[0]:
		errs = append(errs, field.Invalid(servicePath.Child("clusterIPs").Index(0), ips, "may not change once set"))
	}
	return errs
}

// allocateServiceIP_locked allocates the address asked for (ips[0], if any) or a free one.
func (s *Server) allocateServiceIP_locked(res *resourceStore, key objKey, r *serviceRange, ips []string, dryRun bool) (string, error) {
	fail := func(msg string) error {
		return s.invalid(res, key.name, field.ErrorList{field.Invalid(servicePath.Child("clusterIPs"), ips, msg)})
	}
	if len(ips) > 0 && ips[0] != "" {
		a, err := netip.ParseAddr(ips[0])
		if err != nil {
			return "", fail(fmt.Sprintf("failed to allocate IP %s: %v", ips[0], err))
		}
		switch {
		case !r.prefix.Contains(a):
			return "", fail(fmt.Sprintf("failed to allocate IP %s: the provided network does not match the current range", ips[0]))
		case a.Less(r.first) || r.last.Less(a):
			return "", fail(fmt.Sprintf("failed to allocate IP %s: the provided IP (%s) is not in the valid range. The range of valid IPs is %s", ips[0], ips[0], r.prefix))
		case !dryRun && s.serviceIPsTaken_locked(res, key)[a]:
			return "", fail(fmt.Sprintf("failed to allocate IP %s: provided IP is already allocated", ips[0]))
		}
		return a.String(), nil
	}
	if dryRun {
		return r.prefix.Addr().String(), nil
	}
	taken := s.serviceIPsTaken_locked(res, key)
	if r.upperSize > 0 {
		n := s.rnd.Uint64N(r.upperSize)
		if a, ok := scan(r.upper, r.last, n, taken); ok {
			return a.String(), nil
		}
	}
	if r.lowerSize > 0 {
		n := s.rnd.Uint64N(r.lowerSize)
		if a, ok := scan(r.first, r.upper.Prev(), n, taken); ok {
			return a.String(), nil
		}
	}
	return "", apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP for Service %q: range is full", key.name))
}

// serviceIPsTaken_locked are the addresses the Services but key hold.
func (s *Server) serviceIPsTaken_locked(res *resourceStore, key objKey) map[netip.Addr]bool {
	taken := map[netip.Addr]bool{}
	for k, h := range res.keys { // a set: the order is never seen
		obj := h.latest()
		if k == key || obj == nil {
			continue
		}
		spec, _ := obj.Object["spec"].(map[string]any)
		for _, ip := range specStrings(spec, "clusterIPs") {
			if a, err := netip.ParseAddr(ip); err == nil {
				taken[a] = true
			}
		}
	}
	return taken
}

func familyOf(a netip.Addr) string {
	if a.Is4() || a.Is4In6() {
		return "IPv4"
	}
	return "IPv6"
}

func otherFamily(f string) string {
	if f == "IPv4" {
		return "IPv6"
	}
	return "IPv4"
}

func specString(spec map[string]any, k string) string {
	v, _ := spec[k].(string)
	return v
}

func specStrings(spec map[string]any, k string) []string {
	list, _ := spec[k].([]any)
	out := make([]string, 0, len(list))
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
