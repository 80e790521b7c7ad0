// Package rest is the REST front of a *fakeapi.Server: an http.Handler that serves the
// Kubernetes API, so that every Kubernetes client (client-go's typed, dynamic and metadata
// clients and informers, controller-runtime, kubectl) works against the fake apiserver unchanged.
//
// # Contract
//
// The handler serves, for every resource of the server's configuration (built-in and custom):
//   - discovery: /api, /api/v1, /apis, /apis/GROUP, /apis/GROUP/VERSION (short names and
//     categories of the built-in kinds included), /api and /apis also in the aggregated format
//     kubectl and client-go ask for first (aggregated.go), /version, /healthz, and a skeleton
//     /openapi/v3 that tells kubectl to validate fields on the server;
//   - get, list (resourceVersion and its match, limit and continue, label and field selectors),
//     watch (newline-delimited JSON, one flush per event: bookmarks, sendInitialEvents and the
//     initial-events-end bookmark, timeoutSeconds), create, update, patch (JSON and merge patch),
//     delete (preconditions, propagation, grace, dry run), deletecollection, get, update and
//     patch of the status subresource where the resource declares one, and of the scale
//     subresource (autoscaling/v1 Scale, scale.go) where it declares fakeapi.Resource.Scale;
//   - representations: the objects as JSON, meta.k8s.io Tables (kubectl get: a Name and an Age
//     column, ages on the server's clock, or a TableConvertor's columns) and PartialObjectMetadata (metadata clients), and in
//     the media type of any Codec plugged in (protobuf), chosen from Accept in quality order
//     (fakeapi.md §5.8);
//   - CustomResourceDefinitions (crd.go, docs/fakeapi.md §5.9): a definition written by any
//     client is named, established and served (discovery included) at the start of the next
//     request, and deleting it deletes its objects, then stops serving its resource;
//   - EnsureNamespaces, which creates the namespaces kube-apiserver starts with, and a
//     namespace created through the front Active, finalized and labelled as kube-apiserver makes
//     it.
//
// A write's warnings (fields dropped under fieldValidation=Warn) are Warning headers, as
// kube-apiserver sends them (warnings.go).
//
// Errors are metav1.Status bodies with kube-apiserver's code and reason: fakeapi's own errors as
// it returns them (fakeapi.md §3, §5, §7), and for what the front decides itself, 400 BadRequest
// (malformed JSON, a body for another kind or namespace, a name that differs from the URL's, an
// undecodable query parameter), 404 NotFound (unknown path, resource or subresource), 405
// MethodNotAllowed, 406 NotAcceptable, 413 RequestEntityTooLarge (bodies above
// Options.MaxRequestBodyBytes, 3 MiB by default) and 415 UnsupportedMediaType. A Status with
// RetryAfterSeconds (429, the 504 of a too-large resourceVersion) also sets Retry-After. Errors
// after a watch started are ERROR events carrying a Status, then the stream ends (§4.6). A
// transport fault injected with Faults.FailNext (a non-Status error, e.g.
// fakeapi.NewConnectionRefused) is RoundTrip's error on the in-process transport and a dropped
// connection on a listener. No input makes the handler panic (FuzzHandler).
//
// Media types other than JSON and the patch types fakeapi does not model are plugged in through
// Options (the seam, seam.go): a Codec serves a media type (protobuf) for the kinds it supports,
// chosen from Accept (in quality order) and Content-Type, and a Patcher computes a patch type
// (strategic merge, apply) as a read-modify-write with the resourceVersion read as precondition.
// An Admission admits every written object on its way to storage (validation, defaulting,
// pruning of custom resources with their definition's schema); a TableConvertor builds the
// server-side tables of the kinds it knows columns of (a definition's printer columns).
// The nested module kube/ fills them all (kube.RESTOptions); `informersim serve` and the clientgo
// module use it. Without them the front is JSON only: other media types get 406 (Accept) or 415
// (Content-Type, DeleteOptions bodies included), strategic merge patch and apply patches
// fakeapi's 405 for built-in kinds, and strategic merge 415 for custom resources, as from
// kube-apiserver.
//
// Simplifications: deletecollection answers a Success Status rather than the list of deleted
// objects, and there is no authentication or authorisation.
//
// # Usage
//
// In process, with no port (client-go: rest.Config{Host: "http://informersim", Transport: tr}):
//
//	h, _ := rest.NewHandler(srv, rest.Options{})
//	tr, _ := rest.NewTransport(h)
//
// On a socket, for kubectl and other processes (what `informersim serve` does):
//
//	l, _ := rest.Listen("127.0.0.1:0", h)
//	defer l.Close()
//	fmt.Print(rest.Kubeconfig(l.URL(), "informersim"))
//
// # Implementation notes
//
// The front is not on the simulation path: it serves concurrent clients, so it starts
// goroutines (one per in-process watch, or per request of a handler other than the front's, the
// listener's serve loop) and relies on fakeapi's mutex and its watch channel adapter
// (Watcher.ResultChan), whose goroutine follows the request's context. It reads time only from
// the server's clock. Routing is by path segments, with one ambiguity resolved as
// kube-apiserver does: /api/v1/namespaces/NAME[/status] is the namespace object unless the third
// segment names a namespaced resource.
//
// Serialisation is most of the front's own cost, so it avoids reflection on the hot paths:
// objects, lists and watch events are written by a JSON encoder for unstructured values
// (jsonenc.go) that produces exactly encoding/json's bytes (sorted keys, HTML escaping, float
// format), lists straight from fakeapi's maps into one reused buffer sized from the first item;
// request bodies that are plain JSON objects are read by a decoder (jsondec.go) that gives
// exactly util/json.Unmarshal's map, anything else going to Unmarshal itself. The in-process
// transport hands a plain response over whole, without a pipe, and serves requests that cannot
// be watches on the caller's goroutine.
package rest
