# The front door: `make help` lists the targets.

GO        ?= go
BIN       := bin
IMAGE     ?= demo-task:latest
RUN_FLAGS ?=
GOLANGCI  := github.com/golangci/golangci-lint/v2/cmd/golangci-lint@v2.15.0
GOVULN    := golang.org/x/vuln/cmd/govulncheck@v1.9.0

.DEFAULT_GOAL := help
.PHONY: help build run test test-short lint vuln image clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build replication-manager, rcctl and demo-task into bin/
	CGO_ENABLED=0 $(GO) build -o $(BIN)/ ./cmd/replication-manager ./cmd/rcctl ./cmd/demo-task

image: ## build the demo workload image ($(IMAGE)) FROM scratch
	scripts/build-image.sh $(IMAGE)

run: build image ## start the daemon with its embedded etcd against the local Docker
	$(BIN)/replication-manager $(RUN_FLAGS)

test: ## run every test with the race detector (real etcd, real Docker)
	$(GO) test -race -count=1 -timeout 15m ./...

test-short: ## run the tests that need neither Docker nor much time
	$(GO) test -race -count=1 -short ./...

lint: ## gofmt, go vet and golangci-lint
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(GOLANGCI) run ./...

vuln: ## check dependencies for known vulnerabilities
	$(GO) run $(GOVULN) ./...

clean: ## remove build output (not the etcd data dir)
	rm -rf $(BIN)
