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

package controller

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	webv1 "github.com/informersim/informersim/examples/kubebuilder/api/v1"
)

var _ = Describe("StaticSite Controller", func() {
	Context("When reconciling a resource", func() {
		const resourceName = "test-resource"

		ctx := context.Background()

		typeNamespacedName := types.NamespacedName{
			Name:      resourceName,
			Namespace: "default",
		}
		staticsite := &webv1.StaticSite{}

		BeforeEach(func() {
			By("creating the custom resource for the Kind StaticSite")
			err := k8sClient.Get(ctx, typeNamespacedName, staticsite)
			if err != nil && apierrors.IsNotFound(err) {
				resource := &webv1.StaticSite{
					ObjectMeta: metav1.ObjectMeta{
						Name:      resourceName,
						Namespace: "default",
					},
					Spec: webv1.StaticSiteSpec{Domain: "docs.example.org", Replicas: 2},
				}
				Expect(k8sClient.Create(ctx, resource)).To(Succeed())
			}
		})

		AfterEach(func() {
			resource := &webv1.StaticSite{}
			err := k8sClient.Get(ctx, typeNamespacedName, resource)
			Expect(err).NotTo(HaveOccurred())

			By("Cleanup the specific resource instance StaticSite")
			Expect(k8sClient.Delete(ctx, resource)).To(Succeed())
		})

		It("should successfully reconcile the resource", func() {
			By("Reconciling the created resource")
			controllerReconciler := &StaticSiteReconciler{
				Client: k8sClient,
				Scheme: k8sClient.Scheme(),
			}

			_, err := controllerReconciler.Reconcile(ctx, reconcile.Request{
				NamespacedName: typeNamespacedName,
			})
			Expect(err).NotTo(HaveOccurred())

			By("checking the Deployment it wrote and the site's status")
			var deploy appsv1.Deployment
			Expect(k8sClient.Get(ctx, typeNamespacedName, &deploy)).To(Succeed())
			Expect(deploy.Spec.Replicas).To(Equal(ptr.To[int32](2)))
			Expect(deploy.Spec.Template.Spec.Containers).To(HaveLen(1))
			Expect(deploy.Spec.Template.Spec.Containers[0].Image).To(Equal("nginx:1.27"), "the schema's default image")

			var site webv1.StaticSite
			Expect(k8sClient.Get(ctx, typeNamespacedName, &site)).To(Succeed())
			Expect(metav1.IsControlledBy(&deploy, &site)).To(BeTrue(), "the site owns its Deployment")
			Expect(site.Status.ObservedGeneration).To(Equal(site.Generation))
			Expect(meta.FindStatusCondition(site.Status.Conditions, ConditionAvailable)).NotTo(BeNil())
		})
	})

	Context("When the API server admits a StaticSite", func() {
		site := func(name string, spec webv1.StaticSiteSpec) *webv1.StaticSite {
			return &webv1.StaticSite{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: spec}
		}

		It("defaults the image and the replicas from the schema", func() {
			s := site("defaulted", webv1.StaticSiteSpec{Domain: "a.example.org"})
			Expect(k8sClient.Create(ctx, s)).To(Succeed())
			DeferCleanup(k8sClient.Delete, ctx, s)
			Expect(s.Spec.Image).To(Equal("nginx:1.27"))
			Expect(s.Spec.Replicas).To(Equal(int32(1)))
		})

		It("refuses a spec the validation markers rule out", func() {
			for _, spec := range []webv1.StaticSiteSpec{
				{Domain: "no-dots"},
				{Domain: "b.example.org", Replicas: 21},
				{Domain: "b.example.org", Tier: "gold"},
			} {
				err := k8sClient.Create(ctx, site("invalid", spec))
				Expect(apierrors.IsInvalid(err)).To(BeTrue(), "spec %+v: %v", spec, err)
			}
		})

		It("enforces the CEL rules: replicas within maxReplicas, an immutable domain", func() {
			err := k8sClient.Create(ctx, site("over-budget", webv1.StaticSiteSpec{Domain: "c.example.org", Replicas: 5, MaxReplicas: ptr.To[int32](3)}))
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring("replicas must not exceed maxReplicas"))

			s := site("renamed", webv1.StaticSiteSpec{Domain: "d.example.org"})
			Expect(k8sClient.Create(ctx, s)).To(Succeed())
			DeferCleanup(k8sClient.Delete, ctx, s)
			s.Spec.Domain = "e.example.org"
			err = k8sClient.Update(ctx, s)
			Expect(apierrors.IsInvalid(err)).To(BeTrue(), "%v", err)
			Expect(err.Error()).To(ContainSubstring("domain is immutable"))
		})
	})
})
