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
# The servers start in the background during vet, gofmt, golangci-lint and deadcode; the fuzz runs go beside
# the tests.
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

# The services the integration tests use start in the background while vet, gofmt, golangci-lint and
# deadcode run: their start-up is mostly waiting for health checks, the checks are mostly CPU. Each
# start script's export lines and log go to a file in $svc; server_ready waits for them.
step "start, in the background, the real Vault, kube-apiserver, single-node cluster and Jaeger the integration tests use"
export MCP_EXECUTOR_TOOLS_DIR="$TOOLS_DIR"
svc=$(mktemp -d)
fuzzing="" # the background fuzz runs (see fuzz_all), while they run
stop_servers() {
	if [ -n "$fuzzing" ]; then
		touch "$svc/stop" # the fuzz runs stop after the current one
		wait "$fuzzing" || true
	fi
	wait "${starting[@]}" || true # a start still under way (the run failed before the tests) ends first, so that its server is stopped
	"$tools/kube-real-cluster.sh" stop >/dev/null 2>&1 || true
	"$tools/vault-dev.sh" stop >/dev/null 2>&1 || true
	"$tools/kube-test-cluster.sh" stop >/dev/null 2>&1 || true
	"$tools/jaeger-dev.sh" stop >/dev/null 2>&1 || true
	rm -rf "$svc"
}
trap stop_servers EXIT
declare -A starting
for s in kube-test-cluster vault-dev jaeger-dev kube-real-cluster; do
	"$tools/$s.sh" start >"$svc/$s.env" 2>"$svc/$s.log" &
	starting[$s]=$!
done
# server_ready NAME: wait for NAME's start and show its log; fail when it failed. Its export lines
# are then in $svc/NAME.env.
server_ready() {
	local rc=0
	wait "${starting[$1]}" || rc=$?
	cat "$svc/$1.log" >&2
	[ "$rc" = 0 ] || fail "$tools/$1.sh start failed (exit $rc); its log is above"
}

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

step "wait for the real Vault, kube-apiserver, single-node cluster and Jaeger"
server_ready kube-test-cluster
eval "$(cat "$svc/kube-test-cluster.env")"
server_ready vault-dev
eval "$(cat "$svc/vault-dev.env")"
# Jaeger's OTEL_EXPORTER_OTLP_ENDPOINT reaches the trace tests only: every other test runs without it.
server_ready jaeger-dev
eval "$(sed 's/^export OTEL_EXPORTER_OTLP_ENDPOINT=/export MCP_EXECUTOR_TEST_OTLP_ENDPOINT=/' "$svc/jaeger-dev.env")"
# The real cluster (deploy/cluster): its lines are exported with the prefix REAL_CLUSTER_ so that they
# do not replace the kube-apiserver-only cluster's KUBECONFIG the other integration tests use.
server_ready kube-real-cluster
eval "$(sed 's/^export /export REAL_CLUSTER_/' "$svc/kube-real-cluster.env")"
export REAL_CLUSTER_TOOLS="$(cd "$tools" && pwd)"

# The short fuzz runs of the parsers that face untrusted bytes go beside the tests, one fuzz worker
# each (-parallel 1): the end-to-end tests leave a core mostly idle while they wait on processes.
# A count, not a duration: a time limit can end a run while a worker is mid-input, which the Go fuzzer
# reports as a failure ("context deadline exceeded") though nothing failed. The parsers added later
# have a smaller count each, to keep a warm run short. Each run starts unless $svc/stop is there.
fuzz_all() {
	local pkg name group fuzztime
	while read -r pkg name group; do
		[ ! -e "$svc/stop" ] || return 1
		fuzztime=${FUZZTIME:-200000x}
		[ "$group" != later ] || fuzztime=${FUZZTIME:-50000x}
		echo "== fuzz $name ($pkg, $fuzztime)"
		go test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" -fuzzminimizetime 1x -parallel 1 "$pkg" || return 1
	done <<-'EOF'
	./receipts/canon/ FuzzParse
	./receipts/canon/ FuzzUnB64
	./receipts/record/ FuzzParse
	./sidecar/wire/ FuzzInspect
	./sidecar/contentrules/ FuzzParse
	./sidecar/contentrules/ FuzzPattern
	./copylog/ FuzzVerify
	./copylog/ FuzzOpenCheckpoint later
	./copylog/ FuzzRawKind later
	./internal/sealed/ FuzzOpen later
	./sidecar/wire/ FuzzDifferential later
	./sidecar/wire/ FuzzFilterTools later
	./receipts/canon/ FuzzJCSHash later
	./receipts/book/ FuzzReadEntries later
	./sidecar/approval/ FuzzParseFile later
	./sidecar/page/ FuzzSignedFile later
	./sidecar/policy/glob/ FuzzMatch later
	./sidecar/policy/redact/ FuzzJSON later
	./sidecar/policy/redact/ FuzzMixed later
	./sidecar/policy/redact/ FuzzFoldName later
	./sidecar/policy/redact/ FuzzDecodeBase64 later
	./sidecar/policy/redact/ FuzzPercentDecode later
	./sidecar/policy/redact/ FuzzName later
	./sidecar/policy/redact/ FuzzPrintable later
	./sidecar/settings/ FuzzParseYAML later
	./sidecar/approval/ FuzzQueueAnswer later
	./sidecar/approval/ FuzzParseElicitResult later
	./sidecar/approval/ FuzzInputAnswer later
	./sidecar/page/ FuzzCancellationFile later
	./sidecar/page/ FuzzRegistration later
	./sidecar/page/ FuzzParseCode later
	./sidecar/page/ FuzzCodeCheck later
	./sidecar/approvalkube/ FuzzApprovalRequest later
	./sidecar/upstream/ FuzzReadEvents later
	./sidecar/upstream/ FuzzErrorBodyMessage later
	./receipts/book/ FuzzVerifyOnEveryCore later
	./receipts/book/ FuzzBlankHybridSignatures later
	./receipts/book/ FuzzVerifyEntries later
	./receipts/der/ FuzzValidate later
	./receipts/stamp/ FuzzCheck later
	./receipts/stamp/ FuzzReadResponse later
	./receipts/seal/ FuzzParseLine later
	./receipts/tree/ FuzzParseState later
	./receipts/book/ FuzzSealedBook later
	./receipts/pass/ FuzzParse later
	./receipts/pass/ FuzzReadText later
	EOF
}

step "all tests, unit, end-to-end and integration (-race); beside them, the short fuzz runs"
# A race-built process sleeps atexit_sleep_ms (default 1000) when it exits, so that other threads can
# finish a report; the end-to-end tests start several such processes each (executor, guard, test
# servers, verify). The detector stays on; a race found still fails the run.
export GORACE="${GORACE:-atexit_sleep_ms=50}"
fuzz_all >"$svc/fuzz.log" 2>&1 &
fuzzing=$!
go test -race -count=1 -timeout 30m -tags integration ./...

step "short fuzz runs of the parsers that face untrusted bytes (they ran beside the tests)"
fuzz_rc=0
wait "$fuzzing" || fuzz_rc=$?
fuzzing=""
cat "$svc/fuzz.log"
[ "$fuzz_rc" = 0 ] || fail "a fuzz run failed (exit $fuzz_rc); its output is above"

step "demo"
go run ./cmd/mcp-executor demo
