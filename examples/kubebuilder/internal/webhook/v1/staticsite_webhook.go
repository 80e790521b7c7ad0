/*
Copyright 2026 The informersim Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	webv1 "github.com/informersim/informersim/examples/kubebuilder/api/v1"
)

// log is for logging in this package.
var staticsitelog = logf.Log.WithName("staticsite-resource")

// TierLabel is the label the defaulting webhook puts on each site: its tier, for selectors.
const TierLabel = "web.informersim.dev/tier"

// SetupStaticSiteWebhookWithManager registers the StaticSite webhooks with mgr's webhook server.
func SetupStaticSiteWebhookWithManager(mgr ctrl.Manager) error {
	return ctrl.NewWebhookManagedBy(mgr, &webv1.StaticSite{}).
		WithValidator(&StaticSiteCustomValidator{}).
		WithDefaulter(&StaticSiteCustomDefaulter{}).
		Complete()
}

// +kubebuilder:webhook:path=/mutate-web-informersim-dev-v1-staticsite,mutating=true,failurePolicy=fail,sideEffects=None,groups=web.informersim.dev,resources=staticsites,verbs=create;update,versions=v1,name=mstaticsite-v1.kb.io,admissionReviewVersions=v1

// StaticSiteCustomDefaulter sets what the schema cannot default: the tier (free, unless the
// site runs three replicas or more, then standard) and the tier label.
type StaticSiteCustomDefaulter struct{}

// Default sets the tier and the tier label of site.
func (d *StaticSiteCustomDefaulter) Default(_ context.Context, site *webv1.StaticSite) error {
	staticsitelog.Info("defaulting", "name", site.GetName())
	if site.Spec.Tier == "" {
		site.Spec.Tier = "free"
		if site.Spec.Replicas >= 3 {
			site.Spec.Tier = "standard"
		}
	}
	labels := site.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[TierLabel] = site.Spec.Tier
	site.SetLabels(labels)
	return nil
}

// +kubebuilder:webhook:path=/validate-web-informersim-dev-v1-staticsite,mutating=false,failurePolicy=fail,sideEffects=None,groups=web.informersim.dev,resources=staticsites,verbs=create;update,versions=v1,name=vstaticsite-v1.kb.io,admissionReviewVersions=v1

// StaticSiteCustomValidator refuses what the schema cannot: reserved domains, a premium site
// with a single replica; and warns of an image without a pinned tag.
type StaticSiteCustomValidator struct{}

// ValidateCreate validates a new site.
func (v *StaticSiteCustomValidator) ValidateCreate(_ context.Context, site *webv1.StaticSite) (admission.Warnings, error) {
	staticsitelog.Info("validating create", "name", site.GetName())
	return validateSite(site)
}

// ValidateUpdate validates a site's new version.
func (v *StaticSiteCustomValidator) ValidateUpdate(_ context.Context, _, site *webv1.StaticSite) (admission.Warnings, error) {
	staticsitelog.Info("validating update", "name", site.GetName())
	return validateSite(site)
}

// ValidateDelete lets every site go.
func (v *StaticSiteCustomValidator) ValidateDelete(_ context.Context, site *webv1.StaticSite) (admission.Warnings, error) {
	return nil, nil
}

func validateSite(site *webv1.StaticSite) (admission.Warnings, error) {
	var errs field.ErrorList
	spec := field.NewPath("spec")
	for _, reserved := range []string{".local", ".internal", ".invalid"} {
		if strings.HasSuffix(site.Spec.Domain, reserved) {
			errs = append(errs, field.Invalid(spec.Child("domain"), site.Spec.Domain, fmt.Sprintf("domains ending in %s are reserved", reserved)))
		}
	}
	if site.Spec.Tier == "premium" && site.Spec.Replicas < 2 {
		errs = append(errs, field.Invalid(spec.Child("replicas"), site.Spec.Replicas, "a premium site runs at least 2 replicas"))
	}
	var warnings admission.Warnings
	if !strings.Contains(site.Spec.Image, ":") || strings.HasSuffix(site.Spec.Image, ":latest") {
		warnings = append(warnings, fmt.Sprintf("spec.image %q has no pinned tag", site.Spec.Image))
	}
	if len(errs) > 0 {
		return warnings, apierrors.NewInvalid(schema.GroupKind{Group: webv1.GroupVersion.Group, Kind: "StaticSite"}, site.Name, errs)
	}
	return warnings, nil
}
