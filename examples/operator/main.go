package operator

import (
	"context"
	"fmt"

	webappv1 "github.com/informersim/informersim/examples/operator/api/v1"
	"github.com/informersim/informersim/examples/operator/internal/controller"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// Options are the operator's settings: cmd/main.go's flags, and the planted bugs.
type Options struct {
	// MetricsBindAddress is the metrics server's address; "0" serves none.
	MetricsBindAddress string
	// ProbeBindAddress is the health probes' address; "" serves none.
	ProbeBindAddress string
	// LeaderElection makes the manager elect a leader before reconciling.
	LeaderElection bool
	// FIFOQueue gives the controller client-go's FIFO workqueue instead of controller-runtime's
	// default priority queue, whose order between the objects of one relist is a race between
	// its goroutines (a run in informersim's world then replays from its seed).
	FIFOQueue bool
	// Bugs plants mistakes in the reconciler (controller.Bugs); zero for the correct one.
	Bugs controller.Bugs
}

// Main runs the operator with no metrics server, no health probes and no leader election
// until ctx is done.
func Main(ctx context.Context, cfg *rest.Config) error {
	return Options{MetricsBindAddress: "0"}.Main(ctx, cfg)
}

// NewScheme is the scheme of the operator's types: client-go's and the WebApp's.
func NewScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := webappv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return scheme, nil
}

// Main builds the manager and its reconciler from cfg and runs them until ctx is done.
func (o Options) Main(ctx context.Context, cfg *rest.Config) error {
	if cfg == nil {
		return fmt.Errorf("operator: nil *rest.Config")
	}
	scheme, err := NewScheme()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: o.MetricsBindAddress},
		HealthProbeBindAddress: o.ProbeBindAddress,
		LeaderElection:         o.LeaderElection,
		LeaderElectionID:       "webapp.apps.example.com",
		Controller:             config.Controller{UsePriorityQueue: ptr.To(!o.FIFOQueue)},
	})
	if err != nil {
		return fmt.Errorf("operator: unable to create the manager: %w", err)
	}
	if err := (&controller.WebAppReconciler{
		Client:   mgr.GetClient(),
		Scheme:   mgr.GetScheme(),
		Recorder: mgr.GetEventRecorder("webapp-controller"),
		Bugs:     o.Bugs,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("operator: unable to create the controller: %w", err)
	}
	if o.ProbeBindAddress != "" {
		if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
			return err
		}
	}
	return mgr.Start(ctx)
}
