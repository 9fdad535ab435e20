# gnomon — common tasks. `make help` lists them.
GO ?= go
BIN := bin/gnomon

.PHONY: help build demo test check lint fuzz bench quick clean

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-8s %s\n", $$1, $$2}'

build: ## build bin/gnomon
	@test -x $(BIN) || echo "building $(BIN): the first build fetches and compiles the dependencies, a minute or two"
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/gnomon

demo: build ## run the server on ./gnomon-data with examples/ loaded and start the demo flow
	@echo "starting the server on ./gnomon-data with examples/ loaded; its log goes to demo.log"; \
	./$(BIN) server --data gnomon-data --definitions examples > demo.log 2>&1 & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid' INT TERM; \
	until ./$(BIN) status demo_flow >/dev/null 2>&1; do \
		kill -0 $$pid 2>/dev/null || { cat demo.log; exit 1; }; sleep 0.2; done; \
	./$(BIN) event demo_flow -e start && \
	echo "demo_flow started. In another terminal, try: ./$(BIN) status demo_flow, ./$(BIN) runs demo_flow, or open http://127.0.0.1:8080/ (token in gnomon-data/admin.token). Ctrl-C stops the server."; \
	wait $$pid

# make test: three stages (15 to 30 minutes on 2 cores), each run
# even if one before it failed, then a summary of the three; it fails if
# any did.
test: ## run the whole test suite (race detector on), then the end-to-end and library tests again on PostgreSQL, and the end-to-end tests on clusters of three processes
	@.ci/stages \
		'every package, on SQLite' 'CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 30m ./...' \
		'./cli and . again, on PostgreSQL' 'GNOMON_TEST_DB=postgres CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 30m ./cli .' \
		'./cli on clusters of three processes' 'GNOMON_TEST_DB=cluster CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 30m ./cli'

lint: ## gofmt, go vet, staticcheck
	@test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

check: lint test ## everything CI runs

FUZZTIME ?= 60s
fuzz: ## fuzz every parser for FUZZTIME each
	$(GO) test ./cond -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./defs -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./defs -run '^$$' -fuzz '^FuzzCalendarValues$$' -fuzztime $(FUZZTIME)
	$(GO) test ./calendar -run '^$$' -fuzz '^FuzzParseCron$$' -fuzztime $(FUZZTIME)
	$(GO) test ./calendar -run '^$$' -fuzz '^FuzzParseInterval$$' -fuzztime $(FUZZTIME)
	$(GO) test ./calendar -run '^$$' -fuzz '^FuzzParseRule$$' -fuzztime $(FUZZTIME)
	$(GO) test ./calendar -run '^$$' -fuzz '^FuzzParseDate$$' -fuzztime $(FUZZTIME)
	$(GO) test ./calendar/ics -run '^$$' -fuzz '^FuzzDates$$' -fuzztime $(FUZZTIME)
	$(GO) test ./eventdep -run '^$$' -fuzz '^FuzzParseTimestamp$$' -fuzztime $(FUZZTIME)
	$(GO) test ./store -run '^$$' -fuzz '^FuzzDecodeLogSpan$$' -fuzztime $(FUZZTIME)
	$(GO) test ./store -run '^$$' -fuzz '^FuzzDecodeParams$$' -fuzztime $(FUZZTIME)
	$(GO) test ./defs -run '^$$' -fuzz '^FuzzVars$$' -fuzztime $(FUZZTIME)
	$(GO) test ./eventdep -run '^$$' -fuzz '^FuzzDecodeEvent$$' -fuzztime $(FUZZTIME)
	$(GO) test ./auth -run '^$$' -fuzz '^FuzzParseBearer$$' -fuzztime $(FUZZTIME)
	$(GO) test ./eventdep -run '^$$' -fuzz '^FuzzParseConfigs$$' -fuzztime $(FUZZTIME)
	$(GO) test ./scheduler -run '^$$' -fuzz '^FuzzAppendDataEntry$$' -fuzztime $(FUZZTIME)
	$(GO) test ./internal/jsonenc -run '^$$' -fuzz '^FuzzAppendString$$' -fuzztime $(FUZZTIME)
	$(GO) test ./api -run '^$$' -fuzz '^FuzzEventsResponse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./periods -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./periods -run '^$$' -fuzz '^FuzzSimulation$$' -fuzztime $(FUZZTIME)
	$(GO) test ./defs -run '^$$' -fuzz '^FuzzParseDuration$$' -fuzztime $(FUZZTIME)
	$(GO) test ./cli -run '^$$' -fuzz '^FuzzYAML$$' -fuzztime $(FUZZTIME)

# make bench: every benchmark against its same-run baseline (about 24 minutes
# on 2 cores), the Go benchmarks with them (among which the API with and
# without authentication, BenchmarkIngestAuth); make bench quick: the same,
# shorter and smaller (under 5), the Go benchmarks reduced to the short
# BenchmarkIngestAuth.
bench: build ## run the benchmark suite against real servers (see BENCHMARKS.md); "make bench quick" for the short one
	CGO_ENABLED=0 $(GO) build -o bin/gnomon-bench ./cmd/gnomon-bench
	./bin/gnomon-bench all -gnomon $(BIN) $(if $(filter quick,$(MAKECMDGOALS)),-quick)
	$(if $(filter quick,$(MAKECMDGOALS)),$(GO) test -short -run '^$$' -bench '^BenchmarkIngestAuth$$' ./api,$(GO) test -run '^$$' -bench . -benchmem ./...)
	$(if $(filter quick,$(MAKECMDGOALS)),,GNOMON_CLUSTER_KILLS=100 $(GO) test -count=1 -timeout 30m -run '^TestClusterClockNodeKilled$$' -v ./cli)

quick:
	@:

clean: ## remove build output, the demo's data and log, and what the README's tours make
	rm -rf bin gnomon-data demo.log backup.def all.def seed004-data seed004-data.log seed004-mail.log trees-data trees-data.log rehearsal-data rehearsal-data.log
