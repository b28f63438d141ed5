# turnstile — see README.md.
GO ?= go
PKGS := ./...

.PHONY: test lint bench build conform conform-pi

build:
	$(GO) build -o bin/turnstile ./cmd/turnstile

test:
	$(GO) test -race -count=1 $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)
