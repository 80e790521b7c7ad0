# informersim: every target works offline once modules are downloaded (go mod download).
GO ?= go
# Packages with a goroutine driver (or a goroutine adapter): these also run under -race.
RACE_PKGS ?= ./informer/... ./fakeapi/...
SEED ?= 1

.PHONY: all test test-unit test-race verify demo bench sim

all: test

## test: verify, then every test, then -race on the packages with a goroutine driver.
test: verify test-unit test-race

test-unit:
	$(GO) test ./...

test-race:
	$(GO) test -race $(RACE_PKGS)

## verify: gofmt, vet, mod tidy, the import graph and the determinism ban list.
verify:
	./scripts/verify.sh

## demo: the main job: a short simulation with its narrated trace.
demo:
	$(GO) run ./cmd/informersim demo -seed=$(SEED)

## sim: run the demo for a chosen seed, e.g. make sim SEED=42.
sim: demo

## bench: every benchmark, once, with allocation figures.
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...
