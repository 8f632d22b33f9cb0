# Signoff build and test entry points. `make test` is the command the README
# and CI run.

GO      ?= go
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

SHELL := bash
.SHELLFLAGS := -o pipefail -c

# Storage packages run once, under the race detector, verbosely enough that
# the log shows every conformance test passing on SQLite and on PostgreSQL.
STORAGE_PKGS := ./sqlite/ ./postgres/
# Other packages whose code runs concurrently also run under the race detector.
RACE_PKGS := ./httpapi/... ./ledger/... ./identity/... ./canonical/... ./agent/... ./mcp/... ./openai/... ./addressing/... ./crew/... ./sandbox/... ./webhook/... ./approval/... ./bugdesk/... ./change/... ./changedesk/... ./notify/... ./chat/... ./mail/... ./card/... ./outbox/... ./web/... ./loadgen/... ./metrics/... ./ratelimit/... ./sse/...

.PHONY: build test vet race bench bench-idle fuzz soak scale demo clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/signoff ./cmd/signoff

test: vet
	$(GO) test -short -count=1 -timeout 20m $$($(GO) list ./... | grep -v -e '/sqlite$$' -e '/postgres$$')
	$(GO) test -short -count=1 -race $(RACE_PKGS)
	@echo "$(GO) test -short -count=1 -race -v $(STORAGE_PKGS)   (full log: storage-test.log)"
	@$(GO) test -short -count=1 -race -v $(STORAGE_PKGS) > storage-test.log 2>&1 || { cat storage-test.log; exit 1; }
	@grep -E '^ *--- |^(ok|FAIL)|^pgtest' storage-test.log
	$(GO) test -run '^$$' -fuzz '^FuzzSanitize$$' -fuzztime 100000x ./airlock/
	$(GO) test -run '^$$' -fuzz FuzzCoerce -fuzztime 50000x ./agent/
	$(GO) test -run '^$$' -fuzz FuzzVerify -fuzztime 50000x ./webhook/
	$(GO) test -run '^$$' -fuzz FuzzOpen -fuzztime 20000x ./approval/
	$(GO) test -run '^$$' -fuzz FuzzParsePolicy -fuzztime 20000x ./change/
	$(GO) test -run '^$$' -fuzz FuzzParseCommandText -fuzztime 20000x ./chat/
	$(GO) test -run '^$$' -fuzz FuzzParseSlackInteraction -fuzztime 20000x ./chat/
	$(GO) test -run '^$$' -fuzz FuzzParseMattermostAction -fuzztime 20000x ./chat/
	$(GO) test -run '^$$' -fuzz FuzzOpen -fuzztime 20000x ./secretbox/
	$(GO) test -run '^$$' -fuzz FuzzSideBySide -fuzztime 20000x ./web/
	$(GO) test -run '^$$' -fuzz FuzzParseHarness -fuzztime 20000x ./verify/
	$(GO) test -run '^$$' -fuzz FuzzInstrument -fuzztime 20000x ./verify/
	$(GO) test -run '^$$' -fuzz FuzzCandidate -fuzztime 20000x ./tamper/
	$(GO) test -run '^$$' -fuzz FuzzServe -fuzztime 5000x ./gocache/
	$(GO) test -run '^$$' -fuzz FuzzDecodePlan -fuzztime 20000x ./change/
	$(GO) test -run '^$$' -fuzz FuzzIntake -fuzztime 2000x ./httpapi/
	$(GO) test -run '^$$' -fuzz FuzzAddr -fuzztime 50000x ./clientip/
	$(GO) test -run '^$$' -fuzz FuzzOFREP -fuzztime 2000x ./httpapi/
	$(GO) test -run '^$$' -fuzz FuzzDeploymentWebhook -fuzztime 2000x ./httpapi/
	$(GO) run ./cmd/signoff triage eval --dataset samples/orbit_run --min 15

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...

# Benchmarks are never part of `make test`: they take minutes and their
# figures go in notes, not assertions.
bench:
	$(GO) test -run '^$$' -bench 'Append' -benchtime 5000x ./sqlite/ ./postgres/
	$(GO) test -run '^$$' -bench 'Verify1M' -benchtime 3x -timeout 30m ./sqlite/ ./postgres/
	$(GO) test -run '^$$' -bench . ./canonical/ ./ledger/ ./airlock/
	$(GO) test -run '^$$' -bench Intake -benchtime 5000x ./httpapi/
	$(GO) test -run '^$$' -bench . -benchtime 2s ./agent/
	$(GO) test -run '^$$' -bench RoundTrip -benchtime 3000x ./mcp/
	$(GO) test -run '^$$' -bench . ./triage/ ./crew/
	$(GO) test -run '^$$' -bench . ./sandbox/
	$(GO) test -run '^$$' -bench VerifyShopLite -benchtime 5x ./verify/
	$(GO) test -run '^$$' -bench Deliver -benchtime 3000x ./sqlite/ ./postgres/
	$(GO) test -run '^$$' -bench Pickup -benchtime 1x ./sqlite/ ./postgres/
	$(MAKE) bench-idle

# What an idle `signoff serve` costs over 60 s on SQLite and on PostgreSQL
# (CPU ticks, write system calls, fsyncs): four minutes in all.
bench-idle:
	$(GO) test -run '^$$' -bench IdleServe -benchtime 1x -timeout 10m ./sqlite/ ./postgres/

# The soak (SOAK=30m by default) and the intake scaling measurement run
# real processes for minutes: figures for notes, never part of make test.
soak:
	SIGNOFF_SOAK=$${SOAK:-30m} $(GO) test -count=1 -v -timeout 90m -run '^TestSoak$$' ./cmd/signoff/

scale:
	SIGNOFF_MEASURE=1 $(GO) test -count=1 -v -timeout 20m -run '^TestClusterScaling$$' ./cmd/signoff/

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzTransform -fuzztime 60s ./canonical/
	$(GO) test -run '^$$' -fuzz '^FuzzSanitize$$' -fuzztime 120s ./airlock/
	$(GO) test -run '^$$' -fuzz FuzzCoerce -fuzztime 60s ./agent/
	$(GO) test -run '^$$' -fuzz FuzzParseGoTestJSON -fuzztime 60s ./verify/
	$(GO) test -run '^$$' -fuzz FuzzParseJUnitXML -fuzztime 60s ./verify/
	$(GO) test -run '^$$' -fuzz FuzzVerify -fuzztime 60s ./webhook/
	$(GO) test -run '^$$' -fuzz FuzzOpen -fuzztime 60s ./approval/
	$(GO) test -run '^$$' -fuzz FuzzParseCommandText -fuzztime 60s ./chat/
	$(GO) test -run '^$$' -fuzz FuzzParseSlackInteraction -fuzztime 60s ./chat/
	$(GO) test -run '^$$' -fuzz FuzzParseMattermostAction -fuzztime 60s ./chat/
	$(GO) test -run '^$$' -fuzz FuzzOpen -fuzztime 60s ./secretbox/
	$(GO) test -run '^$$' -fuzz FuzzSideBySide -fuzztime 60s ./web/
	$(GO) test -run '^$$' -fuzz FuzzParseHarness -fuzztime 60s ./verify/
	$(GO) test -run '^$$' -fuzz FuzzInstrument -fuzztime 60s ./verify/
	$(GO) test -run '^$$' -fuzz FuzzCandidate -fuzztime 60s ./tamper/
	$(GO) test -run '^$$' -fuzz FuzzServe -fuzztime 60s ./gocache/
	$(GO) test -run '^$$' -fuzz FuzzDecodePlan -fuzztime 60s ./change/
	$(GO) test -run '^$$' -fuzz FuzzIntake -fuzztime 60s ./httpapi/
	$(GO) test -run '^$$' -fuzz FuzzOFREP -fuzztime 60s ./httpapi/
	$(GO) test -run '^$$' -fuzz FuzzDeploymentWebhook -fuzztime 60s ./httpapi/

demo:
	$(GO) run -ldflags "$(LDFLAGS)" ./cmd/signoff demo

clean:
	rm -rf bin storage-test.log
