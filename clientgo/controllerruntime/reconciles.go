package controllerruntime

import (
	"errors"
	"strings"

	"github.com/go-logr/logr"
	"github.com/informersim/informersim/clientgo/internal/crhooks"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// controller-runtime says what became of each reconcile only in its logs: a controller's
// reconcileHandler logs "Reconciler error" with the error, or, at verbosity 5, "Reconcile done,
// requeueing" (after a duration or rate-limited) or "Reconcile successful", on the controller's
// logger, which carries the controller's name and the request's namespace and name. Its workers
// log "Starting workers" as they start. That logger descends from the manager's, which is the
// root logger pkg/log.Log unless the manager's Options.Logger is set.
//
// installOutcomes replaces the root logger (pkg/log.Log, and ctrl.Log, its copy) with one whose
// sink tells the harness those outcomes (crhooks.Reconciled) and passes every line on to the
// root's own sink, the one ctrl.SetLogger fulfils: what the controller's main logs still goes
// where it sends it, at the verbosity it asks. The lines logged through it name this file as
// their caller to a logger that prints callers.
func installOutcomes() {
	root := logr.New(&outcomeSink{inner: ctrllog.Log.GetSink()})
	ctrllog.Log = root
	ctrl.Log = root
}

// outcomeSink is a logr.LogSink in front of another: it keeps the key-value pairs given to
// WithValues (the controller's name, the request's namespace and name) to read them when a
// reconcile's outcome is logged.
type outcomeSink struct {
	inner  logr.LogSink
	values []any
}

func (s *outcomeSink) Init(info logr.RuntimeInfo) { s.inner.Init(info) }

// Enabled is true at every level: the outcomes are logged at verbosity 5. Info passes a line on
// only when the inner sink is enabled at its level.
func (s *outcomeSink) Enabled(int) bool { return true }

func (s *outcomeSink) Info(level int, msg string, kv ...any) {
	switch {
	case msg == "Reconcile successful":
		s.tell(crhooks.Succeeded, nil)
	case strings.HasPrefix(msg, "Reconcile done, requeueing"):
		s.tell(crhooks.Requeued, nil)
	case msg == "Starting workers":
		s.tell(crhooks.Started, nil)
	}
	if s.inner.Enabled(level) {
		s.inner.Info(level, msg, kv...)
	}
}

func (s *outcomeSink) Error(err error, msg string, kv ...any) {
	if msg == "Reconciler error" {
		if err == nil {
			err = errors.New("nil error") // never from controller-runtime: it logs a failure's error
		}
		s.tell(crhooks.Failed, err)
	}
	s.inner.Error(err, msg, kv...)
}

func (s *outcomeSink) WithName(name string) logr.LogSink {
	return &outcomeSink{inner: s.inner.WithName(name), values: s.values}
}

func (s *outcomeSink) WithValues(kv ...any) logr.LogSink {
	return &outcomeSink{inner: s.inner.WithValues(kv...), values: append(s.values[:len(s.values):len(s.values)], kv...)}
}

// tell reports an outcome with the controller and request its logger carries.
func (s *outcomeSink) tell(o crhooks.Outcome, err error) {
	report := crhooks.Reconciled
	if report == nil {
		return
	}
	var controller, namespace, name string
	var hasName bool
	for i := 0; i+1 < len(s.values); i += 2 {
		k, _ := s.values[i].(string)
		v, _ := s.values[i+1].(string)
		switch k {
		case "controller":
			controller = v
		case "namespace":
			namespace = v
		case "name":
			name, hasName = v, true
		}
	}
	if controller == "" || (o != crhooks.Started && !hasName) {
		return // not a controller's reconcile (a request of another type names no object)
	}
	report(controller, namespace, name, o, err)
}
