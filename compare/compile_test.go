package compare

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/informer"
)

// Compile-time checks that the fake apiserver's adapters and client-go's types fit each other's
// interfaces (design.md, style rule 2). They live here, not in sim, because only this module may
// import client-go.
var (
	// A real client-go informer can run on the fake apiserver.
	_ cache.ListerWatcher            = (*fakeapi.ListerWatcher)(nil)
	_ cache.ListerWatcherWithContext = (*fakeapi.ListerWatcher)(nil)
	// Our informer can run on a real cluster through client-go's ListWatch.
	_ informer.ListerWatcher = (*cache.ListWatch)(nil)
	// The per-namespace (or cluster-wide) client is a dynamic.ResourceInterface as is.
	_ dynamic.ResourceInterface = (*fakeapi.ResourceClient)(nil)
	// Server.Resource's result becomes a NamespaceableResourceInterface, and the server a
	// dynamic.Interface, through the two thin adapters below.
	_ dynamic.NamespaceableResourceInterface = namespaceableResource{}
	_ dynamic.Interface                      = dynamicServer{}
)

// namespaceableResource adapts *fakeapi.ResourceClient to dynamic.NamespaceableResourceInterface.
// The adapter is needed because of Go's type identity: fakeapi's Namespace method returns
// *fakeapi.ResourceClient (fakeapi may not import client-go), while the interface wants a method
// returning dynamic.ResourceInterface. Every other method comes from the embedded client.
type namespaceableResource struct {
	*fakeapi.ResourceClient
}

// Namespace scopes the client to namespace ns, shadowing the embedded method.
func (r namespaceableResource) Namespace(ns string) dynamic.ResourceInterface {
	return r.ResourceClient.Namespace(ns)
}

// dynamicServer makes a *fakeapi.Server a dynamic.Interface, so client-go code written against
// the dynamic client (dynamicinformer, controllers) can use the fake apiserver.
type dynamicServer struct {
	srv *fakeapi.Server
}

// Resource returns the server's client for gvr.
func (d dynamicServer) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return namespaceableResource{d.srv.Resource(gvr)}
}
