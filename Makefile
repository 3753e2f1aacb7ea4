# The README's test command is `make test`. CI runs it with PLASMA_E2E=1,
# under which a test that would skip for a missing tool fails instead.
GO ?= go
FUZZTIME ?= 5s

.PHONY: build test test-sdk test-launchr-fuzz test-launchr vet fmt fuzz bench

# Both binaries into $(BINDIR), stamped with the checkout's version (its
# tag, else Go's pseudo-version of the commit, +dirty with uncommitted
# changes), the commit and the commit's date: `version -o json` and the
# API's health show them. -buildvcs=true wins over a GOFLAGS that turns
# stamping off (.ci/run's does).
BINDIR ?= bin
build:
	$(GO) build -buildvcs=true -o $(BINDIR)/ ./cmd/plasma-node ./cmd/node-provisioner

# The SDK's tests run beside the plasmactl plugin's and then the fuzz
# targets: the SDK's end-to-end package spends much of its time waiting on
# QEMU boots and the provider plugins' polling, which leaves a core for the
# others (each target's output is printed whole when it ends).
test: fmt vet
	$(MAKE) -j2 --output-sync=target test-sdk test-launchr-fuzz

# go test's own vet step (-vet=off) is left out: it runs a subset of the
# analyzers `make vet` has just run on every package, test files included,
# and on an empty build cache it cost 85 s of CPU.
#
# With TESTJSON=FILE (.ci/run sets it) the SDK's tests write go test -json
# to FILE and print what plain go test prints (.ci/test-output.jq), then
# the 40 slowest tests and subtests (.ci/test-profile.jq): each CI run's
# time profile, the end-to-end package's above all. It needs jq.
TESTJSON ?=
test-sdk:
ifeq ($(TESTJSON),)
	$(GO) test -count=1 -vet=off -timeout 45m ./...
else
	@rc=0; $(GO) test -count=1 -vet=off -timeout 45m -json ./... >$(TESTJSON) || rc=$$?; \
	jq -nrj -f .ci/test-output.jq <$(TESTJSON); \
	echo "the 40 slowest tests (seconds, result, package, test; all of them in $(TESTJSON)):"; \
	jq -r -f .ci/test-profile.jq <$(TESTJSON) | sort -rn | head -n 40; \
	exit $$rc
endif

test-launchr-fuzz:
	$(MAKE) test-launchr
	$(MAKE) fuzz

# The plasmactl plugin is a nested module (launchr/), which ./... of the
# SDK does not reach. Its test builds plasmactl-node: about 2-3 minutes on
# 2 cores with a cold build cache, seconds with a warm one.
test-launchr:
	cd launchr && $(GO) vet ./... && $(GO) test -count=1 -vet=off -timeout 30m ./...

vet:
	$(GO) vet ./...

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# A short run of every fuzz target (.ci/fuzz.sh says how); FUZZTIME=10m for
# a long one; FUZZJOBS targets at once: each runs for FUZZTIME of wall time,
# so two at once halve the step.
FUZZJOBS ?= 2
fuzz:
	@GO=$(GO) FUZZTIME=$(FUZZTIME) FUZZJOBS=$(FUZZJOBS) ./.ci/fuzz.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...
