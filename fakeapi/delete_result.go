package fakeapi

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// DeleteResult is Delete that also says what the delete did, for the REST front (fakeapi/rest),
// which answers like kube-apiserver: the object's new state while it still exists (graceful
// deletion, pending finalizers, dry run) and a Success Status once it is gone. obj is the state
// after the delete, or the last state when removed is true; it is the caller's to keep.
func (c *ResourceClient) DeleteResult(ctx context.Context, name string, options metav1.DeleteOptions) (obj *unstructured.Unstructured, removed bool, err error) {
	obj, err = c.write(VerbDelete, name, func() (*unstructured.Unstructured, error) {
		if err := ctxErr(ctx); err != nil {
			return nil, err
		}
		res, key, err := c.target_locked(VerbDelete, name)
		if err != nil {
			return nil, err
		}
		u, err := c.srv.delete_locked(res, key, options)
		if err != nil {
			return nil, err
		}
		if len(options.DryRun) == 0 {
			removed = c.srv.current_locked(res, key) == nil
		}
		return copyObject(u), nil // delete_locked's object is the server's
	})
	return obj, removed, err
}
