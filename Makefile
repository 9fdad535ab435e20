# gnomon — common tasks. `make help` lists them.
GO ?= go
BIN := bin/gnomon

.PHONY: help build demo test check lint fuzz bench clean

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

build: ## build bin/gnomon
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/gnomon

demo: build ## run the server on ./gnomon-data with examples/ loaded and start the demo flow
	@mkdir -p gnomon-data/logs
	@./$(BIN) server --data gnomon-data --definitions examples & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid' INT TERM; \
	until ./$(BIN) status -j demo_flow >/dev/null 2>&1; do \
		kill -0 $$pid 2>/dev/null || exit 1; sleep 0.2; done; \
	./$(BIN) event -j demo_flow -e start && echo "demo_flow started: try ./$(BIN) status -j demo_flow"; \
	wait $$pid

test: ## run the whole test suite (race detector on)
	CGO_ENABLED=1 $(GO) test -race -count=1 ./...

lint: ## gofmt, go vet, staticcheck
	@test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

check: lint test ## everything CI runs

FUZZTIME ?= 60s
fuzz: ## fuzz every parser for FUZZTIME each
	$(GO) test ./cond -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./defs -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./calendar -run '^$$' -fuzz '^FuzzParseCron$$' -fuzztime $(FUZZTIME)
	$(GO) test ./calendar -run '^$$' -fuzz '^FuzzParseInterval$$' -fuzztime $(FUZZTIME)
	$(GO) test ./eventdep -run '^$$' -fuzz '^FuzzParseTimestamp$$' -fuzztime $(FUZZTIME)
	$(GO) test ./eventdep -run '^$$' -fuzz '^FuzzDecodeEvent$$' -fuzztime $(FUZZTIME)
	$(GO) test ./eventdep -run '^$$' -fuzz '^FuzzParseConfigs$$' -fuzztime $(FUZZTIME)

BENCH_CONFIGS ?= 3,10000,1000000
BENCH_DURATION ?= 10s
BENCH_ROUNDS ?= 3
bench: build ## run the Go benchmarks, then the event-ingest load against a real server (see BENCHMARKS.md)
	$(GO) test -run '^$$' -bench . -benchmem ./...
	CGO_ENABLED=0 $(GO) build -o bin/gnomon-bench ./cmd/gnomon-bench
	./bin/gnomon-bench events -gnomon $(BIN) -configs $(BENCH_CONFIGS) -duration $(BENCH_DURATION) -rounds $(BENCH_ROUNDS)

clean: ## remove build output and the demo's data
	rm -rf bin gnomon-data
