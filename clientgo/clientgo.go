package clientgo

import (
	"errors"
	"strings"

	"github.com/informersim/informersim/fakeapi"
	fakerest "github.com/informersim/informersim/fakeapi/rest"
	"github.com/informersim/informersim/kube"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Host is the placeholder host of configurations that use the in-process transport; requests
// never leave the process, so any host works.
const Host = "http://informersim.invalid"

// RESTConfig returns a *rest.Config whose requests srv's REST front serves in process, with
// every feature of kube.RESTOptions. Its content configuration is client-go's default, as in a
// configuration loaded from a kubeconfig: typed clients of the built-in kinds send and accept
// protobuf, dynamic and custom-resource clients JSON, so what runs here is what runs against a
// cluster.
func RESTConfig(srv *fakeapi.Server) (*rest.Config, error) {
	if srv == nil {
		return nil, errors.New("clientgo: nil *fakeapi.Server")
	}
	h, err := fakerest.NewHandler(srv, kube.RESTOptions())
	if err != nil {
		return nil, err
	}
	tr, err := fakerest.NewTransport(h)
	if err != nil {
		return nil, err
	}
	return &rest.Config{
		Host:      Host,
		Transport: tr,
		QPS:       -1,
	}, nil
}

// Clientset returns client-go's typed clientset over RESTConfig(srv).
func Clientset(srv *fakeapi.Server) (*kubernetes.Clientset, error) {
	cfg, err := RESTConfig(srv)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// CustomResource describes a custom resource for fakeapi.Config.Resources with the behaviour of
// a CRD-served resource: updates must carry a resourceVersion (422 otherwise), and with a status
// subresource, metadata.generation is tracked and /status writes change only .status. plural is
// the resource name in URLs ("widgets"); the singular name discovery reports is the lower-case
// kind.
func CustomResource(gvk schema.GroupVersionKind, plural string, namespaced, status bool) fakeapi.Resource {
	if plural == "" {
		plural = strings.ToLower(gvk.Kind) + "s"
	}
	return fakeapi.Resource{
		GVR:                    gvk.GroupVersion().WithResource(plural),
		Kind:                   gvk.Kind,
		Namespaced:             namespaced,
		Status:                 status,
		Generation:             status,
		RequireResourceVersion: true,
	}
}

// WithoutWatchList wraps a clientset so that informers built on it (informers.NewSharedInformerFactory)
// start with the classic LIST then WATCH instead of the streaming watch-list: client-go asks the
// client given to the factory whether it supports watch-list semantics, and the wrapper says no.
func WithoutWatchList(cs kubernetes.Interface) kubernetes.Interface { return listWatchOnly{cs} }

type listWatchOnly struct{ kubernetes.Interface }

// IsWatchListSemanticsUnSupported is what client-go's watchlist.DoesClientNotSupportWatchListSemantics looks for.
func (listWatchOnly) IsWatchListSemanticsUnSupported() bool { return true }
