package rest

import (
	"net/http"

	"github.com/informersim/informersim/fakeapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// watch streams a watch as newline-delimited JSON events, or in a codec's framing (protobuf:
// length-prefixed), one flush per event. Errors before
// the stream starts are Status responses (400, 404, 422, 429...); errors after it starts are
// ERROR events carrying a Status, after which the stream ends (fakeapi.md §4.6). The stream ends
// when fakeapi closes the watch (deadline, fault, reinit, slow consumer) and the watch is
// stopped when the client goes away.
func (h *Handler) watch(w http.ResponseWriter, r *http.Request, rc *fakeapi.ResourceClient, t target, opts metav1.ListOptions, f format) {
	var wi watch.Interface
	var err error
	if h.openWatch != nil {
		wi, err = h.openWatch(r, t.res.storeGVR(), t.namespace, opts)
	} else {
		wi, err = h.openLent(r, rc, t, opts)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer wi.Stop()
	if f.codec != nil {
		w.Header().Set("Content-Type", f.codec.StreamMediaType())
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.Header().Set("Cache-Control", "no-cache, private")
	w.WriteHeader(http.StatusOK)
	rcon := http.NewResponseController(w)
	_ = rcon.Flush()
	e := getEncoder()
	defer putEncoder(e)
	headers := true
	for {
		select {
		case ev, ok := <-wi.ResultChan():
			if !ok {
				return
			}
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				ev.Object = t.fromStore(u)
			}
			frame, shared, err := h.sharedEvent(ev, f, e)
			if err != nil {
				return // nothing written, the stream ends (as below)
			}
			obj, err := h.eventObject(t, ev, f, &headers)
			if err != nil {
				return // a table the convertor could not build: the stream ends
			}
			switch {
			case shared:
			case f.codec != nil:
				ro, ok := obj.(runtime.Object)
				if !ok {
					return // not an object a codec encodes: the stream ends
				}
				if frame, err = f.codec.EncodeWatchEvent(ev.Type, ro); err != nil {
					return // nothing written, the stream ends (as for JSON below)
				}
			default:
				e.buf = e.buf[:0]
				if err := e.event(ev.Type, obj); err != nil {
					return // as json.Encoder would: nothing written, the stream ends
				}
				frame = e.buf
			}
			if _, err := w.Write(frame); err != nil {
				return // the client is gone
			}
			if err := rcon.Flush(); err != nil {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}

// openLent opens a watch whose events carry the server's committed objects themselves, lent
// read-only (fakeapi's ListerWatcher.OpenWatchLent), not a deep copy for each watcher: the
// front only encodes them, once for all watchers (encache.go). The loop above stops it when the
// client goes away. A request whose client is gone goes through rc.Watch, for its error.
func (h *Handler) openLent(r *http.Request, rc *fakeapi.ResourceClient, t target, opts metav1.ListOptions) (watch.Interface, error) {
	if r.Context().Err() != nil {
		return rc.Watch(r.Context(), opts)
	}
	w, err := h.srv.ListerWatcher(t.res.storeGVR(), t.namespace).OpenWatchLent(opts)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// eventObject is the object of ev in the negotiated format; ERROR events always carry a Status.
func (h *Handler) eventObject(t target, ev watch.Event, f format, headers *bool) (any, error) {
	if st, ok := ev.Object.(*metav1.Status); ok {
		return statusOf(&statusError{st: *st}), nil
	}
	u, ok := ev.Object.(*unstructured.Unstructured)
	if !ok {
		return ev.Object, nil
	}
	switch f.rep {
	case repTable:
		if ev.Type == watch.Bookmark {
			return h.toTable(t, nil, listMeta(u.GetResourceVersion(), ""), false)
		}
		tbl, err := h.toTable(t, []unstructured.Unstructured{*u}, listMeta(u.GetResourceVersion(), ""), *headers)
		*headers = false
		return tbl, err
	case repPartial:
		if f.codec != nil {
			return toPartialObject(u), nil
		}
		return toPartial(u), nil
	}
	if f.codec != nil {
		return u, nil
	}
	return u.Object, nil
}

// event appends one watch event as kube-apiserver streams it (metav1.WatchEvent in JSON, the
// type before the object), followed by a newline: the bytes json.Encoder.Encode writes for it.
func (e *jsonEncoder) event(typ watch.EventType, obj any) error {
	e.buf = append(e.buf, `{"type":`...)
	e.buf = appendJSONString(e.buf, string(typ))
	e.buf = append(e.buf, `,"object":`...)
	if err := e.value(obj); err != nil {
		return err
	}
	e.buf = append(e.buf, "}\n"...)
	return nil
}

// statusError carries a Status to statusOf.
type statusError struct{ st metav1.Status }

func (e *statusError) Error() string         { return e.st.Message }
func (e *statusError) Status() metav1.Status { return e.st }

// sharedEvent returns the frame of ev built around its object's shared item (encache.go) when
// ev carries an object in the object representation and the encoding has items (JSON, an
// ItemCodec); shared false otherwise, for eventObject's path. JSON frames are built in e.buf.
func (h *Handler) sharedEvent(ev watch.Event, f format, e *jsonEncoder) (frame []byte, shared bool, err error) {
	u, ok := ev.Object.(*unstructured.Unstructured)
	if !ok || f.rep != repObject {
		return nil, false, nil
	}
	if f.codec == nil {
		item, err := h.lentItem(nil, u)
		if err != nil {
			return nil, false, err
		}
		e.buf = append(e.buf[:0], `{"type":`...)
		e.buf = appendJSONString(e.buf, string(ev.Type))
		e.buf = append(e.buf, `,"object":`...)
		e.buf = append(e.buf, item...)
		e.buf = append(e.buf, "}\n"...)
		return e.buf, true, nil
	}
	ic, ok := f.codec.(ItemCodec)
	if !ok {
		return nil, false, nil
	}
	item, err := h.lentItem(ic, u)
	if err != nil {
		return nil, false, err
	}
	frame, err = ic.ItemWatchEvent(ev.Type, u.GroupVersionKind(), item)
	return frame, err == nil, err
}
