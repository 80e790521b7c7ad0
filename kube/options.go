package kube

import (
	"github.com/informersim/informersim/fakeapi/rest"
)

// RESTOptions returns the options of a REST front with every feature of this module: the
// protobuf codec of the built-in kinds, strategic merge patch, server-side apply and the
// managedFields of every write. Pass them to rest.NewHandler (set MaxRequestBodyBytes on the
// result if needed).
func RESTOptions() rest.Options {
	return restOptions(nil)
}

// restOptions is RESTOptions with the admission plugins plugins.
func restOptions(plugins *AdmissionPlugins) rest.Options {
	defs := &definitions{}
	opts := rest.Options{Codecs: []rest.Codec{NewProtobufCodec()}, Admission: admission{defs: defs, plugins: plugins}, Tables: tables{defs: defs}, OpenAPI: builtinOpenAPI}
	addWrites(&opts, &writer{fields: newFieldManagers(nil)})
	return opts
}
