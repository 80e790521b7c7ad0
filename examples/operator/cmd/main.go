// Command operator runs the webapp operator against the cluster of the current kubeconfig (or
// in-cluster configuration), as kubebuilder's cmd/main.go does.
package main

import (
	"flag"
	"os"

	"github.com/informersim/informersim/examples/operator"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

func main() {
	var o operator.Options
	flag.StringVar(&o.MetricsBindAddress, "metrics-bind-address", "0", "The address the metrics endpoint binds to; 0 disables it.")
	flag.StringVar(&o.ProbeBindAddress, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	flag.BoolVar(&o.LeaderElection, "leader-elect", false, "Enable leader election for the controller manager.")
	zapOpts := zap.Options{Development: true}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))

	if err := o.Main(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie()); err != nil {
		ctrl.Log.Error(err, "problem running the operator")
		os.Exit(1)
	}
}
