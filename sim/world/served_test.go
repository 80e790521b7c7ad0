package world

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A user's first mistakes with resources and selectors get errors that say what to write instead:
// the resources the apiserver serves, and which selector does not parse.
func TestResourceAndSelectorErrorsSayWhatIsServed(t *testing.T) {
	w, err := New(1, Config{})
	if err != nil {
		t.Fatal(err)
	}
	noVersion := fakeapiGVR("", "", "configmaps")
	_, err = w.AddInformer("x", InformerSpec{Resource: noVersion})
	if err == nil || !strings.Contains(err.Error(), `does not serve "/configmaps" (it has no Version`) || !strings.Contains(err.Error(), `; it serves "`) || !strings.Contains(err.Error(), `"apps/v1/deployments"`) || !strings.Contains(err.Error(), `"v1/configmaps"`) {
		t.Errorf("AddInformer(no version) = %v", err)
	}
	if err := w.Apply(Op{Kind: OpCreate, Name: "a", Resource: fakeapiGVR("", "v1", "configmap")}); err == nil || !strings.HasPrefix(err.Error(), `world: op create: the apiserver does not serve "v1/configmap"; it serves `) {
		t.Errorf("Apply(v1/configmap) = %v", err)
	}
	if _, err := w.Generate(GenConfig{Resource: fakeapiGVR("apps", "v1", "widgets")}); err == nil || !strings.Contains(err.Error(), `does not serve "apps/v1/widgets"; it serves`) {
		t.Errorf("Generate(apps/v1/widgets) = %v", err)
	}
	_, err = w.AddInformer("x", InformerSpec{LabelSelector: "app in (("})
	if err == nil || !strings.HasPrefix(err.Error(), `world: informer x: selectors: LabelSelector "app in ((": `) || strings.Contains(err.Error(), "Snapshot") {
		t.Errorf("AddInformer(bad label selector) = %v", err)
	}
	_, err = w.AddInformer("x", InformerSpec{FieldSelector: "a=b=c=="})
	if err == nil || !strings.HasPrefix(err.Error(), `world: informer x: selectors: FieldSelector "a=b=c==": `) {
		t.Errorf("AddInformer(bad field selector) = %v", err)
	}
	_, err = w.AddInformer("x", InformerSpec{FieldSelector: "spec.nope=1"})
	if err == nil || !strings.HasPrefix(err.Error(), "world: informer x: selectors: ") || strings.Contains(err.Error(), "Selector \"") {
		t.Errorf("AddInformer(unsupported field) = %v", err)
	}
}

func fakeapiGVR(group, version, resource string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: group, Version: version, Resource: resource}
}
