package kube

import (
	"context"
	"fmt"
	"strings"

	"github.com/informersim/informersim/fakeapi/rest"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// kube-apiserver decodes every object of a built-in kind into its Go type and stores what the
// type holds: a field the type lacks is gone (a 400 under fieldValidation=Strict, kubectl's
// default; a warning under Warn, the API's default; silently under Ignore), and what the type
// always has is there, written as the type writes it (a template's metadata.creationTimestamp:
// null, a container's resources: {}, an event's eventTime: null). typedBuiltin does the same
// with the object admitted, through client-go's scheme; kinds the scheme lacks pass unchanged.
func typedBuiltin(ctx context.Context, req *rest.AdmitRequest) (*unstructured.Unstructured, error) {
	obj, err := builtinScheme().New(req.GVK)
	if err != nil {
		return req.Object, nil
	}
	strict, warn := fieldValidation(req.FieldValidation)
	err = runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(req.Object.Object, obj, strict || warn)
	if se, ok := runtime.AsStrictDecodingError(err); ok {
		if strict {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", req.GVK.Kind, req.GVK.Version, req.GVK.Kind, err))
		}
		for _, e := range se.Errors() {
			rest.AddWarning(ctx, e.Error())
		}
	} else if err != nil {
		return nil, apierrors.NewBadRequest(strings.TrimPrefix(err.Error(), "unrecognized type: "))
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	md, _ := m["metadata"].(map[string]any)
	if ts, ok := md["creationTimestamp"]; ok && ts == nil {
		delete(md, "creationTimestamp") // the server sets it on create; an update keeps the stored one
	}
	m["apiVersion"], m["kind"] = req.GVK.GroupVersion().String(), req.GVK.Kind
	req.Object.Object = m
	return req.Object, nil
}
