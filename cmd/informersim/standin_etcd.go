//go:build serve

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
)

// The etcd stand-in: what envtest starts as etcd from the directory `informersim envtest-assets`
// writes. envtest starts it first, polls its /health until it answers 200, and passes its URL to
// kube-apiserver as --etcd-servers; nothing else of etcd is used, since the kube-apiserver
// stand-in keeps its objects in its own memory. It serves /health, and the registration of that
// one apiserver (registerWithEtcd), on each --listen-client-urls address until SIGTERM.

// etcdRegisterPath is where the kube-apiserver stand-in registers with the etcd stand-in.
const etcdRegisterPath = "/informersim/apiserver"

const etcdStandInName = "etcd (informersim's stand-in)"

const etcdUsage = `Usage of etcd (informersim's stand-in, for controller-runtime's envtest):

Answers /health on --listen-client-urls until SIGTERM or SIGINT, for envtest's start-up check,
and is where informersim's kube-apiserver stand-in registers; it stores nothing (the objects live
in the kube-apiserver stand-in). It takes the flags envtest passes; any other etcd flag is an
error. docs/serve.md.

Flags:
`

// etcdStandIn runs the etcd stand-in with args (without the program name); it returns the exit
// code: 0 after a clean stop, 1 on a flag or start-up error.
func etcdStandIn(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("etcd", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	listen := fs.StringSlice("listen-client-urls", []string{"http://localhost:2379"}, "the http:// URLs to serve /health on")
	advertise := fs.StringSlice("advertise-client-urls", nil, "accepted (checked to be URLs)")
	peers := fs.StringSlice("listen-peer-urls", nil, "accepted (checked to be URLs): the stand-in is a cluster of one and has no peers")
	dataDir := fs.String("data-dir", "", "created if missing, as etcd does; the stand-in writes nothing into it")
	fs.Bool("unsafe-no-fsync", false, "accepted: the stand-in writes nothing to sync")
	fs.String("name", "default", "the member's name (accepted)")
	fs.String("log-level", "info", "accepted (the stand-in logs only its start and its errors)")
	help := fs.BoolP("help", "h", false, "print the flags and exit")
	if err := fs.Parse(args); err != nil {
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "unknown flag: --"); ok {
			msg = fmt.Sprintf("--%s is not a flag the stand-in honours (it takes %s; docs/serve.md)", name, flagNames(fs))
		}
		fmt.Fprintf(stderr, "%s: %s\n", etcdStandInName, msg)
		return 1
	}
	if *help {
		fmt.Fprint(stdout, etcdUsage)
		fmt.Fprint(stdout, fs.FlagUsages())
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments %q (etcd takes flags only)\n", etcdStandInName, fs.Args())
		return 1
	}
	for _, u := range append(append([]string{}, *advertise...), *peers...) {
		if p, err := url.Parse(u); err != nil || p.Host == "" {
			fmt.Fprintf(stderr, "%s: %q is not a URL\n", etcdStandInName, u)
			return 1
		}
	}
	if *dataDir != "" {
		if err := os.MkdirAll(*dataDir, 0o700); err != nil {
			fmt.Fprintf(stderr, "%s: --data-dir: %v\n", etcdStandInName, err)
			return 1
		}
	}
	var listeners []net.Listener
	closeAll := func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}
	for _, raw := range *listen {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || u.Scheme != "http" {
			closeAll()
			fmt.Fprintf(stderr, "%s: --listen-client-urls=%s: want http://HOST:PORT (the stand-in serves no TLS)\n", etcdStandInName, raw)
			return 1
		}
		l, err := net.Listen("tcp", u.Host)
		if err != nil {
			closeAll()
			fmt.Fprintf(stderr, "%s: --listen-client-urls=%s: %v\n", etcdStandInName, raw, err)
			return 1
		}
		listeners = append(listeners, l)
	}
	server := &http.Server{Handler: &etcdHandler{}, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, len(listeners))
	for _, l := range listeners {
		go func() { served <- server.Serve(l) }()
		fmt.Fprintf(stderr, "%s: serving /health on %s\n", etcdStandInName, l.Addr())
	}
	select {
	case <-ctx.Done():
	case err := <-served:
		fmt.Fprintf(stderr, "%s: %v\n", etcdStandInName, err)
		_ = server.Close()
		return 1
	}
	if err := server.Close(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", etcdStandInName, err)
		return 1
	}
	for range listeners {
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintf(stderr, "%s: %v\n", etcdStandInName, err)
			return 1
		}
	}
	return 0
}

// etcdHandler answers /health as etcd does, and the registration of the one apiserver.
type etcdHandler struct {
	mu         sync.Mutex
	registered bool
}

func (h *etcdHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/health" && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"health":"true","reason":""}`)
	case r.URL.Path == etcdRegisterPath && r.Method == http.MethodPost:
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.registered {
			http.Error(w, "a kube-apiserver stand-in already started against this etcd: a real kube-apiserver restarted here finds its objects in etcd, but the stand-in keeps them in its own memory and would start empty; start a new control plane instead of restarting the apiserver", http.StatusConflict)
			return
		}
		h.registered = true
	default:
		http.Error(w, "informersim's etcd stand-in serves /health only: the objects live in the kube-apiserver stand-in", http.StatusNotFound)
	}
}
