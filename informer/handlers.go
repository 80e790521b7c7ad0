package informer

// This file holds the adapters that turn plain functions into a [ResourceEventHandler]
// (informer.md §10).

// ResourceEventHandlerFuncs adapts up to three functions to a [ResourceEventHandler]. A nil
// function is skipped. isInInitialList is dropped; use [ResourceEventHandlerDetailedFuncs] to
// receive it (informer.md §10).
type ResourceEventHandlerFuncs struct {
	AddFunc    func(obj any)
	UpdateFunc func(oldObj, newObj any)
	DeleteFunc func(obj any)
}

var _ ResourceEventHandler = ResourceEventHandlerFuncs{}

// OnAdd calls AddFunc if it is set.
func (r ResourceEventHandlerFuncs) OnAdd(obj any, isInInitialList bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj)
	}
}

// OnUpdate calls UpdateFunc if it is set.
func (r ResourceEventHandlerFuncs) OnUpdate(oldObj, newObj any) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if it is set. obj may be a [DeletedFinalStateUnknown].
func (r ResourceEventHandlerFuncs) OnDelete(obj any) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// ResourceEventHandlerDetailedFuncs is [ResourceEventHandlerFuncs] with isInInitialList passed
// through to AddFunc (informer.md §10).
type ResourceEventHandlerDetailedFuncs struct {
	AddFunc    func(obj any, isInInitialList bool)
	UpdateFunc func(oldObj, newObj any)
	DeleteFunc func(obj any)
}

var _ ResourceEventHandler = ResourceEventHandlerDetailedFuncs{}

// OnAdd calls AddFunc if it is set.
func (r ResourceEventHandlerDetailedFuncs) OnAdd(obj any, isInInitialList bool) {
	if r.AddFunc != nil {
		r.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc if it is set.
func (r ResourceEventHandlerDetailedFuncs) OnUpdate(oldObj, newObj any) {
	if r.UpdateFunc != nil {
		r.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if it is set. obj may be a [DeletedFinalStateUnknown].
func (r ResourceEventHandlerDetailedFuncs) OnDelete(obj any) {
	if r.DeleteFunc != nil {
		r.DeleteFunc(obj)
	}
}

// FilteringResourceEventHandler forwards to Handler only the notifications whose objects pass
// FilterFunc, and turns updates that cross the filter's boundary into adds and deletes, so that
// Handler sees a consistent view of the filtered set (informer.md §10):
//
//   - OnAdd: forwarded iff FilterFunc(obj).
//   - OnUpdate: both pass → OnUpdate; only the new object passes → OnAdd(new, false); only the
//     old object passes → OnDelete(old) with the plain old object (not a tombstone); neither →
//     nothing.
//   - OnDelete: forwarded iff FilterFunc(obj). obj may be a [DeletedFinalStateUnknown], so
//     FilterFunc must cope with tombstones.
type FilteringResourceEventHandler struct {
	FilterFunc func(obj any) bool
	Handler    ResourceEventHandler
}

var _ ResourceEventHandler = FilteringResourceEventHandler{}

// OnAdd forwards obj iff it passes the filter.
func (r FilteringResourceEventHandler) OnAdd(obj any, isInInitialList bool) {
	if !r.FilterFunc(obj) {
		return
	}
	r.Handler.OnAdd(obj, isInInitialList)
}

// OnUpdate forwards, converts or drops the update according to which objects pass the filter.
func (r FilteringResourceEventHandler) OnUpdate(oldObj, newObj any) {
	newer := r.FilterFunc(newObj)
	older := r.FilterFunc(oldObj)
	switch {
	case newer && older:
		r.Handler.OnUpdate(oldObj, newObj)
	case newer && !older:
		// The object entered the filtered set: to Handler it is new. It cannot be part of
		// the initial list, which only ever produces adds (informer.md §10).
		r.Handler.OnAdd(newObj, false)
	case !newer && older:
		// The object left the filtered set: to Handler it is gone, and its last state is
		// known exactly, so no tombstone (informer.md §10).
		r.Handler.OnDelete(oldObj)
	}
}

// OnDelete forwards obj iff it passes the filter.
func (r FilteringResourceEventHandler) OnDelete(obj any) {
	if !r.FilterFunc(obj) {
		return
	}
	r.Handler.OnDelete(obj)
}
