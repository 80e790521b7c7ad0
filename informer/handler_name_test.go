package informer

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type nameTestHandler struct{}

func (nameTestHandler) OnAdd(any, bool)     {}
func (nameTestHandler) OnUpdate(any, any)   {}
func (nameTestHandler) OnDelete(any)        {}
func (r *infRec) nameTestOnUpdate(any, any) {}

// client-go TestNameForHandler (event_handler_name_test.go), restated: a registration's
// DoneChecker names its handler as client-go formats it, so a "Timed out waiting for" line
// reads the same. The mixture case must come first, to be the test's func1.
func TestNameForHandler(t *testing.T) {
	empty := ResourceEventHandlerFuncs{}
	const pkg = "github.com/informersim/informersim/informer"
	for _, c := range []struct {
		name    string
		handler ResourceEventHandler
		want    string
	}{
		{"mixture", ResourceEventHandlerFuncs{UpdateFunc: empty.OnUpdate, DeleteFunc: func(any) {}},
			pkg + ".ResourceEventHandlerFuncs.OnUpdate-fm+" + pkg + ".TestNameForHandler.func1"},
		{"add", ResourceEventHandlerFuncs{AddFunc: func(any) {}}, pkg + ".TestNameForHandler"},
		{"update", ResourceEventHandlerFuncs{UpdateFunc: func(any, any) {}}, pkg + ".TestNameForHandler"},
		{"delete", ResourceEventHandlerFuncs{DeleteFunc: func(any) {}}, pkg + ".TestNameForHandler"},
		{"all", ResourceEventHandlerFuncs{AddFunc: func(any) {}, UpdateFunc: func(any, any) {}, DeleteFunc: func(any) {}}, pkg + ".TestNameForHandler"},
		{"ptrToFuncs", &ResourceEventHandlerFuncs{AddFunc: func(any) {}}, pkg + ".TestNameForHandler"},
		{"struct", nameTestHandler{}, pkg + ".nameTestHandler"},
		{"ptrToStruct", &nameTestHandler{}, pkg + ".nameTestHandler"},
		{"nil", nil, "<nil>"},
		{"stored-nil", (*nameTestHandler)(nil), "*informer.nameTestHandler"},
		{"empty funcs", ResourceEventHandlerFuncs{}, "informer.ResourceEventHandlerFuncs"},
		{"method value", ResourceEventHandlerFuncs{UpdateFunc: (&infRec{}).nameTestOnUpdate}, pkg + ".(*infRec)"}, // one function: its qualifier
	} {
		if got := handlerName(c.handler); got != c.want {
			t.Errorf("%s: got\n  %s\nwant\n  %s", c.name, got, c.want)
		}
	}
}

// The full DoneChecker name of a registration: the informer's checker name, " + event handler ",
// and the handler's name (informer.md §4.6).
func TestRegistrationCheckerName(t *testing.T) {
	inf := NewSharedInformer(newInfLW(), &metav1.PartialObjectMetadata{}, 0)
	reg, err := inf.AddEventHandler(ResourceEventHandlerFuncs{AddFunc: func(any) {}})
	if err != nil {
		t.Fatal(err)
	}
	want := "SharedIndexInformer *v1.PartialObjectMetadata + event handler github.com/informersim/informersim/informer.TestRegistrationCheckerName"
	if got := reg.HasSyncedChecker().Name(); got != want {
		t.Errorf("got\n  %s\nwant\n  %s", got, want)
	}
}
