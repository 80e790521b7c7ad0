package clientgo

import (
	"github.com/informersim/informersim/fakeapi"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

// Dynamic makes srv a client-go dynamic.Interface directly, without HTTP: each call goes to
// fakeapi's ResourceClient, whose method set is dynamic.ResourceInterface's. (fakeapi cannot
// name client-go's types, so its Namespace returns *fakeapi.ResourceClient; this adapter gives
// it the interface type.) For the full HTTP path use dynamic.NewForConfig(RESTConfig(srv)):
// only that path has what needs k8s.io/api's schemas (strategic merge patch, Apply, managedFields;
// docs/fakeapi.md §5.7), which fakeapi alone answers 405 or does not record.
func Dynamic(srv *fakeapi.Server) dynamic.Interface { return dynamicServer{srv} }

type dynamicServer struct{ srv *fakeapi.Server }

func (d dynamicServer) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return namespaceable{d.srv.Resource(gvr)}
}

type namespaceable struct{ *fakeapi.ResourceClient }

func (n namespaceable) Namespace(ns string) dynamic.ResourceInterface {
	return n.ResourceClient.Namespace(ns)
}

var _ dynamic.Interface = dynamicServer{}
