package realapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/informersim/informersim/controlplane"
	"github.com/informersim/informersim/fakeapi"
	"github.com/informersim/informersim/fakeapi/rest"
	"github.com/informersim/informersim/kube"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	restclient "k8s.io/client-go/rest"
)

// NewInformersim starts informersim's side in process, set up as `informersim serve` sets it
// up (cmd/informersim/serve.go): a fake apiserver requiring namespaces, the system namespaces,
// the control plane's stand-ins on the wall clock, kube's REST options, on a loopback
// listener. Its Compact is fakeapi's.
func NewInformersim(seed uint64) (*Side, error) {
	srv, err := fakeapi.New(fakeapi.Config{Rand: rand.New(rand.NewPCG(seed, seed)), RequireNamespaces: true})
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	if err := rest.EnsureNamespaces(ctx, srv, rest.SystemNamespaces...); err != nil {
		stop()
		return nil, err
	}
	cp, err := controlplane.New(srv, controlplane.Config{Rand: rand.New(rand.NewPCG(seed, seed+1))})
	if err != nil {
		stop()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- controlplane.Run(ctx, cp, clock.RealClock{}, time.Second) }()
	opts, err := kube.RESTOptionsWith(kube.Options{})
	if err != nil {
		stop()
		return nil, err
	}
	h, err := rest.NewHandler(srv, opts)
	if err != nil {
		stop()
		return nil, err
	}
	ts := httptest.NewServer(h)
	return &Side{
		Name:   "informersim",
		Base:   ts.URL,
		Client: ts.Client(),
		Compact: func(_ context.Context, rev string) error {
			n, err := strconv.ParseUint(rev, 10, 64)
			if err != nil {
				return fmt.Errorf("informersim: compact at %q: %w", rev, err)
			}
			return srv.Faults().Compact(n)
		},
		Close: func() {
			ts.Close()
			stop()
			<-done
		},
	}, nil
}

// RealEnv names the variables scripts/realcluster.sh env prints.
const (
	EnvKubeconfig = "KUBECONFIG"
	EnvEtcd       = "REALCLUSTER_ETCD"
)

// NewReal is the real side: the kube-apiserver of the kubeconfig at $KUBECONFIG (the admin's)
// and the etcd at $REALCLUSTER_ETCD, whose HTTP gateway compacts. It checks that the server
// answers /readyz and says it is v1.37.
func NewReal(ctx context.Context) (*Side, error) {
	kc, etcd := os.Getenv(EnvKubeconfig), os.Getenv(EnvEtcd)
	if kc == "" || etcd == "" {
		return nil, fmt.Errorf("realapi: %s and %s must be set (scripts/realcluster.sh env prints them)", EnvKubeconfig, EnvEtcd)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		return nil, fmt.Errorf("realapi: kubeconfig %s: %w", kc, err)
	}
	hc, err := restclient.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	s := &Side{Name: "real", Base: strings.TrimSuffix(cfg.Host, "/"), Client: hc}
	s.Compact = func(ctx context.Context, rev string) error { return compactEtcd(ctx, etcd, rev) }
	r, err := s.Do(ctx, Request{Method: "GET", Path: "/version"})
	if err != nil {
		return nil, err
	}
	var v struct{ GitVersion string }
	if err := json.Unmarshal(r.Body, &v); err != nil || r.Code != 200 {
		return nil, fmt.Errorf("realapi: /version answered %d %s", r.Code, r.Body)
	}
	if !strings.HasPrefix(v.GitVersion, "v1.37.") {
		return nil, fmt.Errorf("realapi: the real kube-apiserver is %s, the suite compares against v1.37", v.GitVersion)
	}
	return s, nil
}

// compactEtcd compacts etcd at rev, physically, through its JSON gateway, and records the
// revision under kube-apiserver's compaction key, as kube-apiserver's own compactor does, so
// that its caches learn of it.
func compactEtcd(ctx context.Context, etcd, rev string) error {
	n, err := strconv.ParseInt(rev, 10, 64)
	if err != nil {
		return fmt.Errorf("etcd: compact at %q: %w", rev, err)
	}
	post := func(path string, body any) (map[string]any, error) {
		b, _ := json.Marshal(body)
		req, err := http.NewRequestWithContext(ctx, "POST", etcd+path, bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("etcd %s: %w", path, err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("etcd %s: %d %s", path, resp.StatusCode, out)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			return nil, fmt.Errorf("etcd %s: %s", path, out)
		}
		return m, nil
	}
	key := base64.StdEncoding.EncodeToString([]byte("compact_rev_key"))
	val := base64.StdEncoding.EncodeToString([]byte(rev))
	if _, err := post("/v3/kv/put", map[string]any{"key": key, "value": val}); err != nil {
		return err
	}
	if _, err := post("/v3/kv/compaction", map[string]any{"revision": strconv.FormatInt(n, 10), "physical": true}); err != nil {
		if strings.Contains(err.Error(), "already been compacted") {
			return nil
		}
		return err
	}
	return nil
}

// ErrNotBuilt says the real control plane's binaries are missing.
var ErrNotBuilt = errors.New("realapi: the real control plane is not built")
