# npuprof — build, test, lint, benchmark.
GO      ?= go
BIN     := bin
PKGS    := ./...
DEMO    := testdata/traces/ep-fc1-cumsum

.PHONY: all build test lint bench demo fuzz clean

all: lint test build

build:
	$(GO) build -o $(BIN)/npuprof ./cmd/npuprof
	$(GO) build -o $(BIN)/tracegen ./cmd/tracegen

## test: go vet and every test (real samples are read from ../shared/formats/samples or $$NPUPROF_SAMPLES)
test:
	$(GO) vet $(PKGS)
	$(GO) test -count=1 $(PKGS)

## lint: gofmt must report nothing, and go vet must pass
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

## bench: parser and end-to-end benchmarks
bench:
	$(GO) test -run='^$$' -bench=. -benchmem $(PKGS)

## demo: build npuprof and analyze the committed 8-rank trace
demo: build
	./$(BIN)/npuprof analyze $(DEMO)

clean:
	rm -rf $(BIN)
