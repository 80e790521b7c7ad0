//go:build serve

package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// The kube-apiserver stand-in: what envtest starts as kube-apiserver when KUBEBUILDER_ASSETS
// names the directory `informersim envtest-assets` writes. It takes the flags
// controller-runtime's envtest passes (pkg/internal/testing/controlplane/apiserver.go: the
// secure port and bind address, the cert dir holding the serving certificate envtest generated,
// the client CA its admin user's certificate is signed by, the etcd URL, the authorization mode,
// the service account files), serves informersim's REST front over TLS there, authenticates
// client certificates and authorises as apiserverFlags says, and stops on SIGTERM. Its objects
// live in its own memory, not in the etcd stand-in (standin_etcd.go), which it registers with so
// that a restart against the same etcd, which would keep a real apiserver's objects, fails loudly
// instead of starting empty.

// standInName is the name the stand-ins print their errors under.
const standInName = "kube-apiserver (informersim's stand-in)"

// apiserverOptions are the values of the flags the stand-in takes.
type apiserverOptions struct {
	advertiseAddress      net.IP
	allowPrivileged       bool
	anonymousAuth         bool
	authorizationModes    []string
	bindAddress           net.IP
	certDir               string
	clientCAFile          string
	disablePlugins        []string
	enablePlugins         []string
	etcdServers           []string
	securePort            int
	serviceAccountIssuer  []string
	serviceAccountKeys    []string
	serviceAccountSigning string
	serviceClusterIPRange string
	tlsCertFile           string
	tlsKeyFile            string
	verbosity             int
	vmodule               string
}

// apiserverFlags declares the stand-in's flags on fs, one line each, with kube-apiserver's names
// and types. Any other flag is refused by the flag set ("unknown flag"), with the list of these
// in the message: a flag of kube-apiserver's the stand-in cannot honour is an error, never
// ignored. The usage says what each means here where it differs from kube-apiserver.
func apiserverFlags(fs *pflag.FlagSet, o *apiserverOptions) {
	fs.IPVar(&o.advertiseAddress, "advertise-address", nil, "accepted and checked to be an IP (the stand-in creates no kubernetes Service to advertise it in)")
	fs.BoolVar(&o.allowPrivileged, "allow-privileged", false, "must be true if given: the stand-in admits privileged containers (it has no pod security checks)")
	fs.BoolVar(&o.anonymousAuth, "anonymous-auth", true, "requests without credentials are system:anonymous (else 401)")
	fs.StringSliceVar(&o.authorizationModes, "authorization-mode", []string{"AlwaysAllow"}, "AlwaysAllow, AlwaysDeny, RBAC or Node, in order: RBAC allows system:masters everything and everyone the public paths (/healthz, /livez, /readyz, /version), the authenticated discovery; it evaluates no Roles, so any other request is refused 403 saying so")
	fs.IPVar(&o.bindAddress, "bind-address", net.IPv4zero, "the address the secure port listens on")
	fs.StringVar(&o.certDir, "cert-dir", "/var/run/kubernetes", "the directory of apiserver.crt and apiserver.key, the serving certificate (written, self-signed, when missing and --tls-cert-file is not given)")
	fs.StringVar(&o.clientCAFile, "client-ca-file", "", "client certificates signed by these CAs authenticate: the user is the common name, the groups the organizations")
	fs.StringSliceVar(&o.disablePlugins, "disable-admission-plugins", nil, "admission plugins to turn off (NamespaceLifecycle, MutatingAdmissionWebhook and ValidatingAdmissionWebhook are the ones the stand-in runs; turning off another is a no-op)")
	fs.StringSliceVar(&o.enablePlugins, "enable-admission-plugins", nil, "admission plugins to turn on: only NamespaceLifecycle, MutatingAdmissionWebhook and ValidatingAdmissionWebhook (on already); another is an error")
	fs.StringSliceVar(&o.etcdServers, "etcd-servers", nil, "the URL of informersim's etcd stand-in (one): objects are kept in this process, the stand-in only registers there")
	fs.IntVar(&o.securePort, "secure-port", 6443, "the HTTPS port (1-65535)")
	fs.StringArrayVar(&o.serviceAccountIssuer, "service-account-issuer", nil, "accepted (checked to be a URL): the stand-in issues no service account tokens")
	fs.StringArrayVar(&o.serviceAccountKeys, "service-account-key-file", nil, "accepted (checked to be readable): the stand-in verifies no service account tokens")
	fs.StringVar(&o.serviceAccountSigning, "service-account-signing-key-file", "", "accepted (checked to be readable): the stand-in signs no service account tokens")
	fs.StringVar(&o.serviceClusterIPRange, "service-cluster-ip-range", "", "the range Services get their cluster IPs from (default 10.0.0.0/24, kube-apiserver's; a second, dual-stack range is not served)")
	fs.StringVar(&o.tlsCertFile, "tls-cert-file", "", "the serving certificate (PEM), in place of the cert dir's")
	fs.StringVar(&o.tlsKeyFile, "tls-private-key-file", "", "the serving certificate's key (PEM)")
	fs.IntVarP(&o.verbosity, "v", "v", 0, "log verbosity (accepted; the stand-in logs only its start and its errors)")
	fs.StringVar(&o.vmodule, "vmodule", "", "per-file log verbosity (accepted, as --v)")
}

// refusedFlagReasons says why a few flags of kube-apiserver's users are known to pass are not
// honoured; any other unknown flag gets the general message.
var refusedFlagReasons = map[string]string{
	"feature-gates":                            "the stand-in serves kube-apiserver v1.37's default API and behaviour only; feature gates are not modelled",
	"runtime-config":                           "the stand-in serves every built-in group and version it has (docs/builtin-kinds.md); it cannot turn groups on or off",
	"insecure-port":                            "kube-apiserver removed insecure serving in v1.24, and so does the stand-in",
	"token-auth-file":                          "the stand-in authenticates client certificates only",
	"admission-control-config-file":            "admission plugins are not configurable in the stand-in",
	"audit-policy-file":                        "the stand-in writes no audit log",
	"audit-log-path":                           "the stand-in writes no audit log",
	"audit-webhook-config-file":                "the stand-in sends no audit events",
	"authentication-token-webhook-config-file": "the stand-in authenticates client certificates only",
	"authorization-webhook-config-file":        "the stand-in authorises with AlwaysAllow, AlwaysDeny, RBAC (system:masters) or Node only",
	"encryption-provider-config":               "the stand-in keeps objects in memory, unencrypted",
}

// standInPlugins are the admission plugins the stand-in runs (all on by default, as in
// kube-apiserver).
var standInPlugins = []string{"NamespaceLifecycle", "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"}

const apiserverUsage = `Usage of kube-apiserver (informersim's stand-in, for controller-runtime's envtest):

Serves informersim's fake apiserver over HTTPS on --bind-address:--secure-port with the serving
certificate of --cert-dir (or --tls-cert-file), authenticating client certificates signed by
--client-ca-file, until SIGTERM or SIGINT. It takes the flags envtest passes; a flag of
kube-apiserver's it cannot honour is an error. Its objects live in this process: --etcd-servers
must name informersim's etcd stand-in, which it only registers with. docs/serve.md.

Flags:
`

// kubeAPIServerStandIn runs the stand-in with args (without the program name); it returns the
// exit code: 0 after a clean stop, 1 on a flag or start-up error (kube-apiserver's code for both).
func kubeAPIServerStandIn(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o apiserverOptions
	fs := pflag.NewFlagSet("kube-apiserver", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	apiserverFlags(fs, &o)
	help := fs.BoolP("help", "h", false, "print the flags and exit")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", standInName, explainFlagError(err, fs))
		return 1
	}
	if *help {
		fmt.Fprint(stdout, apiserverUsage)
		fmt.Fprint(stdout, fs.FlagUsages())
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "%s: unexpected arguments %q (kube-apiserver takes flags only)\n", standInName, fs.Args())
		return 1
	}
	front, err := newStandInFront(o, fs)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", standInName, err)
		return 1
	}
	for _, note := range front.notes {
		fmt.Fprintf(stderr, "%s: %s\n", standInName, note)
	}
	if err := registerWithEtcd(ctx, o.etcdServers[0]); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", standInName, err)
		return 1
	}
	api, code := startAPI(ctx, apiConfig{seed: 1, controllers: true, noNamespaceLifecycle: front.noNamespaceLifecycle, serviceCIDR: front.serviceCIDR}, standInName, stderr)
	if api == nil {
		return max(code, 1)
	}
	defer api.stop()
	ln, err := net.Listen("tcp", net.JoinHostPort(o.bindAddress.String(), strconv.Itoa(o.securePort)))
	if err != nil {
		fmt.Fprintf(stderr, "%s: --secure-port=%d --bind-address=%s: %v\n", standInName, o.securePort, o.bindAddress, err)
		return 1
	}
	front.next = api.handler
	server := &http.Server{
		Handler:           front,
		TLSConfig:         front.tls,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          nil,
	}
	served := make(chan error, 1)
	go func() { served <- server.ServeTLS(ln, "", "") }()
	fmt.Fprintf(stderr, "%s: serving securely on %s\n", standInName, ln.Addr())
	select {
	case <-ctx.Done():
	case err := <-served:
		fmt.Fprintf(stderr, "%s: %v\n", standInName, err)
		return 1
	}
	// Open watches end at once, as they do when kube-apiserver stops.
	if err := server.Close(); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", standInName, err)
		return 1
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "%s: %v\n", standInName, err)
		return 1
	}
	return 0
}

// explainFlagError turns pflag's error for a flag the stand-in does not take into one that says
// why (refusedFlagReasons) or which flags it does take.
func explainFlagError(err error, fs *pflag.FlagSet) string {
	msg := err.Error()
	name, unknown := strings.CutPrefix(msg, "unknown flag: --")
	if !unknown {
		if short, ok := strings.CutPrefix(msg, "unknown shorthand flag: "); ok {
			return fmt.Sprintf("%s (the stand-in takes %s)", short, flagNames(fs))
		}
		return msg
	}
	if reason, ok := refusedFlagReasons[name]; ok {
		return fmt.Sprintf("--%s is not honoured: %s", name, reason)
	}
	return fmt.Sprintf("--%s is not a flag the stand-in honours (it takes %s; docs/serve.md)", name, flagNames(fs))
}

func flagNames(fs *pflag.FlagSet) string {
	var names []string
	fs.VisitAll(func(f *pflag.Flag) { names = append(names, "--"+f.Name) })
	return strings.Join(names, ", ")
}

// standInFront authenticates and authorises each request, as kube-apiserver's filters do before
// its handlers, then hands it to next, informersim's REST front.
type standInFront struct {
	tls       *tls.Config
	clientCA  *x509.CertPool // nil: no client certificate authenticates
	anonymous bool
	modes     []string
	// noNamespaceLifecycle: --disable-admission-plugins named NamespaceLifecycle.
	noNamespaceLifecycle bool
	// serviceCIDR: --service-cluster-ip-range's (first) range, "" for the default.
	serviceCIDR string
	// notes are what the stand-in says at start about flags it accepts but does not act on.
	notes []string
	next  http.Handler
}

// newStandInFront checks every flag's value (as kube-apiserver does before it starts) and loads
// the certificates.
func newStandInFront(o apiserverOptions, fs *pflag.FlagSet) (*standInFront, error) {
	f := &standInFront{anonymous: o.anonymousAuth}
	if fs.Changed("allow-privileged") && !o.allowPrivileged {
		return nil, errors.New("--allow-privileged=false is not honoured: the stand-in has no pod security checks to refuse privileged containers with")
	}
	if o.securePort < 1 || o.securePort > 65535 {
		return nil, fmt.Errorf("--secure-port=%d: the stand-in serves HTTPS only, on a port in 1-65535", o.securePort)
	}
	if len(o.etcdServers) != 1 {
		return nil, fmt.Errorf("--etcd-servers: want the URL of one etcd stand-in, got %q", o.etcdServers)
	}
	if u, err := url.Parse(o.etcdServers[0]); err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("--etcd-servers=%s: want http://HOST:PORT of informersim's etcd stand-in", o.etcdServers[0])
	}
	for _, m := range o.authorizationModes {
		switch m {
		case "AlwaysAllow", "AlwaysDeny", "RBAC", "Node":
			f.modes = append(f.modes, m)
		default:
			return nil, fmt.Errorf("--authorization-mode=%s is not honoured: the stand-in authorises with AlwaysAllow, AlwaysDeny, RBAC (system:masters; no Roles evaluated) and Node only", m)
		}
	}
	for _, p := range o.enablePlugins {
		if !slices.Contains(standInPlugins, p) {
			return nil, fmt.Errorf("--enable-admission-plugins=%s is not honoured: the stand-in runs only %s", p, strings.Join(standInPlugins, ", "))
		}
	}
	for _, p := range o.disablePlugins {
		switch p {
		case "NamespaceLifecycle":
			f.noNamespaceLifecycle = true
		case "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook":
			return nil, fmt.Errorf("--disable-admission-plugins=%s is not honoured: the stand-in cannot turn admission webhooks off", p)
		}
	}
	if o.advertiseAddress != nil && o.advertiseAddress.IsUnspecified() {
		return nil, fmt.Errorf("--advertise-address=%s: want a routable IP", o.advertiseAddress)
	}
	if o.serviceClusterIPRange != "" {
		ranges := strings.Split(o.serviceClusterIPRange, ",")
		for _, r := range ranges {
			if _, _, err := net.ParseCIDR(r); err != nil {
				return nil, fmt.Errorf("--service-cluster-ip-range=%s: %v", o.serviceClusterIPRange, err)
			}
		}
		f.serviceCIDR = ranges[0]
		if len(ranges) > 1 {
			f.notes = append(f.notes, fmt.Sprintf("--service-cluster-ip-range=%s: Services get cluster IPs from %s only (the stand-in's clusters are single-stack)", o.serviceClusterIPRange, ranges[0]))
		}
	}
	for _, issuer := range o.serviceAccountIssuer {
		if u, err := url.Parse(issuer); err != nil || (u.Scheme != "https" && !strings.Contains(issuer, ":")) {
			return nil, fmt.Errorf("--service-account-issuer=%s: want a URL", issuer)
		}
	}
	for _, file := range append(slices.Clone(o.serviceAccountKeys), o.serviceAccountSigning) {
		if file == "" {
			continue
		}
		if _, err := os.ReadFile(file); err != nil {
			return nil, fmt.Errorf("a service account key file: %w", err)
		}
	}
	if len(o.serviceAccountIssuer)+len(o.serviceAccountKeys) > 0 || o.serviceAccountSigning != "" {
		f.notes = append(f.notes, "the service account flags accepted: the stand-in issues and verifies no service account tokens (serviceaccounts/token is not served)")
	}
	if o.clientCAFile != "" {
		raw, err := os.ReadFile(o.clientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		f.clientCA = x509.NewCertPool()
		if !f.clientCA.AppendCertsFromPEM(raw) {
			return nil, fmt.Errorf("--client-ca-file=%s holds no PEM certificate", o.clientCAFile)
		}
	}
	cert, err := servingCertificate(o)
	if err != nil {
		return nil, err
	}
	f.tls = &tls.Config{
		Certificates: []tls.Certificate{cert},
		// Verified in authenticate, so that a certificate no CA signed is a 401 as in
		// kube-apiserver, not a failed handshake.
		ClientAuth: tls.RequestClientCert,
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"},
	}
	return f, nil
}

// servingCertificate loads --tls-cert-file and --tls-private-key-file, or the cert dir's
// apiserver.crt and apiserver.key (what envtest writes there), or writes a self-signed pair
// there first as kube-apiserver does.
func servingCertificate(o apiserverOptions) (tls.Certificate, error) {
	if (o.tlsCertFile == "") != (o.tlsKeyFile == "") {
		return tls.Certificate{}, errors.New("--tls-cert-file and --tls-private-key-file go together")
	}
	if o.tlsCertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.tlsCertFile, o.tlsKeyFile)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("--tls-cert-file: %w", err)
		}
		return cert, nil
	}
	certFile, keyFile := filepath.Join(o.certDir, "apiserver.crt"), filepath.Join(o.certDir, "apiserver.key")
	if _, err := os.Stat(certFile); errors.Is(err, os.ErrNotExist) {
		if err := writeSelfSigned(certFile, keyFile, o.bindAddress); err != nil {
			return tls.Certificate{}, fmt.Errorf("--cert-dir=%s: %w", o.certDir, err)
		}
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("--cert-dir=%s: %w", o.certDir, err)
	}
	return cert, nil
}

// writeSelfSigned writes a self-signed serving certificate for localhost and addr.
func writeSelfSigned(certFile, keyFile string, addr net.IP) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "localhost@informersim"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	if addr != nil && !addr.IsUnspecified() {
		tmpl.IPAddresses = append(tmpl.IPAddresses, addr)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(certFile), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return err
	}
	return os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)
}

// registerWithEtcd tells the etcd stand-in at etcdURL that an apiserver keeps its objects. A
// second registration is refused: a real kube-apiserver restarted against the same etcd finds
// its objects there, the stand-in would start empty.
func registerWithEtcd(ctx context.Context, etcdURL string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(etcdURL, "/")+etcdRegisterPath, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("--etcd-servers=%s: %w (the stand-in needs informersim's etcd stand-in there)", etcdURL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusConflict:
		return fmt.Errorf("--etcd-servers=%s: %s", etcdURL, bytes.TrimSpace(body))
	default:
		return fmt.Errorf("--etcd-servers=%s is not informersim's etcd stand-in (%s answers %d): the stand-in keeps objects in its own memory and cannot use a real etcd", etcdURL, etcdRegisterPath, resp.StatusCode)
	}
}
