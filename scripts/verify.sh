#!/usr/bin/env bash
# verify.sh: the checks `make verify` runs before any test. Each check prints what it found and
# the script exits non-zero if any check failed, so one run shows every problem at once.
#
#   1. gofmt: every Go file is formatted.
#   2. go vet on the whole module.
#   3. go mod tidy leaves go.mod and go.sum unchanged, in the main module and every nested one.
#   4. The import graph of docs/design.md: fakeapi and informer are siblings (neither imports
#      the other) and never import sim or sim/world; the engine (sim, without its subpackages)
#      imports nothing of the project but internal/ and no Kubernetes package but the clock
#      (k8s.io/utils/clock); sim/world may import sim, fakeapi and informer; nothing imports
#      scenarios but its own tests, cmd/ and the root suite (the layers above it; a run's record,
#      timeline/record, sits below scenarios: worldtest and scenarios draw with it). Checked with
#      `go list -deps`, tests included
#      (the engine's Kubernetes rule on its non-test build). The nested modules (kube/,
#      cmd/informersim/, compare/, clientgo/, examples/, browser/, realapi/) are outside `./...`: the
#      only places k8s.io/api and client-go may appear; `make test-nested` vets and tests them.
#   5. A ban on wall clock, global randomness and goroutines on the simulation path. A line may be
#      exempted with a `determinism:allow <reason>` comment; the goroutine driver of informer lives
#      in files named *_run.go, the only non-test informer files allowed to start goroutines.
#      fakeapi/rest (the HTTP front) may start goroutines too: it serves concurrent HTTP clients
#      (an in-process transport goroutine per request, the listener's serve loop) and is not on
#      the simulation path, which check 4 enforces (nothing on that path imports it). The wall
#      clock and global randomness stay banned there: it reads time from the fakeapi's clock.
#   6. Every citation of docs/ in the repository resolves (scripts/doccite.go), and nothing
#      points outside the repository.
#   7. Every subcommand, package and document is listed where the docs list them
#      (scripts/doclist.go): the README's command table and the usage, docs/design.md's
#      Layout, docs/README.md.
#   8. The code's shape (scripts/shape.go): no function over 100 lines but its tables, no
#      type of the clientgo harness with over 20 methods, and clientgo.Config and Report with
#      at most 10 top-level fields each.
set -u
cd "$(dirname "$0")/.."
module=$(go list -m)
failed=0
fail() { printf 'verify: %s\n' "$*" >&2; failed=1; }

# 1. gofmt
unformatted=$(gofmt -l $(git ls-files --cached --others --exclude-standard '*.go' | grep -v '^compare/') 2>&1)
[ -z "$unformatted" ] || fail "gofmt would change: $unformatted"

# 2. go vet
go vet ./... || fail "go vet reported problems"

# 3. go mod tidy must be a no-op (checked on copies so a failing run changes nothing).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp go.mod "$tmp/go.mod"; cp go.sum "$tmp/go.sum" 2>/dev/null || : > "$tmp/go.sum"
if go mod tidy >/dev/null 2>&1; then
	if ! cmp -s go.mod "$tmp/go.mod" || ! cmp -s go.sum "$tmp/go.sum"; then
		fail "go mod tidy changes go.mod or go.sum; run it and commit the result"
	fi
else
	fail "go mod tidy failed"
fi
cp "$tmp/go.mod" go.mod; cp "$tmp/go.sum" go.sum

# 3b. the same for every nested module: one that imports a main-module package whose imports grew
# (clientgo importing scenarios, say) needs go.sum lines it does not have, and only its own
# go vet would say so, late. go mod tidy -diff changes nothing.
for mod in kube cmd/informersim compare clientgo examples examples/kubebuilder browser realapi; do
	(cd "$mod" && go mod tidy -diff >/dev/null 2>&1) ||
		fail "go mod tidy changes $mod/go.mod or go.sum; run it there and commit the result"
done

# 4. import graph
deps_of() { go list -test -deps "$@" 2>/dev/null; }
forbid() { # forbid <importer pattern> <forbidden package> <why>
	local pkgs
	pkgs=$(go list "$1" 2>/dev/null) || return 0
	[ -n "$pkgs" ] || return 0
	if deps_of $pkgs | grep -qx "$2"; then
		fail "$1 imports $2 ($3)"
	fi
}
forbid "./fakeapi/..." "$module/informer" "fakeapi and informer are siblings"
forbid "./informer/..." "$module/fakeapi" "fakeapi and informer are siblings"
for p in "./informer/..." "./fakeapi/..."; do
	forbid "$p" "$module/sim" "informer and fakeapi never import the engine"
	forbid "$p" "$module/sim/world" "informer and fakeapi never import the world"
done
for dep in fakeapi informer sim/world; do
	forbid "./sim" "$module/$dep" "the engine imports nothing of the project but internal/"
done
if engine_k8s=$(go list -deps ./sim 2>/dev/null | grep -E '^k8s\.io/' | grep -v -E '^k8s\.io/utils/clock(/testing)?$'); [ -n "$engine_k8s" ]; then
	fail "sim imports Kubernetes packages besides the clock: $engine_k8s"
fi
forbid "./sim/..." "$module/scenarios" "sim never imports scenarios"
for dep in informer sim sim/world scenarios fakeapi/rest; do
	forbid "./controlplane/..." "$module/$dep" "the control plane imports fakeapi only"
done
forbid "./timeline/..." "$module/scenarios" "a run's record sits below the scenario language"
for path in ./sim/... ./informer/... ./scenarios/...; do
	forbid "$path" "$module/fakeapi/rest" "the REST front is not on the simulation path"
done
for pkg in $(go list ./fakeapi/... 2>/dev/null | grep -v "^$module/fakeapi/rest"); do
	forbid "$pkg" "$module/fakeapi/rest" "the fakeapi core does not depend on its REST front"
done
for pkg in $(go list ./... | grep -v -e "/cmd/" -e "/scenarios" -e "^$module\$"); do
	if deps_of "$pkg" | grep -q "^$module/scenarios"; then
		fail "$pkg imports scenarios (only cmd/ and the root suite, the layers above it, may)"
	fi
done

# 5. determinism ban list on the simulation path (non-test files)
sim_path=$(git ls-files --cached --others --exclude-standard 'sim/*.go' 'fakeapi/*.go' 'informer/*.go' 'scenarios/*.go' 'controlplane/*.go' \
	'sim/**/*.go' 'fakeapi/**/*.go' 'informer/**/*.go' 'scenarios/**/*.go' 'timeline/*.go' 'timeline/**/*.go' | grep -v '_test\.go$' | sort -u)
if [ -n "$sim_path" ]; then
	banned='time\.(Now|Sleep|Since|Until|After|AfterFunc|NewTimer|NewTicker|Tick)\(|"math/rand"|"crypto/rand"|\brand\.(Int|IntN|N|Int32|Int32N|Int64|Int64N|Uint|UintN|Uint32|Uint32N|Uint64|Uint64N|Float32|Float64|Perm|Shuffle|NormFloat64|ExpFloat64)\('
	hits=$(grep -n -E "$banned" $sim_path | grep -v 'determinism:allow')
	[ -z "$hits" ] || fail "wall clock or global randomness on the simulation path:
$hits"
	gofiles=$(printf '%s\n' $sim_path | grep -v -E '(^(informer|controlplane)/.*_run\.go$)|(^fakeapi/rest/)')
	hits=$(grep -n -E '(^|[[:space:];{(])go (func\b|[A-Za-z_][A-Za-z0-9_.]*\()' $gofiles | grep -v -E '^[^:]+:[0-9]+:\s*//' | grep -v 'determinism:allow')
	[ -z "$hits" ] || fail "goroutine started on the simulation path (only informer/*_run.go may):
$hits"
fi

# 6. doc citations
go run scripts/doccite.go >"$tmp/doccite" 2>&1 || fail "dangling doc citations:
$(cat "$tmp/doccite")"

# 7. every subcommand, package and document listed
go run scripts/doclist.go >"$tmp/doclist" 2>&1 || fail "not listed where the docs list them:
$(cat "$tmp/doclist")"

# 8. the code's shape: no function over 100 lines but tables, no type of the clientgo harness
# with over 20 methods, clientgo.Config and Report with at most 10 top-level fields each
go run scripts/shape.go >"$tmp/shape" 2>&1 || fail "over the shape's limits:
$(cat "$tmp/shape")"

[ "$failed" = 0 ] && echo "verify: ok"
exit "$failed"
