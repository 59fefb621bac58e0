# The front door: `make help` lists the targets.

GO        ?= go
BIN       := bin
IMAGE     ?= demo-task:latest
RUN_FLAGS ?=
GOLANGCI  := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
GOVULN    := golang.org/x/vuln/cmd/govulncheck@v1.9.0
# The image registry of `make registry` and of the tests (internal/registrytest).
REGISTRY  := github.com/distribution/distribution/v3/cmd/registry@v3.1.2
REGISTRY_DIR ?= .registry

.DEFAULT_GOAL := help
.PHONY: help build run test prop test-short lint vuln image registry registry-bin clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build replication-manager, rcctl and demo-task into bin/
	CGO_ENABLED=0 $(GO) build -o $(BIN)/ ./cmd/replication-manager ./cmd/rcctl ./cmd/demo-task

image: ## build the demo workload image (demo-task:latest, or IMAGE=...) FROM scratch
	scripts/build-image.sh $(IMAGE)

run: build image ## start the daemon with its embedded etcd against the local Docker
	$(BIN)/replication-manager $(RUN_FLAGS)

test: registry-bin ## run every test with the race detector (real etcd, real Docker)
	RM_TEST_REGISTRY=$(abspath $(BIN))/registry $(GO) test -race -count=1 -parallel 4 -timeout 15m ./...

prop: ## the property tests, long: 200,000 decide histories and 2,000 cluster histories (make test runs them briefly), side by side
	$(MAKE) -j3 --output-sync=target prop-decide $(PROP_CLUSTER_RUNS)

PROP_DECIDE_CHECKS ?= 200000
# The cluster histories run as two processes of 1,000 histories each, with
# seeds of their own: a history waits on etcd round trips, and one process
# leaves a core idle.
PROP_CLUSTER_RUNS := prop-cluster-1 prop-cluster-2
.PHONY: prop-decide prop-cluster $(PROP_CLUSTER_RUNS)
# The decide property test makes much short-lived garbage: with GOGC=400 it
# takes about half the CPU it takes with the default.
prop-decide:
	GOGC=400 $(GO) test -count=1 -timeout 30m -run 'TestDecideKeepsTheBoundsOverRandomHistories' ./registry/decide -rapid.checks=$(PROP_DECIDE_CHECKS)
prop-cluster:
	$(MAKE) -j2 --output-sync=target $(PROP_CLUSTER_RUNS)
$(PROP_CLUSTER_RUNS):
	$(GO) test -count=1 -timeout 30m -run 'TestClusterKeepsTheBoundsOverRandomHistories' ./registry/agent -rapid.checks=1000

test-short: ## every test but the end-to-end ones (e2e/), with the race detector
	$(GO) test -race -count=1 -short ./...

lint: ## gofmt, go vet and golangci-lint
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(GOLANGCI) run ./...

vuln: ## check dependencies for known vulnerabilities
	$(GO) run $(GOVULN) ./...

registry: registry-bin ## run an image registry (distribution v3) on 127.0.0.1:5000, storage in .registry/ (or REGISTRY_DIR=...)
	REGISTRY_STORAGE_FILESYSTEM_ROOTDIRECTORY=$(abspath $(REGISTRY_DIR)) exec $(abspath $(BIN))/registry serve scripts/registry/config.yml

# The registry's binary, for `make registry` and the tests that pull (make
# test hands it to them in RM_TEST_REGISTRY): built before the tests start,
# since a first build downloads and compiles the registry's modules, which
# on a new machine beside the whole suite outlasted a test's timeout.
registry-bin:
	GOBIN=$(abspath $(BIN)) CGO_ENABLED=0 GOFLAGS= $(GO) install $(REGISTRY)

clean: ## remove build output (not the etcd data dir)
	rm -rf $(BIN)

# The docker-compose lab (scripts/lab, docs/LAB.md): etcd and the manager in
# containers built FROM scratch here, managing this host's Docker.
.PHONY: lab-up lab-ha lab-down test-lab

lab-up: ## start the lab (etcd, one manager; mounts the Docker socket) and seed lab-web
	scripts/lab/lab.sh up

lab-ha: ## start the HA lab: three etcd members, two managers with leader election
	scripts/lab/lab.sh ha

lab-down: ## remove everything the lab created (containers, network, volumes; not the images)
	scripts/lab/lab.sh down

test-lab: ## smoke-test the lab: scale, kill the leading manager, check the count holds, tear down
	scripts/lab/lab.sh smoke

# The benchmarks of docs/BENCHMARKS.md. `make bench` runs the Go benchmarks of
# the control plane (registry/...: one host at 10,000 controllers x 10 on the
# in-memory fake, the scheduler over 100 simulated nodes, the hot paths) into
# bench-results/<commit>.txt and summarises them with benchstat; BENCH_BASE=<an
# earlier results file> compares against it. RM_BENCH_CONTROLLERS=100 (and the
# other RM_BENCH_* of registry/roles/hostbench_test.go) shrinks the scale, e.g.
# make bench RM_BENCH_CONTROLLERS=100 BENCH=Host BENCH_TIME=1x.
# `make bench-docker` is the side-by-side against raw Docker and Swarm
# (cmd/rm-bench); BENCH_FLAGS passes its flags, e.g. BENCH_FLAGS=--help.
.PHONY: bench bench-docker
BENCH ?= .
BENCH_TIME ?= 1s
BENCH_COUNT ?= 1
BENCH_BASE ?=
BENCH_FLAGS ?=
BENCHSTAT ?= golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da

bench: ## the control plane's Go benchmarks into bench-results/<commit>.txt, summarised by benchstat (BENCH_BASE=<file> compares)
	@mkdir -p bench-results
	@out=bench-results/$$(git rev-parse --short HEAD)$$(git diff --quiet HEAD || echo -dirty).txt; \
	{ $(GO) test ./registry/... -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCH_TIME) -count $(BENCH_COUNT) -timeout 120m; \
	  echo $$? >$$out.rc; } | tee $$out; \
	rc=$$(cat $$out.rc); rm -f $$out.rc; [ "$$rc" = 0 ] || exit $$rc; \
	$(GO) run $(BENCHSTAT) $(BENCH_BASE) $$out

bench-docker: build ## the manager side by side with raw Docker and Swarm (cmd/rm-bench): a table, and every sample in bench-results/
	CGO_ENABLED=0 $(GO) build -o $(BIN)/ ./cmd/rm-bench
	$(BIN)/rm-bench --bin-dir $(BIN) --command "make bench-docker$(if $(BENCH_FLAGS), BENCH_FLAGS='$(BENCH_FLAGS)')" $(BENCH_FLAGS)

# Two nodes on this machine (docs/CONTRACT.md, Nodes, scripts/multi/multi.sh): a real etcd built
# from the module, a manager on this host's Docker (node a) and one on a second dockerd with a
# bridge of its own (node b). Everything it starts lives in .multi/.
.PHONY: multi-up multi-down

multi-up: ## start etcd, a second dockerd and a manager per engine (nodes a and b) in .multi/
	scripts/multi/multi.sh up

multi-down: ## delete their controllers and containers, stop it all, remove .multi/
	scripts/multi/multi.sh down
