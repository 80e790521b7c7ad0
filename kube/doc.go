// Package kube plugs what needs the Go types of k8s.io/api into the REST front of the fake
// apiserver (fakeapi/rest), which the main module keeps free of k8s.io/api and client-go so that
// importing the simulator never pins their versions. It is a nested module
// (github.com/informersim/informersim/kube); `informersim serve` and the clientgo module link it,
// so every client (client-go's typed clientset with its default protobuf configuration, kubectl,
// controller-runtime) is served as kube-apiserver serves it.
//
// RESTOptions returns the rest.Options that fill the front's seam.
package kube
