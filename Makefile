# network-controller: every task a developer or CI runs. `make help` lists them.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := help

GO ?= go
# Go 1.27.3 (go.mod's go line) for every recipe and every script it runs: the
# go command fetches that toolchain from the module proxy when the machine's
# Go is older. A GOTOOLCHAIN set in the environment wins.
export GOTOOLCHAIN ?= go1.27.3
# Packages that need no running components: everything but the e2e suite.
UNIT_PKGS = $$($(GO) list ./... | grep -v -e /test/e2e -e /test/charts)

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} \
		/^[a-zA-Z0-9_-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } \
		/^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: codegen
codegen: ## Regenerate clients, listers, informers, apply configurations and deepcopy from pkg/apis.
	hack/update-codegen.sh

.PHONY: flags-doc
flags-doc: ## Regenerate docs/flags.md from the programs' --help.
	hack/update-flags-doc.sh

.PHONY: fmt
fmt: ## Format the Go code.
	gofmt -w $$(git ls-files '*.go' | grep -v '^pkg/generated/')

# The image's name and tag are set in one place: artifacts/deploy/kustomization.yaml.
IMAGE := $(shell awk '/newName:/ {n=$$2} /newTag:/ {t=$$2} END {print n ":" t}' artifacts/deploy/kustomization.yaml)

.PHONY: image-name
image-name: ## Print the image name and tag the deploy manifests use.
	@echo $(IMAGE)

# docker where a Docker engine answers, else podman (this project's CI and
# local stack have no Docker engine). CONTAINER_TOOL=... overrides it.
CONTAINER_TOOL ?= $(shell docker info >/dev/null 2>&1 && echo docker || echo podman)

.PHONY: container-tool
container-tool: ## Print the container tool `make image` uses.
	@echo $(CONTAINER_TOOL)

.PHONY: images
images: ## Build every image the local node runs into bin/images/ (hack/build-images.sh).
	hack/build-images.sh

.PHONY: image
image: build ## Build the image (name and tag from artifacts/deploy) with docker, or podman where no Docker engine runs.
	$(CONTAINER_TOOL) build -t $(IMAGE) .

##@ Testing

.PHONY: test
test: verify lint vulncheck unit charts monitoring e2e e2e-node soak-short check-docs ## Run everything CI runs: verification, the lint gate, govulncheck, unit tests, the charts, the alert rules, the e2e suite, a short fault soak and the docs' commands, against the real stack.

.PHONY: verify
verify: ## Check formatting, go vet, and that generated code is up to date.
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [[ -n "$$unformatted" ]]; then echo "gofmt needed: $$unformatted" >&2; exit 1; fi
	$(GO) vet ./...
	hack/verify-codegen.sh
	hack/update-flags-doc.sh --verify

.PHONY: lint
lint: ## Lint the root module and the course's modules with golangci-lint (.golangci.yml; version pinned in hack/lint/go.mod; hack/lint.sh).
	hack/lint.sh

.PHONY: vulncheck
vulncheck: ## Fail on any known vulnerability the code reaches (govulncheck, both modules), once a canary proves the database sees one, against a database built offline from the Go module proxy's golang.org/x/vulndb (hack/vulncheck.sh; versions in hack/tools/go.mod).
	hack/vulncheck.sh

.PHONY: unit
unit: ## Run the unit tests (no running components needed), those of the controller-runtime example (docs/learn/controller-runtime, a module of its own) and of each step of chapter 13 (docs/learn/build-your-own/step-*, a module each), follow chapter 13 from `go mod init` in an empty directory (hack/follow-build-your-own.sh), and fuzz the webhook and the templates for 50,000 inputs each (a count, not a time: a time limit that expires while a worker is starved of CPU fails with "context deadline exceeded").
	$(GO) test -race -count=1 $(UNIT_PKGS)
	$(GO) test -run '^$$' -fuzz '^FuzzReview$$' -fuzztime 50000x ./pkg/injector
	$(GO) test -run '^$$' -fuzz '^FuzzRender$$' -fuzztime 50000x ./pkg/injector
	cd docs/learn/controller-runtime && $(GO) vet ./... && $(GO) test -count=1 ./...
	for step in docs/learn/build-your-own/step-*/; do (cd "$$step" && $(GO) vet ./... && $(GO) test -count=1 ./...); done
	hack/follow-build-your-own.sh

.PHONY: charts
charts: ## Lint the Helm charts and check that they render what the kustomizations do (helm is built from Go modules).
	hack/build-controlplane.sh helm
	bin/helm lint --strict charts/network-controller charts/envoy-injector
	$(GO) test -count=1 ./test/charts

.PHONY: monitoring
monitoring: packages ## Check the Prometheus configuration and alert rules, and run the rules' tests (promtool test rules).
	promtool check rules artifacts/prometheus/rules.yaml
	cd artifacts/prometheus && promtool test rules rules_test.yaml
	@tmp=$$(mktemp -d) && sed -e "s#RULES#$$PWD/artifacts/prometheus/rules.yaml#" -e "s#TOKEN_FILE#$$tmp/token#" -e "s#TARGETS#$$tmp#" \
		-e "s#CA_FILE#$$tmp/ca.crt#" artifacts/prometheus/prometheus.yml >"$$tmp/prometheus.yml" && touch "$$tmp/token" "$$tmp/ca.crt" && \
		promtool check config "$$tmp/prometheus.yml"; status=$$?; rm -rf "$$tmp"; exit $$status

.PHONY: e2e
e2e: controlplane packages ## Run the e2e suite against real etcd, kube-apiserver and neutron-server.
	$(GO) test -count=1 -timeout 30m -v ./test/e2e/...

.PHONY: e2e-node
e2e-node: controlplane packages images ## Run the in-cluster e2e suite: the images as Pods on a real node, deployed by hack/deploy.sh (root).
	$(GO) test -count=1 -timeout 20m -v ./test/e2enode/...

N ?= 100
FAILOVER_N ?= 10
WORKERS ?= 8
BENCH_FLAGS ?=

.PHONY: bench
bench: controlplane packages ## Measure the controller on the real stack and print a table (N=100 WORKERS=8; BENCH_FLAGS="-raw-n 1000" for N=10000; BENCH_FLAGS="-fake-neutron" for N=100000 against the real API server and an in-memory Neutron).
	$(GO) run ./test/bench -n $(N) -workers $(WORKERS) $(BENCH_FLAGS)

SOAK_DURATION ?= 3m
SOAK_SEED ?= 1

.PHONY: soak
soak: controlplane packages ## Random Network workload in two namespaces under faults (controller kill, stop and freeze, Neutron chaos, neutron-server, Keystone, kube-apiserver, etcd, MariaDB and OVN NB restarts), the history checked during and after, then the invariant (SOAK_DURATION=3m SOAK_SEED=1).
	$(GO) run ./test/soak -duration $(SOAK_DURATION) -seed $(SOAK_SEED)

.PHONY: soak-short
soak-short: controlplane packages ## The soak of make test: 90 s, a fault 5 s after the last ended, seed 290 (a leader partition, a token revocation, a leader freeze and Neutron chaos first).
	$(GO) run ./test/soak -duration 90s -fault-every 5s -seed 290

INJECTOR_N ?= 500
CONCURRENCY ?= 1,8,32

.PHONY: bench-failover
bench-failover: controlplane packages ## Measure how long a standby takes to lead after the leader is killed or frozen, with the deployment's leader-election flags (FAILOVER_N=10 each).
	$(GO) run ./test/bench/failover -n $(FAILOVER_N)

.PHONY: bench-injector
bench-injector: controlplane ## Measure the webhook's admission latency through the real API server (INJECTOR_N=500 CONCURRENCY=1,8,32).
	$(GO) run ./test/bench/injector -n $(INJECTOR_N) -concurrency $(CONCURRENCY)

.PHONY: check-docs
check-docs: controlplane packages ## Run every sh block of README.md and docs/ on a local stack (hack/check-docs.sh).
	hack/check-docs.sh

##@ Local stack

# What `version` and --version print (pkg/component/command/version.go):
# component-base's version variables, stamped from git. The version must
# start vX.Y.Z, or component-base/metrics panics at start: without a tag,
# git describe's commit is a pre-release of v0.0.0. The date is the
# commit's, so that the binaries stay reproducible.
GIT_DESCRIBE := $(shell git describe --tags --always --dirty 2>/dev/null)
GIT_VERSION ?= $(if $(filter v%,$(GIT_DESCRIBE)),$(GIT_DESCRIBE),v0.0.0-$(or $(GIT_DESCRIBE),unknown))
GIT_COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
GIT_TREE_STATE ?= $(if $(filter %-dirty,$(GIT_DESCRIBE)),dirty,clean)
BUILD_DATE ?= $(shell TZ=UTC git show -s --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ HEAD 2>/dev/null)
VERSION_PKG := k8s.io/component-base/version
LDFLAGS := -s -w -buildid= -X $(VERSION_PKG).gitVersion=$(GIT_VERSION) -X $(VERSION_PKG).gitCommit=$(GIT_COMMIT) \
	-X $(VERSION_PKG).gitTreeState=$(GIT_TREE_STATE) -X $(VERSION_PKG).buildDate=$(BUILD_DATE)

.PHONY: build
build: ## Build the controller and the webhook into bin/, stamped with git describe and the commit (the Dockerfile copies them).
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags="$(LDFLAGS)" -o bin/network-controller .
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags="$(LDFLAGS)" -o bin/envoy-injector ./cmd/envoy-injector

.PHONY: run
run: up build ## Bring up the local stack, run the controller on it with the CRD's conversion webhook (hack/local-run.sh), and apply the example Network (Ctrl-C stops the controller).
	hack/local-run.sh

.PHONY: up
up: ## Start the local stack in the background (hack/local-up.sh).
	hack/local-up.sh

.PHONY: deploy
deploy: ## After make up: build the images, load them into the node, install both charts (hack/deploy.sh).
	hack/deploy.sh

.PHONY: down
down: ## Stop the local stack and remove its data (hack/local-down.sh).
	hack/local-down.sh

##@ Dependencies

.PHONY: controlplane
controlplane: ## Build etcd, kube-apiserver, the node's components and helm from Go modules into bin/ (only when missing or stale).
	hack/build-controlplane.sh

.PHONY: packages
packages: ## Install the stack's Debian packages: OVN, neutron-server, MariaDB, containerd, CNI plugins, podman (root; only when missing).
	hack/install-packages.sh

.PHONY: clean
clean: ## Remove build output (bin/) and the local stack.
	-hack/local-down.sh
	rm -rf bin
