# turnstile — see README.md.
GO ?= go
PKGS := ./...

.PHONY: test lint bench bench-vs-pi build conform conform-pi mutation test-python conform-python

build:
	$(GO) build -o bin/turnstile ./cmd/turnstile

test: lint conformance/adapters/pi/node_modules
	$(GO) test -race -count=1 $(PKGS)
	$(MAKE) conform-pi

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

# pi 1.6.0 itself must pass the curated suite, byte for byte.
conform-pi: conformance/adapters/pi/node_modules
	$(GO) run ./cmd/turnstile conform --impl "node conformance/adapters/pi/adapter.mjs"

# The Python kit's own tests, and the example loop's validator against pi's cases (unittest).
PYTHON ?= python3
test-python:
	cd kits/python && $(PYTHON) -m unittest
	cd examples/python-loop && $(PYTHON) -m unittest

# The example Python loop on the Python kit must pass the curated suite (semantic profile;
# known gaps, if any, in examples/python-loop/expected-failures.txt): the asyncio loop, then its
# synchronous twin in the kit's synchronous mode.
conform-python:
	$(GO) run ./cmd/turnstile conform --impl "$(PYTHON) examples/python-loop/adapter.py" --profile semantic \
		--expect-fail examples/python-loop/expected-failures.txt
	$(GO) run ./cmd/turnstile conform --impl "$(PYTHON) examples/python-loop/adapter.py --sync" --profile semantic \
		--expect-fail examples/python-loop/expected-failures.txt

bench-vs-pi: bench/node_modules
	$(GO) run ./bench/vspi

# Mutation testing of loop/ against its tests (gremlins); the README reports the efficacy.
GREMLINS ?= $(shell go env GOPATH)/bin/gremlins
mutation:
	test -x $(GREMLINS) || $(GO) install github.com/go-gremlins/gremlins/cmd/gremlins@v0.6.0
	$(GREMLINS) unleash --workers 2 --timeout-coefficient 5 --exclude-files argschema --coverpkg ./loop ./loop
