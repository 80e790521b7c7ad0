package rest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Listener serves a handler over HTTP on a TCP address, for clients that need a real socket
// (kubectl, other processes). It is what `informersim serve` runs.
type Listener struct {
	ln  net.Listener
	srv *http.Server
	url string
	err chan error
}

// Listen serves h on addr ("127.0.0.1:0" picks a free port) until Close. Plain HTTP only: the
// front has no authentication, so bind it to a loopback address.
func Listen(addr string, h http.Handler) (*Listener, error) {
	if h == nil {
		return nil, errors.New("rest: nil http.Handler")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("rest: listen on %q: %w", addr, err)
	}
	l := &Listener{
		ln:  ln,
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		url: "http://" + ln.Addr().String(),
		err: make(chan error, 1),
	}
	go func() { l.err <- l.srv.Serve(ln) }()
	return l, nil
}

// URL returns the base URL, e.g. "http://127.0.0.1:38211".
func (l *Listener) URL() string { return l.url }

// Close stops accepting, ends open requests (watches included) and waits for the server loop.
func (l *Listener) Close() error {
	err := l.srv.Close()
	if serr := <-l.err; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return fmt.Errorf("rest: serve: %w", serr)
	}
	return err
}

// Shutdown stops accepting and waits for open requests until ctx is done; open watches end
// only when their clients or fakeapi close them, so pass a context with a deadline.
func (l *Listener) Shutdown(ctx context.Context) error {
	err := l.srv.Shutdown(ctx)
	if err != nil {
		_ = l.srv.Close()
	}
	<-l.err
	return err
}

// Kubeconfig returns a kubeconfig (YAML) with one cluster, user and context, all named
// name, pointing at url without credentials. kubectl and client-go's clientcmd load it.
func Kubeconfig(url, name string) string {
	if name == "" {
		name = "informersim"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Config\nclusters:\n- name: %s\n  cluster:\n    server: %s\n", name, url)
	fmt.Fprintf(&b, "users:\n- name: %s\n  user: {}\n", name)
	fmt.Fprintf(&b, "contexts:\n- name: %s\n  context:\n    cluster: %s\n    user: %s\n    namespace: default\n", name, name, name)
	fmt.Fprintf(&b, "current-context: %s\n", name)
	return b.String()
}
