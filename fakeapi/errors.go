package fakeapi

import (
	"fmt"
	"net"
	"os"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// listOptionsKind is the kind the apiserver names in 422s about list and watch options.
var listOptionsKind = schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}

// newTooLargeResourceVersion builds the 504 kube-apiserver returns when a request asks for an RV
// the serving cache (or etcd) has not reached: reason Timeout, message "Timeout: Too large
// resource version: N, current: M", cause ResourceVersionTooLarge (fakeapi.md §3.2 row 3, §7.2).
// apimachinery has no constructor for it (the apiserver's lives in k8s.io/apiserver).
func newTooLargeResourceVersion(requested, current uint64, retryAfterSeconds int) *apierrors.StatusError {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", requested, current), retryAfterSeconds)
	err.ErrStatus.Details.Causes = append(err.ErrStatus.Details.Causes, metav1.StatusCause{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	})
	return err
}

// NewConnectionRefused returns the error a client sees when the apiserver's port is closed: a
// *net.OpError wrapping syscall.ECONNREFUSED, which apimachinery's utilnet.IsConnectionRefused
// recognises, so client-go's reflector backs off and re-watches instead of relisting (§1.3).
func NewConnectionRefused() error {
	return &net.OpError{
		Op:   "dial",
		Net:  "tcp",
		Addr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 6443},
		Err:  os.NewSyscallError("connect", syscall.ECONNREFUSED),
	}
}

// newExpired builds the 410 Expired a watch cache sends for a watch below its history: "too old
// resource version: N (M)", where M is the lowest RV the cache can still watch from, i.e. the
// revision just before its oldest retained event (fakeapi.md §4.6 row 3, §4.7).
func newExpired(requested, lowest uint64) *apierrors.StatusError {
	return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", requested, lowest))
}

// errListTooOld is the etcd-path 410 of fakeapi.md §3.2 row 1.
func errListTooOld() *apierrors.StatusError {
	return apierrors.NewResourceExpired("The resourceVersion for the provided list is too old.")
}

// errContinueTooOld is §3.2 row 2: a 410 carrying a fresh token that continues at the latest
// revision (an inconsistent list).
func errContinueTooOld(fresh string) *apierrors.StatusError {
	err := apierrors.NewResourceExpired("The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter, or use the continue token in this response to retrieve " +
		"the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that " +
		"were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.")
	err.ErrStatus.ListMeta.Continue = fresh
	return err
}

func errInvalidOptions(errs field.ErrorList) *apierrors.StatusError {
	return apierrors.NewInvalid(listOptionsKind, "", errs)
}

// statusOf turns any error into the Status carried by an ERROR event.
func statusOf(err error) *metav1.Status {
	if se, ok := err.(apierrors.APIStatus); ok {
		st := se.Status()
		return &st
	}
	st := apierrors.NewInternalError(err).ErrStatus
	return &st
}

// NewWatchError builds the StatusError for a watch-close fault with the given HTTP code: 410
// Expired, 429 TooManyRequests, 500 InternalError, 504 Timeout (too-large RV); any other code gets
// a generic server response. It is a helper for [Faults.CloseWatch].
func NewWatchError(code int32) *apierrors.StatusError {
	switch code {
	case 410:
		return apierrors.NewResourceExpired("too old resource version")
	case 429:
		return apierrors.NewTooManyRequests("the server is handling too many requests", 1)
	case 500:
		return apierrors.NewInternalError(fmt.Errorf("fakeapi: injected internal error"))
	case 504:
		return newTooLargeResourceVersion(0, 0, 1)
	}
	return apierrors.NewGenericServerResponse(int(code), "watch", schema.GroupResource{}, "", "fakeapi: injected error", 0, false)
}
