# ibdoctor build, test and measurement targets.
#
#   make build     static bin/ibdoctor (CGO_ENABLED=0)
#   make run       build, then run the main job: bin/ibdoctor check --sim (the built-in sample fabric)
#   make test      the one test command: lint + go test -race ./... + static check + kernel tests
#   make lint      gofmt -l must be empty; go vet
#   make fuzz      every Fuzz* target for FUZZTIME each (default 60s)
#   make bench     every Benchmark* (filter with BENCH=regexp)
#   make static    check that bin/ibdoctor is a static ELF without cgo
#   make test-kernel  the real-kernel umad tests in a VM (scripts/kernel-test.sh)
#   make man       man pages into bin/man/man1 (cobra's generator, cmd/ibdoctor-docs)
#   make completions  bash, zsh and fish completion scripts into bin/completions
#
# make test needs Go 1.26 and first runs scripts/test-setup.sh over the
# Debian packages the tests drive (scripts/test-packages.txt, the list
# .ci/run uses too): as root, or with CI=true, or TEST_SETUP=install (sudo),
# it installs what is missing; otherwise it says which tests will skip and
# the one apt-get command that installs their tools, and says it again
# after the tests. TEST_SETUP=skip leaves the system alone. Tests skip
# when a tool is missing, except with CI=true, where they fail. Go modules
# come from the module cache or, if absent, are downloaded by
# `go mod download` (printed) and checked against go.sum.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

export CGO_ENABLED := 0

GO          ?= go
BIN         := bin/ibdoctor
# The main job `make run` runs. One line to change.
RUN_ARGS    ?= check --sim
PKGS        ?= ./...
TEST_TIMEOUT ?= 12m
GOTESTFLAGS ?= -count=1
FUZZTIME    ?= 60s
FUZZPKGS    ?= ./...
FUZZLOG     ?= bin/fuzz-results.txt
BENCH       ?= .
BENCHTIME   ?= 1s
BENCHPKGS   ?= ./...
# The commit, for 'ibdoctor version' when Go stamps none (-buildvcs=false,
# no .git); empty without git, and the binary then says "unknown".
REVISION    ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS     ?= -s -w -X github.com/ibdoctor/ibdoctor/internal/buildinfo.Revision=$(REVISION)

.PHONY: build run test setup lint vet fmt-check deps go-test fuzz bench static test-kernel man completions clean screenshot

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/ibdoctor

# Exit status 1 means "findings" (the sample fabric has them), not a failed
# run: make passes it as success and says so; 2 and 3 still fail.
run: build
	@rc=0; ./$(BIN) $(RUN_ARGS) || rc=$$?; \
	if [ $$rc -eq 1 ]; then echo "(ibdoctor exited 1: findings, see docs/exit-codes.md)"; exit 0; fi; exit $$rc

deps:
	@echo "go mod download (uses the module cache; fetches only what go.sum lists and the cache lacks)"
	$(GO) mod download

fmt-check:
	@out="$$(find . -name '*.go' -not -path './.git/*' -not -path '*/testdata/*' -print0 | xargs -0 gofmt -l)"; \
	if [ -n "$$out" ]; then echo "gofmt -l lists files that need formatting (run gofmt -w):"; echo "$$out"; exit 1; fi; \
	echo "gofmt: clean"

vet:
	$(GO) vet $(PKGS)

lint: fmt-check vet

# The race detector requires cgo in the test binaries; nothing in ibdoctor
# uses cgo, and `static` checks the shipped binary separately.
go-test:
	@echo "go test -race (CGO_ENABLED=1 for the race runtime only), timeout $(TEST_TIMEOUT)"
	@log="$$(mktemp)"; status=0; \
	CGO_ENABLED=1 $(GO) test -race -timeout $(TEST_TIMEOUT) $(GOTESTFLAGS) $(PKGS) 2>&1 | tee "$$log" || status=$$?; \
	echo "---- go test summary ----"; \
	echo "packages ok:            $$(grep -c '^ok ' "$$log" || true)"; \
	echo "packages failed:        $$(grep -cE '^FAIL[[:space:]]+[^[:space:]]' "$$log" || true)"; \
	echo "packages without tests: $$(grep -c '^? ' "$$log" || true)"; \
	grep -E '^(FAIL|--- FAIL)' "$$log" || true; \
	rm -f "$$log"; \
	TEST_SETUP=summary scripts/test-setup.sh; \
	if [ "$$status" -ne 0 ]; then echo "go test: FAILED (exit $$status)"; exit "$$status"; fi; \
	echo "go test: PASS"

static: build
	IBDOCTOR_BIN="$(CURDIR)/$(BIN)" $(GO) test -count=1 -run 'TestStaticBinary' ./cmd/ibdoctor/

test-kernel:
	@if [ -x scripts/kernel-test.sh ]; then scripts/kernel-test.sh; \
	elif [ -f scripts/kernel-test.sh ]; then bash scripts/kernel-test.sh; \
	else echo "test-kernel: not yet (scripts/kernel-test.sh does not exist)"; fi

# The packages the tests drive: installed (root, CI=true, TEST_SETUP=install)
# or named with the tests that will skip (scripts/test-setup.sh).
setup:
	@scripts/test-setup.sh

test: setup deps lint go-test static test-kernel
	@echo "make test: all passed"

# Man pages and completion scripts from the command tree; the generator is
# its own program so the ibdoctor binary does not carry it.
MANDIR        ?= bin/man/man1
COMPLETIONDIR ?= bin/completions

man:
	$(GO) run ./cmd/ibdoctor-docs man $(MANDIR)
	@echo "man pages in $(MANDIR): install with  sudo cp $(MANDIR)/*.1 /usr/local/share/man/man1/ && sudo mandb -q"

completions:
	$(GO) run ./cmd/ibdoctor-docs completions $(COMPLETIONDIR)
	@echo "completions in $(COMPLETIONDIR): see the README for where each goes"

# Fuzzing: discover every Fuzz* target per package and run each for
# FUZZTIME. Crashers are kept by Go in the package's testdata/fuzz/.
fuzz:
	@mkdir -p "$$(dirname "$(FUZZLOG)")"; : > "$(FUZZLOG)"; failed=0; \
	list="$$($(GO) test -list '^Fuzz' $(FUZZPKGS) 2>&1 || true)"; \
	broken="$$(grep -E '^FAIL[[:space:]]+[^[:space:]]+' <<<"$$list" || true)"; \
	targets="$$(awk '/^Fuzz/ {names[++n]=$$0; next} /^ok[ \t]/ {for (i=1;i<=n;i++) print $$2, names[i]; n=0; next} {n=0}' <<<"$$list")"; \
	if [ -n "$$broken" ]; then echo "fuzz: these packages do not build, their targets are not run:"; echo "$$broken" | sed 's/^/    /'; failed=1; fi | tee -a "$(FUZZLOG)"; \
	if [ -n "$$broken" ]; then failed=1; fi; \
	if [ -z "$$targets" ]; then echo "fuzz: no Fuzz* targets found"; exit "$$failed"; fi; \
	printf '%-55s %-28s %12s %8s %s\n' package target execs new result | tee -a "$(FUZZLOG)"; \
	while read -r pkg name; do \
		out="$$($(GO) test -run '^$$' -fuzz "^$${name}\$$" -fuzztime $(FUZZTIME) "$$pkg" 2>&1)" && res=ok || { res=FAIL; failed=$$((failed+1)); }; \
		last="$$(grep -E '^fuzz: elapsed' <<<"$$out" | tail -1)"; \
		execs="$$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$$last")"; \
		new="$$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$$last")"; \
		printf '%-55s %-28s %12s %8s %s\n' "$$pkg" "$$name" "$${execs:-?}" "$${new:-?}" "$$res" | tee -a "$(FUZZLOG)"; \
		if [ "$$res" = FAIL ]; then sed 's/^/    /' <<<"$$out" | tail -40 | tee -a "$(FUZZLOG)"; fi; \
	done <<<"$$targets"; \
	echo "fuzz: $$(wc -l <<<"$$targets") targets run for $(FUZZTIME) each; failures (incl. packages that do not build): $$failed; figures in $(FUZZLOG)" | tee -a "$(FUZZLOG)"; \
	[ "$$failed" -eq 0 ]

bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) $(BENCHPKGS) 2>&1 | grep -vE '^(\?|PASS$$)'

# The README's picture: the sample fabric's --html page in headless
# Chromium (Debian's chromium-headless-shell), 1280x800.
SCREENSHOT ?= docs/html-report.png
screenshot: build
	@rc=0; ./$(BIN) check --sim --html bin/sample.html >/dev/null || rc=$$?; [ $$rc -le 1 ]
	chromium-headless-shell --no-sandbox --disable-gpu --hide-scrollbars --window-size=1280,800 \
		--screenshot=$(SCREENSHOT) "file://$$PWD/bin/sample.html" 2>/dev/null
	@ls -l $(SCREENSHOT)

clean:
	rm -rf bin
