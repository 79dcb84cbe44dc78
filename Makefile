# npuprof — build, test, lint, benchmark.
GO      ?= go
BIN     := bin
PKGS    := ./...
DEMO    := testdata/traces/ep-fc1-cumsum

.PHONY: all build dist man installcheck golden test test-simd lint bench bench-ranks bench-merge pernode-1024 bench-depth bench-guard bench-quick parquetcheck demo fuzz fuzz-long fuzz-list clean

all: lint test build

# The binary names its version and VCS revision (npuprof version, and every
# output): -buildvcs=true stamps them even where GOFLAGS turns stamping off;
# REVISION covers the checkouts Go cannot stamp (a git worktree).
REVISION := $(shell git rev-parse HEAD 2>/dev/null)
BUILDFLAGS := -buildvcs=true -ldflags "-X github.com/npuprof/npuprof/internal/buildinfo.stampedRevision=$(REVISION)"

## build: static bin/npuprof and bin/tracegen for this machine (no cgo: the
##        binary runs on any Linux of its architecture, whatever its glibc)
build:
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o $(BIN)/npuprof ./cmd/npuprof
	CGO_ENABLED=0 $(GO) build -o $(BIN)/tracegen ./cmd/tracegen

## dist: static npuprof for linux/amd64 and linux/arm64 (Kunpeng), with
##       their SHA-256 checksums, in dist/
DIST_ARCHS := amd64 arm64
dist:
	@mkdir -p dist && rm -f dist/npuprof-linux-* dist/SHA256SUMS
	@for a in $(DIST_ARCHS); do \
		echo "make dist: building dist/npuprof-linux-$$a"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$a $(GO) build -trimpath $(BUILDFLAGS) -o dist/npuprof-linux-$$a ./cmd/npuprof || exit 1; \
	done
	cd dist && sha256sum npuprof-linux-* > SHA256SUMS && cat SHA256SUMS

## man: a man page per command in man/ (man -l man/npuprof-analyze.1), from
##      the commands' help
man:
	$(GO) run ./cmd/npuprof man man

## installcheck: the README's install and demo commands, as written, on a
##               clean clone of this checkout's HEAD (run by CI: .ci/run)
installcheck:
	./scripts/installcheck.sh

## test: go vet and every test (real samples and schemas are read from the first shared/formats above the repository, or $$NPUPROF_SAMPLES)
##   a test skipped for a missing tool or input says so in one line at the end
SKIPLOG := .cache/test-skips
test:
	$(GO) vet $(PKGS)
	@mkdir -p .cache && rm -f $(SKIPLOG)
	@status=0; NPUPROF_SKIP_LOG=$(CURDIR)/$(SKIPLOG) $(GO) test -count=1 -timeout 30m $(PKGS) || status=$$?; \
	if [ -s $(SKIPLOG) ]; then sort -u $(SKIPLOG) | sed 's/^/make test: skipped /'; fi; exit $$status

## test-simd: the GOEXPERIMENT=simd (AMD64) stage-1 measurement's tests
##   (internal/parser/traceview/simd_bench_test.go; excluded from `make test`: the
##   experiment rebuilds the standard library; see docs/performance.md)
test-simd:
	GOEXPERIMENT=simd $(GO) vet ./internal/parser/traceview/
	GOEXPERIMENT=simd $(GO) test -count=1 -run Stage1 ./internal/parser/traceview/

## golden: rewrite the golden files (every output on the committed traces,
##         testdata/golden) and the generated sections of docs/rules.md and
##         docs/json.md; review the diff and name the change in the commit
golden:
	$(GO) test -count=1 ./cmd/npuprof ./internal/rules -run 'Golden|TestDocs' -update

## lint: gofmt must report nothing, and go vet must pass
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

## bench: throughput and peak memory on generated 50 MB, 200 MB and 1 GB traces
##        (cached in .cache/bench), with Python's json.load on the same 200 MB file,
##        then peak RSS per rank on 8 and 1024 generated ranks (bench-ranks) and
##        the cost at 8, 48 and 94 MoE layers from 1 to 1024 ranks (bench-depth)
bench: build
	./scripts/bench.sh

## bench-ranks: peak RSS per rank on 8 and 1024 generated ranks (RANK_COUNTS="8 2048")
bench-ranks: build
	./scripts/rankmem.sh

## bench-merge: the per-node workflow: a generated capture in 8 node folders,
##   each exported --summary-only, merged by one analyze (RANKS="1000 10000",
##   LAYERS="2 8"): export bytes per rank, merge wall time and peak RSS
bench-merge: build
	./scripts/mergebench.sh

## pernode-1024: the acceptance run of docs/parquet.md: a 1,024-rank capture
##   exported as 8 node folders and merged gives the capture's document
pernode-1024:
	NPUPROF_MERGE_RANKS=1024 go test ./cmd/npuprof -run TestPerNodeMerge -count=1 -timeout 30m -v

## bench-depth: 8, 48 and 94 MoE layers x 4 steps at 1, 8, 128 and 1024 ranks
##   (LAYERS="94" RANKS="1 8 128" RUNS=1): MB per CPU-second, CPU and peak RSS per rank
bench-depth: build
	./scripts/depthbench.sh

## bench-guard: the ratio guard `make test` runs (internal/plan/depth_test.go): CPU per
##   trace byte at 94 layers and per rank at 128 ranks within 1.3x of 8's
bench-guard:
	$(GO) test -count=1 -run 'TestGuard' -v ./internal/plan/

## bench-quick: every Go benchmark on small in-memory traces
bench-quick:
	$(GO) test -run='^$$' -bench=. -benchmem $(PKGS)
	NPUPROF_MEMORY_TESTS=1 $(GO) test -count=1 -run='TestClusterMemoryBoundedByWorkers' -v ./internal/pipeline/ | grep -E 'peak heap|^(ok|FAIL|---)' 

## fuzz: run every fuzz target for FUZZTIME each (default 10s), one after another
##   make fuzz FUZZTIME=60s    make fuzz FUZZ_ONLY=FuzzRead    make fuzz FUZZFLAGS=-parallel=1
## FUZZ_ONLY names targets exactly, never as a prefix (FuzzRead is not FuzzReadDB);
## a name two packages share takes its package: FUZZ_ONLY=vllmserve:FuzzReadLog
## A crasher is written to <package>/testdata/fuzz/<Target>/; rename it after
## what it breaks and commit it: `go test` then runs it as a regression test.
## Every parser adds its targets to FUZZ_TARGETS (package:Target, one per line);
## TestFuzzTargetsListed fails when a Fuzz function is missing here.
FUZZTIME  ?= 10s
FUZZFLAGS ?=
FUZZ_ONLY ?=
FUZZ_TARGETS := \
	./internal/parser/traceview:FuzzRead \
	./internal/parser/traceview:FuzzReadFile \
	./internal/parser/traceview:FuzzScanSame \
	./internal/parser/summary:FuzzReadKernelDetails \
	./internal/parser/summary:FuzzReadStepTraceTime \
	./internal/parser/summary:FuzzReadProfilerInfo \
	./internal/parser/summary:FuzzReadProfilerMetadata \
	./internal/parser/summary:FuzzReadCommunication \
	./internal/parser/summary:FuzzCSVScanner \
	./internal/parser/timeparse:FuzzMicrosToNanos \
	./internal/inputs/expertload:FuzzReadDump \
	./internal/inputs/expertload:FuzzReadDeployment \
	./internal/inputs/expertload:FuzzReadLoadCSV \
	./internal/inputs/expertload:FuzzReadLog \
	./internal/rules/rulefmt:FuzzParse \
	./internal/deploy:FuzzParseAndEdit \
	./internal/inputs/vllmserve:FuzzReadLog \
	./internal/parser/msprof:FuzzReadTaskTime \
	./internal/parser/msprof:FuzzReadStatistics \
	./internal/parser/msprof:FuzzReadCommunication \
	./internal/parser/sqlitedb:FuzzReadDB \
	./internal/inputs/service:FuzzReadCSV \
	./internal/render:FuzzIndentJSON

## The mutation test (internal/pipeline/mutation_test.go) runs MUTATIONS mutations
## per file kind (default 400; `make test` runs 12): with every target, or
## alone with FUZZ_ONLY=mutation.
MUTATIONS ?= 400
fuzz:
	@if [ "$(FUZZ_ONLY)" != mutation ]; then GO="$(GO)" FUZZFLAGS="$(FUZZFLAGS)" FUZZ_ONLY="$(FUZZ_ONLY)" ./scripts/fuzz.sh $(FUZZTIME) $(FUZZ_TARGETS); fi
	@if [ -z "$(FUZZ_ONLY)" ] || [ "$(FUZZ_ONLY)" = mutation ]; then \
		out=$$(NPUPROF_MUTATIONS=$(MUTATIONS) $(GO) test -count=1 -timeout 60m -run '^TestMutationSilentRate$$' -v ./internal/pipeline/ 2>&1); status=$$?; \
		echo "$$out" | grep -E '^mutation test|mutation: |Error|^(ok|FAIL|---)'; exit $$status; fi

## fuzz-long: every fuzz target for 60 s (the acceptance run)
fuzz-long:
	$(MAKE) fuzz FUZZTIME=60s

## fuzz-list: print the fuzz targets, one per line (those FUZZ_ONLY selects)
fuzz-list:
	@FUZZ_ONLY="$(FUZZ_ONLY)" FUZZ_LIST=1 ./scripts/fuzz.sh - $(FUZZ_TARGETS)

## parquetcheck: DuckDB reads `npuprof export` output and the SQL in
##               docs/parquet.md gives npuprof's numbers (separate cgo module)
parquetcheck: build
	cd tools/parquetcheck && NPUPROF_BIN=$(CURDIR)/$(BIN)/npuprof CGO_ENABLED=1 $(GO) test -count=1 ./...

## demo: build npuprof and analyze the committed 8-rank trace (the first
##       run downloads the Go modules first, and says so)
demo:
	@echo "make demo: fetching the Go modules npuprof needs (the first time only; may take a minute)" >&2
	@$(GO) mod download
	@echo "make demo: building bin/npuprof and bin/tracegen" >&2
	@$(MAKE) --no-print-directory build >/dev/null
	@echo "make demo: npuprof analyze $(DEMO)" >&2
	./$(BIN)/npuprof analyze $(DEMO)

clean:
	rm -rf $(BIN) dist
