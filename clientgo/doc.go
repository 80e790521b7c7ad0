// Package clientgo connects client-go (v0.37.2) and controller-runtime to informersim's fake
// apiserver. It lives in a nested module so that the main module stays free of client-go.
//
// # Usage
//
// Every Kubernetes client that takes a *rest.Config works against a *fakeapi.Server through the
// REST front (package fakeapi/rest), in process, with no port:
//
//	srv, _ := fakeapi.New(fakeapi.Config{Resources: []fakeapi.Resource{
//		clientgo.CustomResource(widgetGVK, "widgets", true, true),
//	}})
//	cfg, _ := clientgo.RESTConfig(srv)
//	cs := kubernetes.NewForConfigOrDie(cfg)            // typed clientset
//	c, _ := ctrlclient.New(cfg, ctrlclient.Options{})  // controller-runtime
//
// Faults injected into srv (closed watches, 410s, compaction, replica lag, 429s) reach those
// clients as they would reach them from kube-apiserver. [Dynamic] is the direct, HTTP-free
// alternative for the dynamic client: it makes *fakeapi.Server a dynamic.Interface.
//
// # Implementation notes
//
// RESTConfig disables client-side rate limiting (QPS -1): the simulated apiserver has no
// priority-and-fairness, and tests and benchmarks should not sleep in a token bucket. The
// in-process transport is a real http.RoundTripper, so requests go through client-go's whole
// stack: URL building, parameter encoding, JSON decoding, watch stream decoding, retries on 429.
package clientgo
