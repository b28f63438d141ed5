#!/usr/bin/env bash
# Installs each kit as a project outside this repository would, into a temporary directory, and
# runs adapters on the installed copy through `turnstile conform` (make test-kits):
#   - the TypeScript kit from `npm pack`'s tarball, with tsx: its starter adapter, unfilled (its
#     run must fail with the starter's FILL message: install, import, hello and session work),
#     and the six-duties example loop (TypeScript) on a few scenarios it passes;
#   - the Python kit with pip into a venv, from the folder and from a git+file URL of this
#     repository's HEAD (committed files only): the starter likewise, and the example Python
#     loop on a few scenarios, importing the installed kit;
#   - the Go kit from a module of its own in an empty directory, wired by go.work offline.
# Needs the npm registry (tsx) but not PyPI: pip builds with the interpreter's setuptools and
# wheel (--no-build-isolation, --no-index). TURNSTILE, PYTHON and NODE name the commands.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
turnstile=${TURNSTILE:-turnstile}
python=${PYTHON:-python3}
node=${NODE:-node}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# expect_starter CMD: the unfilled starter's run fails with its FILL message, and only so.
expect_starter() {
	local out status=0
	out=$("$turnstile" conform --impl "$1" --run 'events/text-only$' 2>&1) || status=$?
	if [ "$status" -ne 1 ] || ! grep -q 'fill the places marked FILL' <<<"$out"; then
		echo "$out" | tail -30
		echo "check-install: the starter ($1) did not fail with its FILL message (exit $status)" >&2
		exit 1
	fi
	echo "check-install: starter ok: $1 fails as unfilled"
}

# expect_pass CMD REGEXP: those scenarios pass.
expect_pass() {
	local out status=0
	out=$("$turnstile" conform --impl "$1" --run "$2" 2>&1) || status=$?
	if [ "$status" -ne 0 ]; then
		echo "$out" | tail -40
		echo "check-install: $1 failed on $2 (exit $status)" >&2
		exit 1
	fi
	echo "check-install: $1: $(tail -1 <<<"$out")"
}

# TypeScript: the tarball npm pack makes, installed into a new project.
ts="$tmp/ts-project"
mkdir -p "$ts"
(cd "$repo/kits/ts" && npm pack --silent --pack-destination "$ts" >/dev/null)
cd "$ts"
npm init -y >/dev/null
tsx=$("$node" -p 'require(process.argv[1]).devDependencies.tsx' "$repo/examples/six-duties/package.json")
npm install --no-audit --no-fund --silent ./turnstile-kit-*.tgz "tsx@$tsx"
test -f node_modules/turnstile-kit/package.json && ! test -L node_modules/turnstile-kit
cp node_modules/turnstile-kit/starter-adapter.mjs my-adapter.mjs
expect_starter "$node my-adapter.mjs"
cp "$repo/examples/six-duties/loop.ts" "$repo/examples/six-duties/adapter.ts" .
expect_pass "$node --import tsx adapter.ts" '^abort-error/(open-error-fails-run|stream-throws-fails-run)$'

# Python: pip into a venv (the system site packages give it setuptools and wheel).
if ! "$python" -c 'import setuptools, wheel' 2>/dev/null; then
	echo "check-install: $python lacks setuptools or wheel, which pip needs to build the kit without an index (--no-build-isolation); give PYTHON=/usr/bin/python3 (Debian: python3-setuptools python3-wheel python3-venv)" >&2
	exit 1
fi
py="$tmp/py-project"
mkdir -p "$py"
cd "$py"
"$python" -m venv --system-site-packages venv
venv/bin/python -m pip install --quiet --no-build-isolation --no-index "$repo/kits/python"
where=$(venv/bin/python -c 'import turnstile_kit; print(turnstile_kit.__file__)')
case "$where" in "$py"/venv/*) ;; *) echo "check-install: turnstile_kit imported from $where, not the venv" >&2; exit 1;; esac
cp "$repo/kits/python/starter_adapter.py" my_adapter.py
expect_starter "$py/venv/bin/python my_adapter.py"
# The example loop, copied out of the checkout, imports the installed kit (adapter.py falls
# back to it when ../../kits/python is not there).
mkdir loop && cp "$repo"/examples/python-loop/*.py loop/
expect_pass "$py/venv/bin/python loop/adapter.py" '^(events/text-only|tools-parallel/completion-order|queues/steering-one-at-a-time)$'

# The same from git, as pip install "git+https://…#subdirectory=kits/python" would fetch it.
"$python" -m venv --system-site-packages gitvenv
gitvenv/bin/python -m pip install --quiet --no-build-isolation --no-index \
	"git+file://$repo@$(git -C "$repo" rev-parse HEAD)#subdirectory=kits/python"
gitvenv/bin/python -c 'import turnstile_kit, sys; sys.exit(0 if "/gitvenv/" in turnstile_kit.__file__ else 1)'
expect_starter "$py/gitvenv/bin/python my_adapter.py"
# Go: a module of its own in an empty directory, wired to this checkout by go.work, offline
# (GOPROXY=off): its go.mod has no require line for turnstile (go.work's use provides it;
# a require would make go ask the module proxy). The port is the example Agent, imported.
gw="$tmp/go-workspace"
mkdir -p "$gw/myport/cmd/adapter"
cd "$gw/myport"
GOPROXY=off GOFLAGS= go mod init example.com/myport >/dev/null 2>&1
cat >port_test.go <<'GO'
package myport

import (
	"testing"

	"github.com/turnstile-dev/turnstile/conformance/example"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
)

func TestConformance(t *testing.T) { porttest.Test(t, example.AgentPort{}) }
GO
cat >cmd/adapter/main.go <<'GO'
package main

import (
	"os"

	"github.com/turnstile-dev/turnstile/conformance/example"
	"github.com/turnstile-dev/turnstile/conformance/porttest"
)

func main() {
	if err := porttest.Serve(os.Stdin, os.Stdout, example.AgentPort{}); err != nil {
		os.Exit(1)
	}
}
GO
cd "$gw"
GOPROXY=off GOFLAGS= go work init ./myport "$repo"
# A subtest's name is its scenario's, so "events/text-only" is two levels of -run's pattern.
passed=$(cd myport && GOPROXY=off GOFLAGS= go test -v -run '^TestConformance$/^(events|agent)$/^(text-only|steer-all)$' . | grep -c -- '--- PASS: TestConformance/\(events/text-only\|agent/steer-all\) ' || true)
if [ "$passed" != 2 ]; then
	echo "check-install: the Go kit's test passed $passed of the two scenarios it runs" >&2
	exit 1
fi
(cd myport && GOPROXY=off GOFLAGS= go build -o "$gw/adapter" ./cmd/adapter)
expect_pass "$gw/adapter" '^(events/text-only|agent/steer-all)$'
echo "check-install: all three kits install and serve from outside the repository"
