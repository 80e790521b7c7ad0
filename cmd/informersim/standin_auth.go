//go:build serve

package main

import (
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
)

// requestInfos parses a request's path into kube-apiserver's request attributes (verb,
// resource, namespace, name), with kube-apiserver's own parser.
var requestInfos = &genericrequest.RequestInfoFactory{
	APIPrefixes:          sets.NewString("api", "apis"),
	GrouplessAPIPrefixes: sets.NewString("api"),
}

// ServeHTTP authenticates the request (a client certificate, else anonymous), applies
// impersonation, authorises it, and serves it with the user in its context
// (k8s.io/apiserver's request.UserFrom), or answers 401 or 403 as kube-apiserver does.
func (f *standInFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	u, err := f.authenticate(r)
	if err != nil {
		writeStatusError(w, apierrors.NewUnauthorized("Unauthorized"))
		return
	}
	if u, err = f.impersonate(r, u); err != nil {
		writeStatusError(w, err)
		return
	}
	info, err := requestInfos.NewRequestInfo(r)
	if err != nil {
		writeStatusError(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	attrs := attributesOf(u, info)
	if allowed, reason := f.authorize(attrs); !allowed {
		writeStatusError(w, responsewriters.ForbiddenStatusError(attrs, reason))
		return
	}
	ctx := genericrequest.WithUser(r.Context(), u)
	ctx = genericrequest.WithRequestInfo(ctx, info)
	f.next.ServeHTTP(w, r.WithContext(ctx))
}

// authenticate returns the request's user: the common name and organizations of a client
// certificate the client CA signed, or system:anonymous for a request without credentials
// (--anonymous-auth). A certificate no CA signed, or any bearer token or password (the stand-in
// issues none), is an error: 401.
func (f *standInFront) authenticate(r *http.Request) (user.Info, error) {
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 && f.clientCA != nil {
		leaf := r.TLS.PeerCertificates[0]
		intermediates := x509.NewCertPool()
		for _, c := range r.TLS.PeerCertificates[1:] {
			intermediates.AddCert(c)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: f.clientCA, Intermediates: intermediates, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			return nil, err
		}
		if leaf.Subject.CommonName == "" {
			return nil, fmt.Errorf("a client certificate without a common name")
		}
		groups := append(slices.Clone(leaf.Subject.Organization), user.AllAuthenticated)
		return &user.DefaultInfo{Name: leaf.Subject.CommonName, Groups: groups}, nil
	}
	if r.Header.Get("Authorization") != "" {
		return nil, fmt.Errorf("the stand-in verifies no tokens or passwords")
	}
	if !f.anonymous {
		return nil, fmt.Errorf("anonymous requests are off (--anonymous-auth=false)")
	}
	return &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}, nil
}

// impersonate applies the Impersonate-User, -Group, -Uid and -Extra- headers, if any: the
// request then acts as that user, if u may impersonate (as authorize decides for the verb
// "impersonate" on users, groups, uids and userextras).
func (f *standInFront) impersonate(r *http.Request, u user.Info) (user.Info, error) {
	name := r.Header.Get("Impersonate-User")
	groups := r.Header.Values("Impersonate-Group")
	uid := r.Header.Get("Impersonate-Uid")
	extra := map[string][]string{}
	for k, vs := range r.Header {
		if key, ok := strings.CutPrefix(k, "Impersonate-Extra-"); ok {
			extra[strings.ToLower(key)] = vs
		}
	}
	if name == "" {
		if len(groups) > 0 || uid != "" || len(extra) > 0 {
			return nil, apierrors.NewBadRequest("requested impersonation without a user name (Impersonate-User)")
		}
		return u, nil
	}
	check := func(resource, value string) error {
		attrs := authorizer.AttributesRecord{User: u, Verb: "impersonate", Resource: resource, Name: value, ResourceRequest: true}
		if resource == "uids" || resource == "userextras" {
			attrs.APIGroup = "authentication.k8s.io"
		}
		if ok, reason := f.authorize(attrs); !ok {
			return responsewriters.ForbiddenStatusError(attrs, reason)
		}
		return nil
	}
	resource := "users"
	if strings.HasPrefix(name, "system:serviceaccount:") {
		resource = "serviceaccounts"
	}
	if err := check(resource, name); err != nil {
		return nil, err
	}
	for _, g := range groups {
		if err := check("groups", g); err != nil {
			return nil, err
		}
	}
	if uid != "" {
		if err := check("uids", uid); err != nil {
			return nil, err
		}
	}
	for _, vs := range extra {
		for _, v := range vs {
			if err := check("userextras", v); err != nil {
				return nil, err
			}
		}
	}
	if name != user.Anonymous && !slices.Contains(groups, user.AllAuthenticated) {
		groups = append(groups, user.AllAuthenticated)
	}
	return &user.DefaultInfo{Name: name, UID: uid, Groups: groups, Extra: extra}, nil
}

func attributesOf(u user.Info, info *genericrequest.RequestInfo) authorizer.AttributesRecord {
	return authorizer.AttributesRecord{
		User: u, Verb: info.Verb, Namespace: info.Namespace, APIGroup: info.APIGroup, APIVersion: info.APIVersion,
		Resource: info.Resource, Subresource: info.Subresource, Name: info.Name,
		ResourceRequest: info.IsResourceRequest, Path: info.Path,
	}
}

// publicPaths are what kube-apiserver's bootstrap RBAC policy lets everyone, authenticated or
// not, get (system:public-info-viewer).
var publicPaths = []string{"/healthz", "/livez", "/readyz", "/version", "/version/"}

// authorize runs the --authorization-mode authorizers in order, as kube-apiserver's union
// authorizer does: the first that allows or denies decides, and a request none allows is
// refused. RBAC here is kube-apiserver's bootstrap policy for what it covers without Roles
// (system:masters may do anything; everyone may read the public paths; the authenticated may
// read discovery and ask what they may do): any other request would need the cluster's Roles
// and bindings, which the stand-in does not evaluate, and the refusal's reason says so.
func (f *standInFront) authorize(a authorizer.AttributesRecord) (bool, string) {
	groups := a.User.GetGroups()
	notEvaluated := ""
	for _, mode := range f.modes {
		switch mode {
		case "AlwaysAllow":
			return true, ""
		case "AlwaysDeny":
			return false, "Everything is forbidden."
		case "RBAC":
			if slices.Contains(groups, user.SystemPrivilegedGroup) {
				return true, ""
			}
			if !a.ResourceRequest && a.Verb == "get" && slices.Contains(publicPaths, a.Path) {
				return true, ""
			}
			if slices.Contains(groups, user.AllAuthenticated) {
				if !a.ResourceRequest && a.Verb == "get" && isDiscoveryPath(a.Path) {
					return true, ""
				}
				if a.ResourceRequest && a.Verb == "create" && a.Subresource == "" &&
					((a.APIGroup == "authorization.k8s.io" && (a.Resource == "selfsubjectaccessreviews" || a.Resource == "selfsubjectrulesreviews")) ||
						(a.APIGroup == "authentication.k8s.io" && a.Resource == "selfsubjectreviews")) {
					return true, ""
				}
			}
			notEvaluated = "informersim's kube-apiserver stand-in evaluates no RBAC Roles or bindings: under --authorization-mode=RBAC it authorises system:masters, the public paths and discovery only"
		case "Node":
			if slices.Contains(groups, user.NodesGroup) && notEvaluated == "" {
				notEvaluated = "informersim's kube-apiserver stand-in does not evaluate the Node authorizer's rules"
			}
		}
	}
	return false, notEvaluated
}

// isDiscoveryPath reports whether path is one system:discovery lets the authenticated get.
func isDiscoveryPath(path string) bool {
	for _, p := range []string{"/api", "/apis", "/openapi", "/version", "/healthz", "/livez", "/readyz"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return true
		}
	}
	return false
}

// writeStatusError answers err with its metav1.Status (a 500 for an error that is not an API
// status), as kube-apiserver's filters answer.
func writeStatusError(w http.ResponseWriter, err error) {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		status = apierrors.NewInternalError(err)
	}
	s := status.Status()
	s.Kind, s.APIVersion = "Status", "v1"
	body, _ := json.Marshal(s)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(int(s.Code))
	_, _ = w.Write(append(body, '\n'))
}
