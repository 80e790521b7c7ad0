#!/usr/bin/env bash
# realcluster.sh: a real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager)
# built from the Go module proxy alone, started on loopback the way envtest starts one, for the
# differential suite in realapi/ (docs/realcluster.md). It is a test dependency, never a
# requirement: nothing in `make test` calls it.
#
#   scripts/realcluster.sh build   build the three binaries into the cache (skips what exists)
#   scripts/realcluster.sh start   start them (a fresh etcd data dir, certs and keys, a kubeconfig)
#   scripts/realcluster.sh stop    stop exactly the processes start started (by their pids)
#   scripts/realcluster.sh env     print the variables the suite reads (KUBECONFIG, ETCD, ...)
#   scripts/realcluster.sh status  say what is built and what is running
#
# Cache: ${XDG_CACHE_HOME:-~/.cache}/informersim/realcluster/v1.37.2/{bin,src,run}.
# Versions: REALCLUSTER_K8S (v1.37.2), REALCLUSTER_STAGING (v0.37.2), REALCLUSTER_ETCD (v3.7.3).
set -euo pipefail

K8S_VERSION=${REALCLUSTER_K8S:-v1.37.2}
STAGING_VERSION=${REALCLUSTER_STAGING:-v0.37.2}
ETCD_VERSION=${REALCLUSTER_ETCD:-v3.7.3}
GO=${GO:-go}
CACHE=${REALCLUSTER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/informersim/realcluster/$K8S_VERSION}
BIN=$CACHE/bin
SRC=$CACHE/src
RUN=$CACHE/run
# The toolchain on the machine builds; a go line in a dependency's go.mod must not fetch another.
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}
export GOFLAGS="${GOFLAGS:-} -mod=mod"

say() { echo "realcluster: $*" >&2; }
die() { say "$*"; exit 1; }

build_etcd() {
	if [ -x "$BIN/etcd" ]; then say "etcd $ETCD_VERSION: built ($BIN/etcd)"; return; fi
	local dir=$SRC/etcd
	mkdir -p "$dir" "$BIN"
	cat >"$dir/go.mod" <<EOF
module informersim.local/realcluster/etcd

go 1.26

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
EOF
	: >"$dir/go.sum"
	say "etcd $ETCD_VERSION: resolving modules"
	(cd "$dir" && $GO get "go.etcd.io/etcd/server/v3@$ETCD_VERSION")
	say "etcd $ETCD_VERSION: building"
	local start=$SECONDS
	(cd "$dir" && $GO build -trimpath -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3)
	mv "$BIN/etcd.tmp" "$BIN/etcd"
	say "etcd $ETCD_VERSION: built in $((SECONDS - start)) s"
}

# kube_module writes a module that requires k8s.io/kubernetes and replaces each staging module
# that k8s.io/kubernetes's own go.mod replaces (with ./staging/...) by its published version.
kube_module() {
	local dir=$SRC/kubernetes
	mkdir -p "$dir"
	[ -f "$dir/go.mod" ] && grep -q "k8s.io/kubernetes $K8S_VERSION" "$dir/go.mod" && return
	local gomod
	gomod=$(cd "$dir" && GOFLAGS= $GO list -m -f '{{.GoMod}}' "k8s.io/kubernetes@$K8S_VERSION" 2>/dev/null || true)
	if [ -z "$gomod" ] || [ ! -f "$gomod" ]; then
		# go list -m needs a module to run in; write an empty one first.
		printf 'module informersim.local/realcluster/kubernetes\n\ngo 1.26\n' >"$dir/go.mod"
		gomod=$(cd "$dir" && GOFLAGS= $GO list -m -f '{{.GoMod}}' "k8s.io/kubernetes@$K8S_VERSION")
	fi
	[ -f "$gomod" ] || die "could not read k8s.io/kubernetes@$K8S_VERSION's go.mod"
	local staging
	staging=$(sed -n 's#^[[:space:]]*\(k8s\.io/[a-z0-9-]*\)[[:space:]]*=>[[:space:]]*\./staging/.*#\1#p' "$gomod" | grep -v '^k8s.io/sample-' | sort -u)
	[ -n "$staging" ] || die "k8s.io/kubernetes@$K8S_VERSION's go.mod replaces no staging module; its layout changed"
	{
		printf 'module informersim.local/realcluster/kubernetes\n\ngo 1.26\n\nrequire k8s.io/kubernetes %s\n\nreplace (\n' "$K8S_VERSION"
		for m in $staging; do printf '\t%s => %s %s\n' "$m" "$m" "$STAGING_VERSION"; done
		printf ')\n'
	} >"$dir/go.mod"
	: >"$dir/go.sum"
	say "kubernetes $K8S_VERSION: $(echo "$staging" | wc -l) staging modules replaced by $STAGING_VERSION; resolving modules"
	(cd "$dir" && $GO get "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION" "k8s.io/kubernetes/cmd/kube-controller-manager@$K8S_VERSION")
}

build_kube() {
	local name=$1
	if [ -x "$BIN/$name" ]; then say "$name $K8S_VERSION: built ($BIN/$name)"; return; fi
	kube_module
	mkdir -p "$BIN"
	# Without the stamp the binaries call themselves v0.0.0-master+$Format:%H$, which kubectl
	# version and client-go's discovery cannot parse.
	local major=${K8S_VERSION#v}; major=${major%%.*}
	local minor=${K8S_VERSION#v*.}; minor=${minor%%.*}
	local ld="-X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
	ld="$ld -X k8s.io/component-base/version.gitMajor=$major -X k8s.io/component-base/version.gitMinor=$minor"
	ld="$ld -X k8s.io/component-base/version.gitTreeState=clean"
	say "$name $K8S_VERSION: building"
	local start=$SECONDS
	(cd "$SRC/kubernetes" && $GO build -trimpath -ldflags "$ld" -o "$BIN/$name.tmp" "k8s.io/kubernetes/cmd/$name")
	mv "$BIN/$name.tmp" "$BIN/$name"
	say "$name $K8S_VERSION: built in $((SECONDS - start)) s"
}

cmd_build() {
	command -v "$GO" >/dev/null || die "no go command ($GO)"
	build_etcd
	build_kube kube-apiserver
	build_kube kube-controller-manager
	say "built: $(du -sh "$BIN" | cut -f1) in $BIN"
}


# free_port prints a loopback TCP port nothing listens on (a connect that is refused).
free_port() {
	local p tries=0
	while [ $tries -lt 200 ]; do
		p=$((20000 + RANDOM % 20000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return
		fi
		tries=$((tries + 1))
	done
	die "no free loopback port found"
}

# certs writes a CA, the apiserver's serving certificate (loopback, the host's address and the
# kubernetes Service's first address), client certificates for the admin (group system:masters)
# and the controller manager, and the service-account key pair.
certs() {
	local d=$1 host_ip=$2
	mkdir -p "$d"
	(
		cd "$d"
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj "/CN=informersim-realcluster-ca" 2>/dev/null
		sign() { # sign NAME SUBJECT EXTFILE
			openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -out "$1.csr" -subj "$2" 2>/dev/null
			openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$1.crt" -days 2 -extfile "$3" 2>/dev/null
			rm -f "$1.csr"
		}
		printf 'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,IP:%s,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' "$host_ip" >serving.ext
		sign serving "/CN=kube-apiserver" serving.ext
		printf 'extendedKeyUsage=clientAuth\n' >client.ext
		sign admin "/O=system:masters/CN=admin" client.ext
		sign controller-manager "/CN=system:kube-controller-manager" client.ext
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	)
	[ -s "$d/admin.crt" ] && [ -s "$d/serving.crt" ] && [ -s "$d/sa.pub" ] || die "openssl did not write the certificates in $d"
}

# kubeconfig FILE SERVER CERTDIR USER writes a kubeconfig with USER's client certificate.
kubeconfig() {
	cat >"$1" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: realcluster
  cluster:
    server: $2
    certificate-authority: $3/ca.crt
users:
- name: $4
  user:
    client-certificate: $3/$4.crt
    client-key: $3/$4.key
contexts:
- name: realcluster
  context:
    cluster: realcluster
    user: $4
current-context: realcluster
KUBECONFIG
}

# alive says whether the pid file $1 names a running process.
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# admin_get URL: a GET with the admin's certificate; true when it answers 2xx.
admin_get() {
	curl -fsS --max-time 2 --cacert "$RUN/certs/ca.crt" --cert "$RUN/certs/admin.crt" --key "$RUN/certs/admin.key" "$1" >/dev/null 2>&1
}

# wait_for NAME SECONDS CHECK...: runs CHECK until it succeeds, failing if NAME's process exits
# or the time runs out (its log's last lines printed).
wait_for() {
	local name=$1 limit=$2
	shift 2
	local deadline=$((SECONDS + limit))
	until "$@"; do
		alive "$RUN/$name.pid" || die "$name exited while starting; the end of $RUN/$name.log:
$(tail -n 20 "$RUN/$name.log")"
		[ $SECONDS -lt $deadline ] || die "$name not ready after $limit s; the end of $RUN/$name.log:
$(tail -n 20 "$RUN/$name.log")"
		sleep 0.2
	done
}

etcd_healthy() { curl -fsS --max-time 2 "$1/health" 2>/dev/null | grep -q '"health":"true"'; }

cmd_start() {
	for b in etcd kube-apiserver kube-controller-manager; do
		[ -x "$BIN/$b" ] || die "$BIN/$b is not built: run '$0 build' (make realcluster-build) first"
	done
	for p in etcd kube-apiserver kube-controller-manager; do
		if alive "$RUN/$p.pid"; then die "already running ($p, pid $(cat "$RUN/$p.pid")): '$0 stop' first"; fi
	done
	command -v openssl >/dev/null || die "openssl is needed to make the certificates"
	command -v curl >/dev/null || die "curl is needed to wait for readiness"
	local t0=$SECONDS
	rm -rf "$RUN"
	mkdir -p "$RUN"
	# kube-apiserver advertises an address of the host (it refuses 127.0.0.1) and serves on
	# loopback only.
	local host_ip
	host_ip=$(hostname -I 2>/dev/null | awk '{print $1}')
	[ -n "$host_ip" ] || die "no host address: kube-apiserver advertises one (it refuses 127.0.0.1)"
	certs "$RUN/certs" "$host_ip"
	local etcd_port peer_port api_port
	etcd_port=$(free_port)
	peer_port=$(free_port)
	api_port=$(free_port)
	while [ "$peer_port" = "$etcd_port" ]; do peer_port=$(free_port); done
	while [ "$api_port" = "$etcd_port" ] || [ "$api_port" = "$peer_port" ]; do api_port=$(free_port); done
	local etcd_url=http://127.0.0.1:$etcd_port api_url=https://127.0.0.1:$api_port c=$RUN/certs

	"$BIN/etcd" --name realcluster --data-dir "$RUN/etcd-data" \
		--listen-client-urls "$etcd_url" --advertise-client-urls "$etcd_url" \
		--listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
		--initial-cluster "realcluster=http://127.0.0.1:$peer_port" --unsafe-no-fsync \
		>"$RUN/etcd.log" 2>&1 &
	echo $! >"$RUN/etcd.pid"
	wait_for etcd 60 etcd_healthy "$etcd_url"

	"$BIN/kube-apiserver" --etcd-servers "$etcd_url" --cert-dir "$c" \
		--bind-address 127.0.0.1 --secure-port "$api_port" \
		--tls-cert-file "$c/serving.crt" --tls-private-key-file "$c/serving.key" \
		--client-ca-file "$c/ca.crt" --authorization-mode RBAC \
		--service-account-issuer "$api_url" --service-account-key-file "$c/sa.pub" \
		--service-account-signing-key-file "$c/sa.key" \
		--service-cluster-ip-range 10.0.0.0/24 --allow-privileged=true \
		>"$RUN/kube-apiserver.log" 2>&1 &
	echo $! >"$RUN/kube-apiserver.pid"
	wait_for kube-apiserver 120 admin_get "$api_url/readyz"

	kubeconfig "$RUN/kubeconfig" "$api_url" "$c" admin
	kubeconfig "$RUN/controller-manager.kubeconfig" "$api_url" "$c" controller-manager
	"$BIN/kube-controller-manager" --kubeconfig "$RUN/controller-manager.kubeconfig" \
		--authentication-kubeconfig "$RUN/controller-manager.kubeconfig" \
		--authorization-kubeconfig "$RUN/controller-manager.kubeconfig" \
		--use-service-account-credentials=true --service-account-private-key-file "$c/sa.key" \
		--root-ca-file "$c/ca.crt" --cluster-signing-cert-file "$c/ca.crt" --cluster-signing-key-file "$c/ca.key" \
		--leader-elect=false --bind-address 127.0.0.1 --secure-port 0 \
		>"$RUN/kube-controller-manager.log" 2>&1 &
	echo $! >"$RUN/kube-controller-manager.pid"
	# Ready when its service-account controller has made default's account: it runs with the
	# accounts' own credentials, so this also shows the token path works.
	wait_for kube-controller-manager 60 admin_get "$api_url/api/v1/namespaces/default/serviceaccounts/default"
	cat >"$RUN/env" <<ENV
KUBECONFIG=$RUN/kubeconfig
REALCLUSTER_APISERVER=$api_url
REALCLUSTER_ETCD=$etcd_url
REALCLUSTER_CERTS=$c
ENV
	say "started in $((SECONDS - t0)) s: kube-apiserver $api_url, etcd $etcd_url (pids $(cat "$RUN/etcd.pid") $(cat "$RUN/kube-apiserver.pid") $(cat "$RUN/kube-controller-manager.pid")); then: export \$($0 env)"
}

# stop ends exactly the processes start recorded, the controller manager first, and waits for
# each (SIGTERM, SIGKILL after 10 s).
cmd_stop() {
	local any=0 p pid
	for p in kube-controller-manager kube-apiserver etcd; do
		[ -f "$RUN/$p.pid" ] || continue
		pid=$(cat "$RUN/$p.pid")
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid" 2>/dev/null || true
			for _ in $(seq 1 100); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
			say "stopped $p (pid $pid)"
			any=1
		fi
		rm -f "$RUN/$p.pid"
	done
	rm -f "$RUN/env"
	[ $any = 1 ] || say "nothing was running"
}

cmd_env() {
	[ -f "$RUN/env" ] && alive "$RUN/kube-apiserver.pid" || die "not running: '$0 start' first"
	cat "$RUN/env"
}

cmd_status() {
	local b
	for b in etcd kube-apiserver kube-controller-manager; do
		if [ -x "$BIN/$b" ]; then echo "built    $b ($BIN/$b)"; else echo "missing  $b"; fi
	done
	for b in etcd kube-apiserver kube-controller-manager; do
		if alive "$RUN/$b.pid"; then echo "running  $b (pid $(cat "$RUN/$b.pid"))"; fi
	done
}

case "${1:-}" in
build) cmd_build ;;
start) cmd_start ;;
stop) cmd_stop ;;
env) cmd_env ;;
status) cmd_status ;;
*) die "usage: $0 build|start|stop|env|status" ;;
esac
