// Package operator is the webapp operator, laid out as kubebuilder lays out a project:
//
//	api/v1/                      the WebApp custom resource (types, registration, deep copies)
//	internal/controller/         the reconciler: a Deployment per WebApp, status and conditions
//	cmd/main.go                  the binary: flags, a *rest.Config from the kubeconfig, Main
//	main.go                      Main: the manager, built from a *rest.Config (what kubebuilder's
//	                             cmd/main.go does after its flags)
//	world_test.go, operator_test.go  the world specs: conditions, determinism, planted bugs
//
// Its non-test packages import controller-runtime, client-go and k8s.io/api only; the world
// specs (world_test.go) run Main, unchanged, in informersim's simulated world with
// clientgo.Config.Main.
package operator
