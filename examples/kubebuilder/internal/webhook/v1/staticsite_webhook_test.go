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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	webv1 "github.com/informersim/informersim/examples/kubebuilder/api/v1"
)

var _ = Describe("StaticSite Webhook", func() {
	var (
		obj       *webv1.StaticSite
		oldObj    *webv1.StaticSite
		validator StaticSiteCustomValidator
		defaulter StaticSiteCustomDefaulter
	)

	BeforeEach(func() {
		obj = &webv1.StaticSite{Spec: webv1.StaticSiteSpec{Domain: "docs.example.org", Image: "nginx:1.27", Replicas: 1}}
		oldObj = obj.DeepCopy()
		validator = StaticSiteCustomValidator{}
		Expect(validator).NotTo(BeNil(), "Expected validator to be initialized")
		defaulter = StaticSiteCustomDefaulter{}
		Expect(defaulter).NotTo(BeNil(), "Expected defaulter to be initialized")
		Expect(oldObj).NotTo(BeNil(), "Expected oldObj to be initialized")
		Expect(obj).NotTo(BeNil(), "Expected obj to be initialized")
	})

	Context("When creating StaticSite under Defaulting Webhook", func() {
		It("Should set the tier from the replicas and label the site with it", func() {
			By("calling the Default method")
			obj.Spec.Replicas = 3
			Expect(defaulter.Default(ctx, obj)).To(Succeed())
			Expect(obj.Spec.Tier).To(Equal("standard"))
			Expect(obj.Labels).To(HaveKeyWithValue(TierLabel, "standard"))
		})
	})

	Context("When creating or updating StaticSite under Validating Webhook", func() {
		It("Should deny a reserved domain", func() {
			obj.Spec.Domain = "intranet.local"
			_, err := validator.ValidateCreate(ctx, obj)
			Expect(err).To(HaveOccurred())
		})

		It("Should admit a valid site, warning of an unpinned image", func() {
			obj.Spec.Image = "nginx"
			warnings, err := validator.ValidateUpdate(ctx, oldObj, obj)
			Expect(err).NotTo(HaveOccurred())
			Expect(warnings).To(ConsistOf(`spec.image "nginx" has no pinned tag`))
		})
	})

	Context("When the API server calls the webhooks", func() {
		newSite := func(name string, spec webv1.StaticSiteSpec) *webv1.StaticSite {
			return &webv1.StaticSite{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: spec}
		}

		It("stores the site as the defaulting webhook patched it", func() {
			site := newSite("patched", webv1.StaticSiteSpec{Domain: "a.example.org", Replicas: 4})
			Expect(k8sClient.Create(ctx, site)).To(Succeed())
			DeferCleanup(k8sClient.Delete, ctx, site)

			var stored webv1.StaticSite
			Expect(k8sClient.Get(ctx, types.NamespacedName{Name: "patched", Namespace: "default"}, &stored)).To(Succeed())
			Expect(stored.Spec.Tier).To(Equal("standard"), "the webhook's default")
			Expect(stored.Spec.Image).To(Equal("nginx:1.27"), "the schema's default")
			Expect(stored.Labels).To(HaveKeyWithValue(TierLabel, "standard"))

			By("patching the site again on update")
			stored.Spec.Tier = "premium"
			stored.Spec.Replicas = 2
			Expect(k8sClient.Update(ctx, &stored)).To(Succeed())
			Expect(stored.Labels).To(HaveKeyWithValue(TierLabel, "premium"))
		})

		It("refuses what the validating webhook denies, with its message", func() {
			err := k8sClient.Create(ctx, newSite("reserved", webv1.StaticSiteSpec{Domain: "intranet.local"}))
			Expect(err).To(HaveOccurred())
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring(`admission webhook "vstaticsite-v1.kb.io" denied the request`))
			Expect(err.Error()).To(ContainSubstring("domains ending in .local are reserved"))

			site := newSite("single", webv1.StaticSiteSpec{Domain: "b.example.org"})
			Expect(k8sClient.Create(ctx, site)).To(Succeed())
			DeferCleanup(k8sClient.Delete, ctx, site)
			site.Spec.Tier = "premium"
			err = k8sClient.Update(ctx, site)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring("a premium site runs at least 2 replicas"))
		})

		It("passes the validating webhook's warnings on to the client", func() {
			var warnings []string
			warnCfg := rest.CopyConfig(cfg)
			warnCfg.WarningHandlerWithContext = recordWarnings{&warnings}
			wc, err := client.New(warnCfg, client.Options{Scheme: k8sClient.Scheme()})
			Expect(err).NotTo(HaveOccurred())
			site := newSite("unpinned", webv1.StaticSiteSpec{Domain: "c.example.org", Image: "nginx:latest"})
			Expect(wc.Create(ctx, site)).To(Succeed())
			DeferCleanup(k8sClient.Delete, ctx, site)
			Expect(warnings).To(ContainElement(`spec.image "nginx:latest" has no pinned tag`))
		})
	})
})

// recordWarnings collects the warnings of a client's answers.
type recordWarnings struct{ warnings *[]string }

func (r recordWarnings) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	*r.warnings = append(*r.warnings, text)
}
