// Package kube plugs what needs the Go types of k8s.io/api into the REST front of the fake
// apiserver (fakeapi/rest), which the main module keeps free of k8s.io/api and client-go so that
// importing the simulator never pins their versions. It is a nested module
// (github.com/informersim/informersim/kube); `informersim serve` and the clientgo module link it,
// so every client (client-go's typed clientset with its default protobuf configuration, kubectl,
// controller-runtime) is served as kube-apiserver serves it.
//
// RESTOptions returns the rest.Options that fill the front's seam. The codec is ProtobufCodec
// (docs/fakeapi.md §5.8): application/vnd.kubernetes.protobuf bodies and watch streams for the
// kinds of client-go's scheme whose Go types have protobuf marshalling, converted from and to
// the fake's JSON form through the scheme, and the check that a written object fits its Go type
// (rest.TypeChecker). Besides the codec, they
// compute the writes that need schemas with apimachinery's own machinery (docs/fakeapi.md §5.7):
// strategic merge patches of built-in kinds (util/strategicpatch with the patch strategies and
// merge keys of k8s.io/api's Go types), server-side apply and the managedFields of every write
// (util/managedfields, kube-apiserver's field manager, with the schemas client-go's
// applyconfigurations carry; custom resources with a deduced schema). The front runs them under
// the fake apiserver's lock (fakeapi.Mutation), so they are atomic and take its faults.
//
// The Admission (admission.go, docs/fakeapi.md §5.9) admits CustomResourceDefinitions and the
// custom resources they define with k8s.io/apiextensions-apiserver's own libraries: the
// definition's registry strategy and validation; for custom resources, pruning, defaulting,
// metadata coercion, the schema's validation and CEL rules, as kube-apiserver's custom resource
// handler runs them. Those libraries are this module's dependencies only, never the main
// module's. InstallDefinitions installs CustomResourceDefinitions (rest.ReadDefinitions reads
// them from a file or a directory such as config/crd/bases) through a front as a client would.
//
// FromUnstructured converts an object from fakeapi's unstructured form to its Go type exactly as
// apimachinery's runtime.DefaultUnstructuredConverter does, several times faster (a plan made once
// per Go type instead of a walk by reflection and a JSON round trip for each time and fieldsV1);
// the client-go harness's informers convert every object they are handed with it.
package kube
