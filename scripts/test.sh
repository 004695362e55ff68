#!/usr/bin/env bash
# The project's whole test run. It first sets up, on a fresh machine, everything the run needs, and skips
# what is already there (so a second run only checks):
#   - Node.js and npm (apt-get, when missing) for the real npm MCP servers the end-to-end tests run;
#   - the npm test servers: `npm ci --prefix testdata/npm`, only when testdata/npm/node_modules is missing
#     or does not hold what package-lock.json pins;
#   - Debian's chromium (apt-get, when /usr/bin/chromium is missing) for the page tests in a real browser;
#   - helm v3.22.0, golangci-lint v2.15.0 and deadcode (golang.org/x/tools v0.52.0), built from source with
#     `go install` (the Go module proxy serves them) into $MCP_EXECUTOR_TOOLS_DIR/bin;
#   - the real Vault, etcd, kube-apiserver and Jaeger binaries and a real single-node cluster that runs
#     pods, built once by the scripts in ../shared/tools.
# Then: go vet, gofmt, golangci-lint, deadcode, every test (unit, end-to-end through the real binary, and
# integration against a real Vault, kube-apiserver and Jaeger) under the race detector, short fuzz runs, the demo.
#
# Usage: scripts/test.sh [setup]     `setup` stops after the set-up.
# Environment (optional): MCP_EXECUTOR_TOOLS_DIR (cache folder, default $HOME/.cache/mcp-executor-tools,
# shared with ../shared/tools), MCP_EXECUTOR_SHARED_TOOLS (default ../shared/tools), FUZZTIME.
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLS_DIR="${MCP_EXECUTOR_TOOLS_DIR:-$HOME/.cache/mcp-executor-tools}"
tools="${MCP_EXECUTOR_SHARED_TOOLS:-../shared/tools}"
BIN="$TOOLS_DIR/bin"
export PATH="$BIN:$PATH"

step() { echo "== $*"; }
fail() { echo "test.sh: $*" >&2; exit 1; }

# go_tool NAME PACKAGE MODULE VERSION: `go install PACKAGE@VERSION` into $BIN unless the binary there was
# built from MODULE at VERSION (read from the binary itself with `go version -m`, which works for every tool
# and needs no tool-specific version flag).
go_tool() {
	local name=$1 pkg=$2 module=$3 version=$4 have
	have=$({ go version -m "$BIN/$name" 2>/dev/null || true; } | awk -v m="$module" '$1 == "mod" && $2 == m {print $3}')
	[ "$have" = "$version" ] && return 0
	step "install $name $version (go install $pkg@$version, into $BIN)"
	GOBIN="$BIN" go install "$pkg@$version"
}

# npm_fresh: exit 0 when testdata/npm/node_modules holds exactly what package-lock.json pins. npm ci writes
# the installed tree to node_modules/.package-lock.json (the same entries as the lock file, without the root
# package); the two are compared by the SHA-256 of their canonical form.
npm_fresh() {
	[ -f testdata/npm/node_modules/.package-lock.json ] || return 1
	node - <<'EOF'
const fs = require("fs"), crypto = require("crypto");
const packages = (file) => JSON.parse(fs.readFileSync(file, "utf8")).packages || {};
const canon = (v) => Array.isArray(v) ? "[" + v.map(canon).join(",") + "]"
	: v && typeof v === "object" ? "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canon(v[k])).join(",") + "}"
	: JSON.stringify(v);
const hash = (v) => crypto.createHash("sha256").update(canon(v)).digest("hex");
const pinned = packages("testdata/npm/package-lock.json");
delete pinned[""];
process.exit(hash(pinned) === hash(packages("testdata/npm/node_modules/.package-lock.json")) ? 0 : 1);
EOF
}

setup() {
	command -v go >/dev/null || fail "Go 1.26 is needed: https://go.dev/dl/"
	mkdir -p "$BIN"

	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		step "install Node.js and npm (apt-get)"
		local sudo=""
		[ "$(id -u)" = 0 ] || sudo=sudo
		command -v apt-get >/dev/null || fail "Node.js and npm are needed and this machine has no apt-get: install them, then run again"
		$sudo apt-get update -qq && $sudo apt-get install -y -qq nodejs npm
	fi
	if ! npm_fresh; then
		step "install the npm test servers (npm ci --prefix testdata/npm)"
		npm ci --prefix testdata/npm --no-audit --no-fund --loglevel=error
		npm_fresh || fail "testdata/npm/node_modules still differs from package-lock.json after npm ci"
	fi

	if [ ! -x /usr/bin/chromium ]; then
		step "install Debian's chromium (apt-get), for the person's page tests in a real browser"
		local sudo_c=""
		[ "$(id -u)" = 0 ] || sudo_c=sudo
		$sudo_c apt-get install -y -qq chromium || { $sudo_c apt-get update -qq && $sudo_c apt-get install -y -qq chromium; }
	fi

	go_tool helm helm.sh/helm/v3/cmd/helm helm.sh/helm/v3 v3.22.0
	go_tool golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint github.com/golangci/golangci-lint/v2 v2.15.0
	go_tool deadcode golang.org/x/tools/cmd/deadcode golang.org/x/tools v0.52.0

	[ -x "$tools/vault-dev.sh" ] && [ -x "$tools/kube-test-cluster.sh" ] && [ -x "$tools/jaeger-dev.sh" ] ||
		fail "the scripts that build the real Vault and kube-apiserver are not in $tools: set MCP_EXECUTOR_SHARED_TOOLS to their folder"
	step "build (once) the real Vault, etcd and kube-apiserver into $TOOLS_DIR"
	MCP_EXECUTOR_TOOLS_DIR="$TOOLS_DIR" "$tools/vault-dev.sh" build
	MCP_EXECUTOR_TOOLS_DIR="$TOOLS_DIR" "$tools/kube-test-cluster.sh" build
	MCP_EXECUTOR_TOOLS_DIR="$TOOLS_DIR" "$tools/jaeger-dev.sh" build
	step "build (once) the real single-node cluster (kubelet, scheduler, controller-manager; containerd from Debian)"
	MCP_EXECUTOR_TOOLS_DIR="$TOOLS_DIR" "$tools/kube-real-cluster.sh" build >/dev/null

	go mod download
}

step "set up (node $(node --version 2>/dev/null || echo missing), $(go version 2>/dev/null | awk '{print $3}'))"
mkdir -p "$TOOLS_DIR"
# One set-up at a time on a machine: two runs would otherwise race on npm ci, go install or a build.
exec 9>"$TOOLS_DIR/.test-setup.lock"
flock 9
setup
flock -u 9
[ "${1:-}" = setup ] && exit 0

step "go vet"
go vet ./...
go vet -tags integration ./...
step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then echo "not gofmt-formatted:"; echo "$unformatted"; exit 1; fi
step "golangci-lint (.golangci.yml)"
golangci-lint run --allow-parallel-runners ./...
step "deadcode (functions nothing reaches, counting tests)"
dead=$(deadcode -test -tags integration ./...)
if [ -n "$dead" ]; then echo "unreachable functions:"; echo "$dead"; exit 1; fi

step "start the real Vault, kube-apiserver, single-node cluster and Jaeger the integration tests use"
export MCP_EXECUTOR_TOOLS_DIR="$TOOLS_DIR"
stop_servers() {
	"$tools/kube-real-cluster.sh" stop >/dev/null 2>&1 || true
	"$tools/vault-dev.sh" stop >/dev/null 2>&1 || true
	"$tools/kube-test-cluster.sh" stop >/dev/null 2>&1 || true
	"$tools/jaeger-dev.sh" stop >/dev/null 2>&1 || true
}
trap stop_servers EXIT
eval "$("$tools/kube-test-cluster.sh" start)"
eval "$("$tools/vault-dev.sh" start)"
# Jaeger's OTEL_EXPORTER_OTLP_ENDPOINT reaches the trace tests only: every other test runs without it.
eval "$("$tools/jaeger-dev.sh" start | sed 's/^export OTEL_EXPORTER_OTLP_ENDPOINT=/export MCP_EXECUTOR_TEST_OTLP_ENDPOINT=/')"
# The real cluster (deploy/cluster): its lines are exported with the prefix REAL_CLUSTER_ so that they
# do not replace the kube-apiserver-only cluster's KUBECONFIG the other integration tests use.
real_env=$("$tools/kube-real-cluster.sh" start)
eval "$(printf '%s\n' "$real_env" | sed 's/^export /export REAL_CLUSTER_/')"
export REAL_CLUSTER_TOOLS="$(cd "$tools" && pwd)"

step "all tests, unit, end-to-end and integration (-race)"
# A race-built process sleeps atexit_sleep_ms (default 1000) when it exits, so that other threads can
# finish a report; the end-to-end tests start several such processes each (executor, guard, test
# servers, verify). The detector stays on; a race found still fails the run.
export GORACE="${GORACE:-atexit_sleep_ms=50}"
go test -race -count=1 -timeout 30m -tags integration ./...

step "short fuzz runs of the parsers that face untrusted bytes"
# A count, not a duration: a time limit can end a run while a worker is mid-input, which the Go fuzzer
# reports as a failure ("context deadline exceeded") though nothing failed.
fuzz() { go test -run '^$' -fuzz "^$2\$" -fuzztime "${FUZZTIME:-200000x}" -fuzzminimizetime 1x "$1"; }
fuzz ./receipts/canon/ FuzzParse
fuzz ./receipts/canon/ FuzzUnB64
fuzz ./receipts/record/ FuzzParse
fuzz ./sidecar/wire/ FuzzInspect
fuzz ./sidecar/contentrules/ FuzzParse
fuzz ./sidecar/contentrules/ FuzzPattern
fuzz ./copylog/ FuzzVerify
# Parsers added later (a smaller count each, to keep a warm run short).
FUZZTIME="${FUZZTIME:-50000x}"
fuzz ./sidecar/wire/ FuzzDifferential
fuzz ./sidecar/wire/ FuzzFilterTools
fuzz ./receipts/canon/ FuzzJCSHash
fuzz ./receipts/book/ FuzzReadEntries
fuzz ./sidecar/approval/ FuzzParseFile
fuzz ./sidecar/page/ FuzzSignedFile
fuzz ./sidecar/policy/glob/ FuzzMatch
fuzz ./sidecar/policy/redact/ FuzzJSON
fuzz ./sidecar/settings/ FuzzParseYAML

step "demo"
go run ./cmd/mcp-executor demo
