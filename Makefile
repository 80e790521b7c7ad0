# informersim: every target works offline once modules are downloaded (go mod download).
GO ?= go
# Packages with a goroutine driver (or a goroutine adapter): these also run under -race.
RACE_PKGS ?= ./informer/... ./fakeapi/...
SEED ?= 1

.PHONY: all test test-unit test-plain test-race test-nested test-seeded test-kubebuilder envtest-assets chromium verify demo course bench sim fuzz fuzz-rest fuzz-scenarios fuzz-controller fuzz-corpus fuzz-samplecontroller rewrite compare realcluster-build realcluster realcluster-stop compare-real

all: test

## test: verify, then every test, then -race on the packages with a goroutine driver and on
## worlds run in parallel goroutines (a parallel seed sweep), then the nested modules that use
## client-go (clientgo/, examples/).
test: verify test-unit test-plain test-race test-nested test-seeded

test-unit:
	$(GO) test ./...

## test-plain: the plain build (-tags plain, internal/fastpath): every speed trick takes the
## standard code beside it, and the runs must not move: the main module's tests (sim's and
## sim/world's pinned trace hashes), kube's, and in clientgo the packages and tests that hold
## its tricks (the read-only check's snapshots) with the harness runs' pinned hashes
## (TestPinnedHarnessHashes). Not clientgo's whole suite again: its other tests reach the same
## tricks, and it would add about four minutes to a cold make test.
test-plain:
	$(GO) test -tags plain ./...
	cd kube && $(GO) test -tags plain ./...
	cd clientgo && $(GO) test -tags plain ./internal/... && \
		$(GO) test -tags plain -run 'TestPinnedHarnessHashes|TestReadOnly|TestRelistedVersions|TestHarness' .

test-race:
	$(GO) test -race $(RACE_PKGS)
	$(GO) test -race -run 'TestWorldsRunInParallel' ./sim/world

## test-nested: the nested modules: kube/ (what needs k8s.io/api: the REST front's protobuf
## codec and patchers), cmd/informersim (the command; then its serve and envtest-assets' stand-ins,
## built with -tags serve, the only part that links kube/), compare/ (client-go's
## informer beside ours, the fidelity check), clientgo/ (typed clients, client-go's informers,
## controller-runtime and kubectl over the REST front; client-go controllers inside the world)
## and examples/ (a sample-controller tested with it), realapi/ without a real control plane (its
## generator and comparison, informersim against itself, the speed tricks against the standard
## code on every request of the differential suite), and examples/kubebuilder's envtest suites on
## informersim's envtest stand-ins (test-kubebuilder); then browser/ (the run record against
## its JSON Schema, the timelines and the course site in headless Chromium; screenshots in
## browser/artifacts/). clientgo's harness couples goroutines to the world, so its tests also
## run under -race.
test-nested:
	cd kube && $(GO) vet ./... && $(GO) test ./...
	cd cmd/informersim && $(GO) vet ./... && $(GO) test ./...
	cd cmd/informersim && $(GO) vet -tags serve ./... && $(GO) test -tags serve -run 'Serve|EnvtestAssets|StandIn' ./...
	cd compare && $(GO) vet ./... && $(GO) test ./...
	cd clientgo && $(GO) vet ./... && $(GO) test ./...
	cd clientgo && $(GO) test -race -run 'TestHarness|TestRunBadInput|TestRestartUnderNew' .
	cd examples && $(GO) vet ./... && $(GO) test ./...
	cd realapi && $(GO) vet ./... && $(GO) test -skip '^TestAgainstRealControlPlane$$' ./...
	$(MAKE) test-kubebuilder
	$(MAKE) chromium
	cd browser && $(GO) vet ./... && CHROMIUM=$(CHROMIUM) $(GO) test -count=1 ./...

## envtest-assets: build informersim with the serve tag and print the directory controller-runtime's
## envtest takes in KUBEBUILDER_ASSETS (its kube-apiserver and etcd stand-ins, the machine's
## kubectl; kept in the user's cache directory): KUBEBUILDER_ASSETS=$$(make -s envtest-assets).
## SERVE_TAGS=serve,plain builds the stand-ins without the speed tricks (internal/fastpath).
SERVE_TAGS ?= serve
envtest-assets:
	@cd cmd/informersim && $(GO) build -tags $(SERVE_TAGS) -o ../../.informersim-serve . && \
		../../.informersim-serve envtest-assets; status=$$?; rm -f ../../.informersim-serve; exit $$status

## test-kubebuilder: examples/kubebuilder, an operator as kubebuilder v4 scaffolds it, its envtest
## suites unchanged, with KUBEBUILDER_ASSETS pointing at informersim's stand-ins (no etcd or
## kube-apiserver needed on the machine); prints the assets' directory and each suite's time.
test-kubebuilder:
	assets=$$($(MAKE) -s --no-print-directory envtest-assets) && echo "KUBEBUILDER_ASSETS=$$assets" && \
		cd examples/kubebuilder && $(GO) vet ./... && KUBEBUILDER_ASSETS=$$assets $(GO) test -count=1 ./...

## test-seeded: the deterministic mode (docs/determinism.md): the overlay of the Go runtime that
## `informersim determinism` writes for this Go, then the tests that hold the mode to its promise,
## built in it: client-go's resync order and an order-dependent bug decided by the seed
## (clientgo), sample-controller's main and the operator's manager replaying from their seeds at
## GOMAXPROCS 1 and 2 and alone in a new process, a lister mutation under main.go caught as a
## violation (examples). SEEDED_SEEDS sizes the examples' sweeps (10 by default). The first build
## in the mode compiles the standard library and every dependency again.
SEEDED_SEEDS ?= 10
test-seeded:
	cd cmd/informersim && $(GO) build -o ../../.informersim-seeded .
	env $$(./.informersim-seeded determinism) sh -c 'cd clientgo && $(GO) test -count=1 -run "Seeded" . && \
		cd ../examples && INFORMERSIM_SEEDED_SEEDS=$(SEEDED_SEEDS) $(GO) test -count=1 -run "Seeded" ./samplecontroller ./operator'
	rm -f .informersim-seeded

## chromium: the browser test (browser/: the timeline and the course site in a real headless
## Chromium) needs Debian's chromium. Installed when missing and possible (root with apt-get);
## otherwise this fails with the command that installs it: the browser test never skips.
CHROMIUM ?= /usr/bin/chromium
chromium:
	@if [ ! -x "$(CHROMIUM)" ]; then \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
			echo "make: installing chromium for the browser test (apt-get install -y chromium)"; \
			apt-get install -y -qq chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } || \
				{ echo "make: apt-get install -y chromium failed; the browser test needs it" >&2; exit 1; }; \
			[ -x "$(CHROMIUM)" ] || { echo "make: chromium is installed but $(CHROMIUM) is not there; set CHROMIUM" >&2; exit 1; }; \
		else \
			echo "make: the browser test needs Chromium at $(CHROMIUM); install it with: sudo apt-get install -y chromium (or set CHROMIUM=/path/to/chromium)" >&2; exit 1; \
		fi; \
	fi

## verify: gofmt, vet, mod tidy, the import graph, the determinism ban list, the doc citations
## (scripts/doccite.go) and every subcommand, package and document listed (scripts/doclist.go).
verify:
	./scripts/verify.sh

## demo: the main job: one course scenario end to end, its concept then its narrated run
## (SCENARIO=name picks another; informersim list prints the course).
SCENARIO ?= 24-controller
demo:
	cd cmd/informersim && $(GO) run . explain $(SCENARIO)

## course: the course as a site in COURSE_DIR: one page per lesson (concept, pipeline, timeline,
## narrated run) and an index.
COURSE_DIR ?= course-site
course:
	cd cmd/informersim && $(GO) run . course --html $(abspath $(COURSE_DIR))

## sim: run the demo's scenario for a chosen seed, e.g. make sim SEED=42.
sim:
	cd cmd/informersim && $(GO) run . run $(SCENARIO) --seed $(SEED)

## rewrite: regenerate every expected block of the scenario files (datadriven's -rewrite);
## review the diff before committing it.
rewrite:
	$(GO) test ./scenarios -run '^TestCourse' -count=1 -rewrite

## bench: every benchmark of the main module, once, with allocation figures; then the end-to-end
## comparison of compare/ (client-go's informer, the goroutine driver and the world on the same
## fake apiserver, and the writer alone, BENCHCOUNT runs each) and its tables of ratios, end to
## end and of each host's own cost; then the REST front's LIST and watched updates next to
## client-go's fake clientset and the harness sweep at GOMAXPROCS=1 and 2, and their table
## (scripts/benchratio.go; docs/performance-rest.md); then a run of examples/samplecontroller in
## the harness next to the same controller and workload on client-go's fake clientsets, and its
## sweep wired as its main.go at GOMAXPROCS=1 and 2.
BENCHCOUNT ?= 3
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...
	cd compare && $(GO) test -run='^$$' -bench=EndToEnd -benchmem -count=$(BENCHCOUNT) . >endtoend.out; \
		status=$$?; $(GO) run ../scripts/benchratio.go <endtoend.out; ratio=$$?; rm -f endtoend.out; \
		test $$status -eq 0 && test $$ratio -eq 0
	cd clientgo && $(GO) test -c -o rest-bench.test . && \
		{ ./rest-bench.test -test.run='^$$' -test.bench='^BenchmarkList10000Pods$$' -test.benchmem -test.benchtime=3x && \
		  ./rest-bench.test -test.run='^$$' -test.bench='WatchedUpdate' -test.benchmem -test.benchtime=2000x && \
		  GOMAXPROCS=1 ./rest-bench.test -test.run='^$$' -test.bench=HarnessSweep -test.benchtime=20x && \
		  GOMAXPROCS=2 ./rest-bench.test -test.run='^$$' -test.bench=HarnessSweep -test.benchtime=20x; } 2>/dev/null >rest.out; \
		status=$$?; $(GO) run ../scripts/benchratio.go <rest.out; ratio=$$?; rm -f rest.out rest-bench.test; \
		test $$status -eq 0 && test $$ratio -eq 0
	@echo "examples/samplecontroller: a run in the harness and on client-go's fakes; its sweep wired as its main.go, in a binary without controller-runtime:"
	cd examples && $(GO) test -c -o sc-bench.test ./samplecontroller/ && \
		{ ./sc-bench.test -test.run='^$$' -test.bench='HarnessRun$$|FakeClientsetRun' -test.benchmem -test.benchtime=20x && \
		  GOMAXPROCS=1 ./sc-bench.test -test.run='^$$' -test.bench=HarnessSweep -test.benchtime=20x && \
		  GOMAXPROCS=2 ./sc-bench.test -test.run='^$$' -test.bench=HarnessSweep -test.benchtime=20x; } 2>/dev/null >sweep.out; \
		status=$$?; $(GO) run ../scripts/benchratio.go <sweep.out; ratio=$$?; rm -f sweep.out sc-bench.test; \
		test $$status -eq 0 && test $$ratio -eq 0

## fuzz: fuzz the fake apiserver's list/watch options and object metadata (FUZZTIME=30s).
FUZZTIME ?= 30s
PLANT ?=
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzListWatchOptions -fuzztime=$(FUZZTIME) ./fakeapi/

## fuzz-rest: fuzz the REST front with arbitrary methods, paths, queries and bodies, then its
## strategic merge patches, server-side applies and managedFields writes (kube/'s FuzzWrites) and
## its protobuf bodies, Accept headers and watches (kube/'s FuzzProtobuf).
fuzz-rest:
	$(GO) test -run='^$$' -fuzz=FuzzHandler -fuzztime=$(FUZZTIME) ./fakeapi/rest/
	cd kube && $(GO) test -run='^$$' -fuzz=FuzzWrites -fuzztime=$(FUZZTIME) -parallel=1 .
	cd kube && $(GO) test -run='^$$' -fuzz=FuzzProtobuf -fuzztime=$(FUZZTIME) -parallel=1 .

## fuzz-scenarios: fuzz the scenario language's directive parser, then whole runs of files
## strung from directives that may not fit the scenario (FUZZTIME=30s each).
fuzz-scenarios:
	$(GO) test -run='^$$' -fuzz=FuzzParseDirective -fuzztime=$(FUZZTIME) ./scenarios/
	$(GO) test -run='^$$' -fuzz=FuzzRun -fuzztime=$(FUZZTIME) ./scenarios/

## fuzz-controller: fuzz scenarios' example of a user's controller (FuzzUserController) with a
## bug planted (PLANT=tombstone, mutate or stale-read; none by default): a failing input is
## written out as an ops file and shrunk (docs/fuzzing.md). Go's minimization is off: the
## shrinker shrinks the ops, and minimized interesting inputs reach fewer hazards.
fuzz-controller:
	INFORMERSIM_PLANT=$(PLANT) $(GO) test -run='^$$' -fuzz=FuzzUserController -fuzztime=$(FUZZTIME) -fuzzminimizetime=0x -parallel=1 ./scenarios/

## fuzz-corpus: rewrite FuzzUserController's corpus (testdata/fuzz/FuzzUserController): for
## each hazard its world can reach, the shortest input of a fixed random series reaching it that
## a fault kind appended to the op table leaves unchanged. Only needed when the decoding of
## world.Fuzz changes (adding a kind does not change it: docs/fuzzing.md).
fuzz-corpus:
	INFORMERSIM_WRITE_CORPUS=write $(GO) test -count=1 -run='^TestFuzzCorpusReachesEveryHazard$$' ./scenarios/

## fuzz-samplecontroller: fuzz sample-controller through the client-go harness
## (FuzzSampleController) with a bug planted (PLANT=tombstone or mutate; none by default); a
## failing input is written out as an ops file and shrunk (docs/fuzzing.md §8).
fuzz-samplecontroller:
	cd examples && INFORMERSIM_PLANT=$(PLANT) $(GO) test -run='^$$' -fuzz=FuzzSampleController -fuzztime=$(FUZZTIME) -fuzzminimizetime=0x -parallel=1 ./samplecontroller/

## compare: the nested compare/ module: client-go's informer beside ours on the same inputs
## (differential test, then side-by-side benchmarks). It downloads client-go on first use.
compare:
	cd compare && $(GO) test -count=1 ./...
	cd compare && $(GO) test -run='^$$' -bench=. -benchmem ./...

## realcluster-build: a real etcd v3.7.3, kube-apiserver and kube-controller-manager v1.37.2,
## built from the Go module proxy into ~/.cache/informersim/realcluster/v1.37.2/bin (skipping
## what exists; about 26 minutes cold on 2 cores): scripts/realcluster.sh, docs/realcluster.md.
## Never part of `make test`.
realcluster-build:
	nice -n 19 ./scripts/realcluster.sh build

## realcluster: build if needed, then start the control plane on loopback (certificates, RBAC,
## a kubeconfig); `eval export $$(scripts/realcluster.sh env)` points kubectl at it;
## realcluster-stop stops exactly what it started.
realcluster: realcluster-build
	./scripts/realcluster.sh start
	./scripts/realcluster.sh env

realcluster-stop:
	./scripts/realcluster.sh stop

## compare-real: the differential suite (realapi/): 510 seeded request sequences on the real
## control plane and on informersim, every difference either listed in docs/realcluster.md or a
## failure. It starts and stops the control plane itself unless REALCLUSTER_ETCD and KUBECONFIG
## name a running one, and skips, saying so, when the binaries are not built.
## REALAPI_SEQUENCES=n and REALAPI_SEED=n change the draw; REALAPI_ONLY=REGEXP keeps the sequences
## whose names match (list#477, ^watchlist#); REALAPI_REPORT=FILE writes every difference.
compare-real:
	cd realapi && $(GO) vet ./... && $(GO) test -count=1 -v -timeout 60m ./...
