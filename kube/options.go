package kube

import (
	"github.com/informersim/informersim/fakeapi/rest"
)

// RESTOptions returns the options of a REST front with every feature of this module. Pass them
// to rest.NewHandler (set MaxRequestBodyBytes on the result if needed).
func RESTOptions() rest.Options {
	opts := rest.Options{}
	addWrites(&opts, &writer{fields: newFieldManagers(nil)})
	return opts
}
