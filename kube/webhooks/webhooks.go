// Package webhooks runs kube-apiserver's own admission webhook plugins, MutatingAdmissionWebhook
// and ValidatingAdmissionWebhook (k8s.io/apiserver/pkg/admission/plugin/webhook), in
// informersim's REST front: `informersim serve` and the kube-apiserver stand-in of
// `informersim envtest-assets` call the webhooks of the MutatingWebhookConfigurations and
// ValidatingWebhookConfigurations (admissionregistration.k8s.io/v1) written to them as
// kube-apiserver calls them.
//
// The contract is kube-apiserver's, since the code is: each configuration's webhooks in order
// of the configurations' names, matched by their rules (operations, groups, versions, resources
// with subresources, scope), namespaceSelector, objectSelector and matchConditions, and with
// matchPolicy Equivalent by the other served versions of a custom resource; an HTTPS POST of an
// admission.k8s.io/v1 AdmissionReview to the clientConfig's url, verified with its caBundle,
// bounded by timeoutSeconds; failurePolicy deciding what a failed call does; a dry run refused
// for webhooks with side effects; a mutating webhook's JSONPatch applied before the object is
// validated and before the validating webhooks run, mutating webhooks reinvoked when one asks
// (reinvocationPolicy IfNeeded); a denial answered with the webhook's code and message in
// kube-apiserver's words ("admission webhook \"NAME\" denied the request: ..."), its warnings
// passed on. kube.AdmissionPlugins says where in a write the plugins run.
//
// What differs: a clientConfig.service cannot be reached (there is no cluster network; the call
// fails as an unreachable service fails, and failurePolicy decides); the plugins learn of
// configurations and namespaces from informers over an in-process client of the front, so a
// configuration written is honoured once that informer has it, as in kube-apiserver.
//
// InProcess makes the same plugins for a deterministic run (the client-go harness): they read
// the server's configurations before each write and reach each webhook through a function the
// run gives, which decides its delay and failures from the seed (docs/serve.md "Webhooks in
// the world").
package webhooks

import (
	"context"
	"fmt"
	"net/http"

	fakerest "github.com/informersim/informersim/fakeapi/rest"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/validating"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
)

// plugin is what both webhook plugins are, besides their Admit or Validate.
type plugin interface {
	admission.Interface
	SetExternalKubeClientSet(kubernetes.Interface)
	SetExternalKubeInformerFactory(informers.SharedInformerFactory)
	ValidateInitialization() error
}

// Start makes the two webhook plugins for front, the REST front's handler, and starts the
// informers they read configurations and namespaces from (through an in-process client of
// front, until ctx is done); it returns the plugins, the mutating one first, at once: each
// waits for the informers at the first write it admits. Give them to the front's
// kube.AdmissionPlugins.
func Start(ctx context.Context, front http.Handler) ([]admission.Interface, error) {
	tr, err := fakerest.NewTransport(front)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	cs, err := kubernetes.NewForConfig(&restclient.Config{Host: "http://informersim.invalid", Transport: tr, QPS: -1})
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	m, err := mutating.NewMutatingWebhook(nil)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	v, err := validating.NewValidatingAdmissionWebhook(nil)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	factory := informers.NewSharedInformerFactory(cs, 0)
	for _, p := range []plugin{m, v} {
		p.SetExternalKubeClientSet(cs)
		p.SetExternalKubeInformerFactory(factory)
		if err := p.ValidateInitialization(); err != nil {
			return nil, fmt.Errorf("webhooks: %w", err)
		}
	}
	// The plugins wait for their informers to sync at the first write they admit (as
	// kube-apiserver's do, for up to 10 s), so the front can serve at once.
	factory.Start(ctx.Done())
	return []admission.Interface{m, v}, nil
}
