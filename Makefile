# turnstile — see README.md.
GO ?= go
PKGS := ./...

.PHONY: conform-ts-agent conform-six-duties fuzz-brief test-kits test test-race-all lint bench bench-vs-pi build conform conform-pi mutation mutation-pi test-python conform-python test-ts test-pi-adapter conform-pi-versions

build:
	$(GO) build -o bin/turnstile ./cmd/turnstile

# The race detector runs on the packages whose own code runs goroutines (the protocol's process
# I/O and parallel verification, the Go kit's bubbles and gates, the loop's parallel tools and
# argument validation, the Agent, the cooperative scheduler, explore's workers, audit's reader)
# and on sim, which runs the loop's
# goroutines over every kind of scenario. The other packages' code (diagnosis, invariants,
# scenario files, goldens, the report, the CLI's wiring) starts no goroutine (some of their tests
# run in parallel or drive a browser; the concurrent code they reach is the packages above's):
# they run without it, 2-5 times faster. `make test-race-all` runs everything under it.
MODULE := github.com/turnstile-dev/turnstile
RACE_PKGS := $(MODULE)/agent $(MODULE)/audit $(MODULE)/conformance $(MODULE)/conformance/porttest $(MODULE)/conformance/protocol $(MODULE)/explore \
	$(MODULE)/loop $(MODULE)/loop/argschema $(MODULE)/sim $(MODULE)/sim/coop
# Whole-suite diagnoses (every scenario failing, each diagnosed against several references)
# take minutes under the race detector and reach no goroutine the other tests do not: they run
# without it.
RACE_SKIP := ^(TestAFailureIsNamedByThePiChangeItShows|TestOlderPortWithItsOwnDefect|TestOneDefectIsOneCauseAndTheReportIsBoundedByCauses)$$

# make test: gofmt and vet; the Go tests; then the kits' and the adapters' own tests, the kits
# installed as a user would (test-kits), and the curated suite against pi, the example Python
# loop, the example Agent and the six-duties loop, two at a time (each is a pair of processes
# taking turns), their output kept together per step.
test: lint conformance/adapters/pi/node_modules examples/ts-agent/node_modules examples/six-duties/node_modules
	$(eval TEST_PKGS := $(shell $(GO) list $(PKGS)))
	$(if $(filter $(RACE_PKGS),$(TEST_PKGS)),$(GO) test -race -count=1 -timeout 30m -skip '$(RACE_SKIP)' $(filter $(RACE_PKGS),$(TEST_PKGS)))
	$(if $(filter $(MODULE)/conformance,$(TEST_PKGS)),$(GO) test -count=1 -timeout 30m -run '$(RACE_SKIP)' $(MODULE)/conformance)
	$(if $(filter-out $(RACE_PKGS),$(TEST_PKGS)),$(GO) test -count=1 -timeout 30m $(filter-out $(RACE_PKGS),$(TEST_PKGS)))
	$(MAKE) fuzz-brief
	$(MAKE) -j2 --output-sync=target test-python test-ts test-pi-adapter conform-pi conform-python conform-ts-agent conform-six-duties test-kits

# Every reader of hostile input fuzzed briefly (FUZZTIME each), and the hand-written message
# codecs against encoding/json; their seeds also run as plain tests. A count, not a duration: Go 1.26's fuzzer can fail a duration run with "context
# deadline exceeded" as its time ends (go.dev/issue/75804). `make fuzz-brief FUZZTIME=10m` for
# a longer look.
FUZZTIME ?= 40000x
fuzz-brief:
	$(GO) test ./scenarios -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	$(GO) test ./scenarios -run '^$$' -fuzz '^FuzzTokenBound$$' -fuzztime $(FUZZTIME)
	$(GO) test ./conformance/protocol -run '^$$' -fuzz '^FuzzLineReader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./trace -run '^$$' -fuzz '^FuzzReader$$' -fuzztime $(FUZZTIME)
	$(GO) test ./audit -run '^$$' -fuzz '^FuzzCheck$$' -fuzztime $(FUZZTIME)
	$(GO) test ./loop -run '^$$' -fuzz '^FuzzDecodeMessage$$' -fuzztime $(FUZZTIME)
	$(GO) test ./loop -run '^$$' -fuzz '^FuzzMessageJSON$$' -fuzztime $(FUZZTIME)
	$(GO) test ./sim -run '^$$' -fuzz '^FuzzHookAnswers$$' -fuzztime $(FUZZTIME)
	$(GO) test ./sim -run '^$$' -fuzz '^FuzzReadOp$$' -fuzztime $(FUZZTIME)
	$(GO) test ./sim -run '^$$' -fuzz '^FuzzReadStreamEnd$$' -fuzztime $(FUZZTIME)
	$(GO) test ./jsonvalue -run '^$$' -fuzz '^FuzzAppendValueOfDecoded$$' -fuzztime $(FUZZTIME)

test-race-all:
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

# The pi adapter's and the benchmarks' node modules (package-lock.json pins pi 1.6.0).
conformance/adapters/pi/node_modules: conformance/adapters/pi/package-lock.json
	npm ci --prefix conformance/adapters/pi --no-audit --no-fund
bench/node_modules: bench/package-lock.json
	npm ci --prefix bench --no-audit --no-fund

# The main job: the curated suite against the built-in reference.
conform:
	$(GO) run ./cmd/turnstile conform

# pi 1.6.0 itself must pass the curated suite, byte for byte: through runAgentLoop, and through
# its public wrappers agentLoop / agentLoopContinue (the adapter's --entry wrappers).
conform-pi: conformance/adapters/pi/node_modules
	$(GO) run ./cmd/turnstile conform --impl "node conformance/adapters/pi/adapter.mjs"
	$(GO) run ./cmd/turnstile conform --impl "node conformance/adapters/pi/adapter.mjs --entry wrappers"

# Every pi release the reference can behave as (loop.Releases), each through the adapter
# against the reference at the same version (docs/VERSIONS.md). Releases before 1.5.0 validate
# tool arguments with TypeBox, whose messages the reference does not reproduce: they are
# compared with the semantic profile, which leaves only the validator's messages free.
PI_RELEASES ?= 0.87.1 0.99.1 1.0.3 1.3.0 1.4.0 1.5.2 1.6.0
PI_TYPEBOX_VALIDATOR := 0.87.1 0.99.1 1.0.3 1.3.0 1.4.0
conform-pi-versions: conformance/adapters/pi/node_modules
	$(GO) build -o bin/turnstile ./cmd/turnstile
	@for v in $(PI_RELEASES); do \
		profile=strict; case " $(PI_TYPEBOX_VALIDATOR) " in *" $$v "*) profile=semantic;; esac; \
		out=$$(bin/turnstile conform --impl "node conformance/adapters/pi/adapter.mjs --pi $$v" --profile $$profile --jobs 2 2>&1) \
			|| { echo "$$out" | grep -A8 '^FAIL' | head -80; echo "pi $$v, $$profile: $$(echo "$$out" | tail -2 | head -1)"; exit 1; }; \
		echo "pi $$v, $$profile: $$(echo "$$out" | tail -1)"; \
	done

# The Python kit's own tests, and the example loop's validator against pi's cases (unittest).
PYTHON ?= python3
test-python:
	cd kits/python && $(PYTHON) -m unittest
	cd examples/python-loop && $(PYTHON) -m unittest

# The TypeScript/JavaScript kit's own tests (node's built-in runner; no dependencies).
NODE ?= node
test-ts:
	cd kits/ts && $(NODE) --test tests/

# The pi adapter's scripted protocol-2 sessions on pi's own loop and Agent class, and the order
# in which pi's Agent settles operations (which the Go reference reproduces), in every release.
test-pi-adapter: conformance/adapters/pi/node_modules
	$(NODE) --test conformance/adapters/pi/tests/
	for v in $(PI_RELEASES); do $(NODE) conformance/adapters/pi/testdata/outcome-order.mjs --pi $$v >/dev/null || exit 1; done

# The example Python loop on the Python kit must pass the curated suite (semantic profile;
# known gaps, if any, in examples/python-loop/expected-failures.txt): the asyncio loop, then its
# synchronous twin in the kit's synchronous mode.
conform-python:
	$(GO) run ./cmd/turnstile conform --impl "$(PYTHON) examples/python-loop/adapter.py" --profile semantic \
		--expect-fail examples/python-loop/expected-failures.txt
	$(GO) run ./cmd/turnstile conform --impl "$(PYTHON) examples/python-loop/adapter.py --sync" --profile semantic \
		--expect-fail examples/python-loop/expected-failures.txt

bench-vs-pi: bench/node_modules conformance/adapters/pi/node_modules
	$(GO) run ./bench/vspi

# Mutation testing of the curated suite against pi itself: each break of pi 1.6.0's dist that an
# upstream test case asserts against (docs/UPSTREAM.md; conformance/adapters/pi/mutation) must
# fail at least one scenario. About a quarter of an hour: not part of make test.
mutation-pi: conformance/adapters/pi/node_modules build
	$(NODE) conformance/adapters/pi/mutation/run.mjs --turnstile bin/turnstile

# Mutation testing of loop/ against its tests (gremlins); the README reports the efficacy.
GREMLINS ?= $(shell go env GOPATH)/bin/gremlins
mutation: mutation-pi
	test -x $(GREMLINS) || $(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
	$(GREMLINS) unleash --workers 2 --timeout-coefficient 5 --exclude-files argschema --coverpkg ./loop ./loop

# The example Agent written from the contract (examples/ts-agent) against the Agent scenarios.
examples/ts-agent/node_modules: examples/ts-agent/package-lock.json
	npm ci --prefix examples/ts-agent --no-audit --no-fund
conform-ts-agent: examples/ts-agent/node_modules
	$(GO) run ./cmd/turnstile conform --impl "node examples/ts-agent/adapter.mjs" --run agent/

# The six-duties loop (examples/six-duties, TypeScript run with tsx, not a port of pi) at pi's
# level: its failures are listed, each with what it comes from, in expected-failures.txt.
examples/six-duties/node_modules: examples/six-duties/package-lock.json
	npm ci --prefix examples/six-duties --no-audit --no-fund
conform-six-duties: examples/six-duties/node_modules
	cd examples/six-duties && $(GO) run ../../cmd/turnstile conform --impl "$(NODE) --import tsx adapter.ts" \
		--expect-fail expected-failures.txt

# Each kit installed as a user would, into a temporary directory outside the checkout (the
# TypeScript kit from `npm pack`'s tarball, the Python kit with pip into a venv, from the folder
# and from a git+file URL, the Go kit through go.work offline), its starter adapter and an
# example loop run on the installed copy.
# pip builds the kit with the interpreter's own setuptools and wheel (no index is needed): PYTHON
# when it has them, else Debian's.
KIT_PYTHON ?= $(shell $(PYTHON) -c 'import setuptools, wheel' 2>/dev/null && echo $(PYTHON) || echo /usr/bin/python3)
test-kits:
	$(GO) build -o bin/turnstile ./cmd/turnstile
	TURNSTILE=$(CURDIR)/bin/turnstile PYTHON=$(KIT_PYTHON) NODE=$(NODE) kits/check-install.sh
