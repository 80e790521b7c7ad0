//go:build serve

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/fakeapi/rest"
	"github.com/informersim/informersim/kube"
	"github.com/informersim/informersim/kube/webhooks"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
)

// serve runs `informersim serve`: a fake apiserver behind its REST front on a TCP address, until
// SIGINT or SIGTERM. It prints the address and a kubeconfig for kubectl and client-go.
func serve(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveUntil(ctx, args, stdout, stderr)
}

// crdFlags collects -crd values: a CRD manifest (a file or a directory of them), or
// GROUP/VERSION/KIND/PLURAL[,cluster][,status][,schema=FILE].
type crdFlags struct {
	resources []fakeapi.Resource
	// schemas are the structural schemas read from schema=FILE, for server-side apply.
	schemas map[schema.GroupVersionKind][]byte
	// definitions are the CustomResourceDefinitions of the manifests named, installed at start.
	definitions []*unstructured.Unstructured
}

func (c *crdFlags) String() string { return fmt.Sprint(len(c.resources) + len(c.definitions)) }

func (c *crdFlags) Set(v string) error {
	if !strings.Contains(v, ",") {
		if _, err := os.Stat(v); err == nil {
			defs, err := rest.ReadDefinitions(v)
			if err != nil {
				return err
			}
			c.definitions = append(c.definitions, defs...)
			return nil
		}
	}
	spec, opts, _ := strings.Cut(v, ",")
	parts := strings.Split(spec, "/")
	if len(parts) != 4 || slicesContainEmpty(parts) {
		return fmt.Errorf("want GROUP/VERSION/KIND/PLURAL[,cluster][,status][,schema=FILE], got %q", v)
	}
	r := fakeapi.Resource{
		GVR:                    schema.GroupVersionResource{Group: parts[0], Version: parts[1], Resource: parts[3]},
		Kind:                   parts[2],
		Namespaced:             true,
		RequireResourceVersion: true,
	}
	for _, o := range strings.Split(opts, ",") {
		switch file, isSchema := strings.CutPrefix(o, "schema="); {
		case o == "":
		case o == "cluster":
			r.Namespaced = false
		case o == "status":
			r.Status, r.Generation = true, true
		case isSchema && file != "":
			raw, err := os.ReadFile(file)
			if err != nil {
				return fmt.Errorf("the schema of %q: %w", v, err)
			}
			if defs, err := rest.ReadDefinitions(file); err == nil {
				// A CRD manifest: the schema of its version of this kind.
				raw = nil
				for _, d := range defs {
					gvk, s, err := kube.DefinitionSchema(d, r.GVR.Version)
					if err == nil && gvk == r.GVR.GroupVersion().WithKind(r.Kind) {
						raw = s
					}
				}
				if raw == nil {
					return fmt.Errorf("the schema of %q: no definition in %s gives %s a schema", v, file, r.GVR.GroupVersion().WithKind(r.Kind))
				}
			}
			if c.schemas == nil {
				c.schemas = map[schema.GroupVersionKind][]byte{}
			}
			c.schemas[r.GVR.GroupVersion().WithKind(r.Kind)] = raw
		default:
			return fmt.Errorf("unknown option %q in %q (want cluster, status or schema=FILE)", o, v)
		}
	}
	c.resources = append(c.resources, r)
	return nil
}

func slicesContainEmpty(xs []string) bool {
	for _, x := range xs {
		if x == "" {
			return true
		}
	}
	return false
}

// serveUntil is serve until ctx is done.
func serveUntil(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `usage: informersim serve [-addr=127.0.0.1:PORT] [-kubeconfig=FILE] [-seed=N] [-crd=CRD-MANIFEST|G/V/KIND/PLURAL[,cluster][,status][,schema=FILE]]...
                         [-controllers=false] [-status-latency=D] [-stuck=NAMESPACE/NAME]...

Serves the Kubernetes API of an in-memory fake apiserver (fakeapi) over plain HTTP, without
authentication, until interrupted. It prints the address and a kubeconfig; with -kubeconfig it
also writes the kubeconfig to FILE, for kubectl --kubeconfig=FILE.

It speaks JSON and, for the built-in kinds, protobuf (client-go's and kubectl's defaults), and
starts with the namespaces kube-apiserver creates (default, kube-node-lease, kube-public,
kube-system); a write into any other namespace before it is created is refused as
kube-apiserver refuses it (404 namespaces "x" not found).

It serves apiextensions.k8s.io/v1 CustomResourceDefinitions as kube-apiserver does: a client
(kubectl apply -f config/crd/bases, envtest's installer) creates one and its resource is served,
its objects validated, defaulted and pruned by its schema (CEL rules included). -crd=PATH
installs the definitions of a manifest file or directory at start.

It runs stand-ins for kube-controller-manager (docs/controlplane.md) unless -controllers=false:
the garbage collector (ownerReferences: kubectl delete --cascade=background|foreground|orphan),
the namespace controller (kubectl delete namespace removes its contents, then the namespace)
and workload status (Deployments, ReplicaSets and StatefulSets report their replicas ready,
without pods, so kubectl rollout status finishes; -stuck names a rollout that never does).

`)
		fs.PrintDefaults()
	}
	addr := fs.String("addr", "127.0.0.1:8080", "TCP address to listen on (port 0 picks a free port)")
	kubeconfig := fs.String("kubeconfig", "", "also write the kubeconfig to this file")
	seed := fs.Uint64("seed", 1, "seed of the server's random source (UIDs, generated names, watch timeouts)")
	var crds crdFlags
	fs.Var(&crds, "crd", "install the CustomResourceDefinitions of a manifest file or directory (config/crd/bases), or serve a custom resource GROUP/VERSION/KIND/PLURAL, namespaced unless ,cluster; ,status adds the status subresource; ,schema=FILE gives its structural schema (a CRD manifest, or a CRD version's openAPIV3Schema, YAML or JSON) for server-side apply (repeatable)")
	controllers := fs.Bool("controllers", true, "run the garbage collector, the namespace controller and workload status stand-ins")
	latency := fs.Duration("status-latency", 0, "workload status is written after a seeded latency drawn in [0, D]")
	var stuck stringsFlag
	fs.Var(&stuck, "stuck", "a workload NAMESPACE/NAME whose rollout never completes (repeatable)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "informersim serve: unexpected arguments %q\n", fs.Args())
		return 2
	}
	if !*controllers && (*latency != 0 || len(stuck) > 0) {
		fmt.Fprintln(stderr, "informersim serve: -status-latency and -stuck need the controllers")
		return 2
	}
	api, code := startAPI(ctx, apiConfig{
		seed: *seed, crds: crds, controllers: *controllers,
		workload: controlplane.WorkloadConfig{MaxLatency: *latency, Stuck: stuck},
	}, "informersim serve", stderr)
	if api == nil {
		return code
	}
	defer api.stop()
	h := api.handler
	l, err := rest.Listen(*addr, h)
	if err != nil {
		fmt.Fprintf(stderr, "informersim serve: %v\n", err)
		return 1
	}
	cfg := rest.Kubeconfig(l.URL(), "informersim")
	if *kubeconfig != "" {
		if err := os.WriteFile(*kubeconfig, []byte(cfg), 0o600); err != nil {
			_ = l.Close()
			fmt.Fprintf(stderr, "informersim serve: %v\n", err)
			return 1
		}
	}
	fmt.Fprintf(stdout, "informersim: serving the Kubernetes API at %s\n", l.URL())
	if *kubeconfig != "" {
		fmt.Fprintf(stdout, "informersim: kubeconfig written to %s (kubectl --kubeconfig=%s get pods)\n", *kubeconfig, *kubeconfig)
	}
	fmt.Fprintf(stdout, "---\n%s---\n", cfg)
	<-ctx.Done()
	if err := l.Close(); err != nil {
		fmt.Fprintf(stderr, "informersim serve: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, "informersim: stopped")
	return 0
}

// stringsFlag is a repeatable string flag.
type stringsFlag []string

func (f *stringsFlag) String() string { return strings.Join(*f, ",") }

func (f *stringsFlag) Set(v string) error {
	*f = append(*f, v)
	return nil
}

// apiConfig is what serve and the kube-apiserver stand-in of envtest-assets both run: a fake
// apiserver that requires namespaces and starts with kube-apiserver's, behind a REST front with
// every feature of kube/ and kube-apiserver's admission webhooks (kube/webhooks), custom
// resources and definitions installed, the control plane's stand-ins running unless
// controllers is false.
type apiConfig struct {
	seed        uint64
	crds        crdFlags
	controllers bool
	workload    controlplane.WorkloadConfig
	// noNamespaceLifecycle turns off kube-apiserver's NamespaceLifecycle admission (writes into
	// namespaces that do not exist are then stored).
	noNamespaceLifecycle bool
	// serviceCIDR is the range Services get their cluster IPs from; "" means
	// fakeapi.DefaultServiceCIDR (kube-apiserver's and envtest's).
	serviceCIDR string
}

// runningAPI is a started apiConfig: its handler, and stop, which ends the control plane's
// stand-ins (and reports an error they ended with on stderr).
type runningAPI struct {
	handler *rest.Handler
	stop    func()
}

// startAPI starts cfg's fake apiserver; on an error it says so on stderr, prefixed by name,
// and returns nil and the exit code (2 for a configuration the server refuses, 1 otherwise).
func startAPI(ctx context.Context, cfg apiConfig, name string, stderr io.Writer) (*runningAPI, int) {
	fail := func(code int, err error) (*runningAPI, int) {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return nil, code
	}
	// The managedFields of built-in kinds need a type converter that takes a quarter of a
	// second to build: built meanwhile, so that the front listens sooner (the envtest stand-in
	// is ready about that much earlier); the first write of a built-in kind waits for it.
	kube.Preload()
	if cfg.serviceCIDR == "" {
		cfg.serviceCIDR = fakeapi.DefaultServiceCIDR
	}
	srv, err := fakeapi.New(fakeapi.Config{Rand: rand.New(rand.NewPCG(cfg.seed, cfg.seed)), Resources: cfg.crds.resources,
		RequireNamespaces: !cfg.noNamespaceLifecycle, ServiceCIDR: cfg.serviceCIDR})
	if err != nil {
		return fail(2, err)
	}
	if err := rest.EnsureNamespaces(ctx, srv, rest.SystemNamespaces...); err != nil {
		return fail(1, err)
	}
	api := &runningAPI{stop: func() {}}
	if cfg.controllers {
		cp, err := controlplane.New(srv, controlplane.Config{Rand: rand.New(rand.NewPCG(cfg.seed, cfg.seed+1)), Workload: cfg.workload})
		if err != nil {
			return fail(2, err)
		}
		cpCtx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- controlplane.Run(cpCtx, cp, clock.RealClock{}, time.Second) }()
		api.stop = func() {
			stop()
			if err := <-done; err != nil {
				fmt.Fprintf(stderr, "%s: controllers: %v\n", name, err)
			}
		}
	}
	started := false
	defer func() {
		if !started {
			api.stop()
		}
	}()
	plugins := &kube.AdmissionPlugins{}
	opts, err := kube.RESTOptionsWith(kube.Options{Schemas: cfg.crds.schemas, Plugins: plugins})
	if err != nil {
		return fail(2, err)
	}
	if api.handler, err = rest.NewHandler(srv, opts); err != nil {
		return fail(1, err)
	}
	// The admission webhooks: kube-apiserver's plugins, reading their configurations through an
	// in-process client of the front, until stop.
	hooksCtx, stopHooks := context.WithCancel(ctx)
	stopControllers := api.stop
	api.stop = func() {
		stopHooks()
		stopControllers()
	}
	hooks, err := webhooks.Start(hooksCtx, api.handler)
	if err != nil {
		return fail(1, err)
	}
	plugins.Set(hooks...)
	if err := kube.InstallDefinitions(api.handler, cfg.crds.definitions); err != nil {
		return fail(2, err)
	}
	started = true
	return api, 0
}
