#!/usr/bin/env bash
# The project's whole test run. It first sets up, on a fresh machine, everything the run needs, and skips
# what is already there (so a second run only checks):
#   - Debian packages, with apt-get, when missing: Node.js and npm (the real npm MCP servers and the
#     TypeScript SDK clients), chromium (the person's page in a real browser), openssl (a time-stamp
#     authority), what the one-node cluster runs on (containerd, runc, the CNI plugins, busybox), and
#     ShellCheck for the scripts;
#   - the npm test packages: `npm ci --prefix testdata/npm`, only when testdata/npm/node_modules is missing
#     or does not hold what package-lock.json pins;
#   - helm v3.22.0, golangci-lint v2.15.0 and deadcode (golang.org/x/tools v0.52.0), built from source with
#     `go install` (the Go module proxy serves them) into $MCP_EXECUTOR_TOOLS_DIR/bin;
#   - the real servers of the integration tests, built once into $MCP_EXECUTOR_TOOLS_DIR by the scripts in
#     scripts/testenv: Vault, etcd and kube-apiserver, the rest of a one-node cluster that runs pods
#     (kubelet, scheduler, controller manager; kubectl, linked into $MCP_EXECUTOR_TOOLS_DIR/bin), Jaeger,
#     Sigstore's timestamp-server, and the go-sdk conformance server.
# Then: go vet, gofmt, shellcheck, golangci-lint, deadcode, every test (unit, end-to-end through the real binary, and
# integration against the real servers) under the race detector, short fuzz runs, the demo. The servers
# start in the background during vet, gofmt, golangci-lint and deadcode and stop at the end, whatever
# happened; the fuzz runs go beside the tests.
#
# Usage: scripts/test.sh [setup]     `setup` stops after the set-up.
# Environment (optional): MCP_EXECUTOR_TOOLS_DIR (cache folder, default $HOME/.cache/mcp-executor-tools),
# FUZZTIME.
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLS_DIR="${MCP_EXECUTOR_TOOLS_DIR:-$HOME/.cache/mcp-executor-tools}"
export MCP_EXECUTOR_TOOLS_DIR="$TOOLS_DIR"
BIN="$TOOLS_DIR/bin"
export PATH="$BIN:$PATH"
testenv=scripts/testenv
run_start=$SECONDS

step() { echo "== [$(date +%H:%M:%S)] $*"; }
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

# debian_packages: install, in one apt-get, the Debian packages the run needs that are missing (judged by
# the commands and files they bring).
debian_packages() {
	local want=() sudo=""
	command -v node >/dev/null && command -v npm >/dev/null || want+=(nodejs npm)
	[ -x /usr/bin/chromium ] || want+=(chromium)
	command -v openssl >/dev/null || want+=(openssl)
	command -v curl >/dev/null || want+=(curl)
	command -v flock >/dev/null && command -v unshare >/dev/null && command -v nsenter >/dev/null || want+=(util-linux)
	command -v ip >/dev/null && command -v ss >/dev/null || want+=(iproute2)
	command -v containerd >/dev/null && command -v ctr >/dev/null || want+=(containerd)
	command -v runc >/dev/null || want+=(runc)
	[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] || want+=(containernetworking-plugins)
	command -v busybox >/dev/null || want+=(busybox-static)
	command -v shellcheck >/dev/null || want+=(shellcheck)
	[ ${#want[@]} -gt 0 ] || return 0
	step "install Debian packages: ${want[*]} (apt-get)"
	command -v apt-get >/dev/null || fail "these Debian packages are needed and this machine has no apt-get: ${want[*]}"
	[ "$(id -u)" = 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${want[@]}"
}

setup() {
	command -v go >/dev/null || fail "Go 1.26 is needed: https://go.dev/dl/"
	mkdir -p "$BIN"
	debian_packages
	if ! npm_fresh; then
		step "install the npm test packages (npm ci --prefix testdata/npm)"
		npm ci --prefix testdata/npm --no-audit --no-fund --loglevel=error
		npm_fresh || fail "testdata/npm/node_modules still differs from package-lock.json after npm ci"
	fi

	go_tool helm helm.sh/helm/v3/cmd/helm helm.sh/helm/v3 v3.22.0
	go_tool golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint github.com/golangci/golangci-lint/v2 v2.15.0
	go_tool deadcode golang.org/x/tools/cmd/deadcode golang.org/x/tools v0.52.0

	step "build (once) the real servers into $TOOLS_DIR (scripts/testenv/servers.sh build)"
	"$testenv/servers.sh" build
	# kubectl of the cluster's version, for the tests that run it by name.
	ln -sfn "$("$testenv/cluster.sh" env | sed -n 's/^export REAL_CLUSTER_KUBECTL=//p')" "$BIN/kubectl"

	go mod download
}

step "set up (node $(node --version 2>/dev/null || echo missing), $(go version 2>/dev/null | awk '{print $3}'))"
mkdir -p "$TOOLS_DIR"
# One set-up at a time on a machine: two runs would otherwise race on npm ci, go install or a build.
exec 9>"$TOOLS_DIR/.test-setup.lock"
flock 9
setup
flock -u 9
step "set-up done in $((SECONDS - run_start)) s"
[ "${1:-}" = setup ] && exit 0

# The servers start in the background while vet, gofmt, golangci-lint and deadcode run: their start-up is
# mostly waiting for health checks, the checks are mostly CPU. servers.sh starts them all at once; its
# export lines go to $svc/env and its log to $svc/log. Whatever happens after this, stop_servers stops
# those it started (its last line names them; one that ran before the run is left running) and so undoes
# what the cluster changed on the host.
step "start, in the background, the real servers the integration tests use (scripts/testenv/servers.sh start)"
svc=$(mktemp -d)
fuzzing="" # the background fuzz runs (see fuzz_all), while they run
starting=""
stop_servers() {
	if [ -n "$fuzzing" ]; then
		touch "$svc/stop" # the fuzz runs stop after the current one
		wait "$fuzzing" || true
	fi
	# A start still under way (the run failed before the tests) ends first, so that what it started stops.
	[ -z "$starting" ] || wait "$starting" || true
	local started
	started=$(sed -n 's/^export MCP_EXECUTOR_TESTENV_STARTED=//p' "$svc/env" 2>/dev/null)
	if [ -n "$started" ]; then
		# shellcheck disable=SC2086 # the names, one word each
		"$testenv/servers.sh" stop ${started//,/ } >/dev/null 2>&1 ||
			echo "test.sh: stopping the servers failed: run $testenv/servers.sh stop ${started//,/ }" >&2
	fi
	rm -rf "$svc"
}
trap stop_servers EXIT
"$testenv/servers.sh" start >"$svc/env" 2>"$svc/log" &
starting=$!

step "go vet"
go vet ./...
go vet -tags integration ./...
step "gofmt"
unformatted=$(git ls-files -z '*.go' | xargs -0 gofmt -l)
if [ -n "$unformatted" ]; then echo "not gofmt-formatted:"; echo "$unformatted"; exit 1; fi
step "shellcheck (scripts)"
shellcheck -x scripts/test.sh scripts/testenv/*.sh scripts/testenv/conformance-suite .ci/run
step "golangci-lint (.golangci.yml)"
golangci-lint run --allow-parallel-runners ./...
step "deadcode (functions nothing reaches, counting tests)"
dead=$(deadcode -test -tags integration ./...)
if [ -n "$dead" ]; then echo "unreachable functions:"; echo "$dead"; exit 1; fi

step "wait for the real servers"
rc=0
wait "$starting" || rc=$?
starting=""
cat "$svc/log" >&2
[ "$rc" = 0 ] || fail "$testenv/servers.sh start failed (exit $rc); its log is above"
# VAULT_*, KUBECONFIG and KUBE_* (the kube-apiserver alone), REAL_CLUSTER_* (the one-node cluster),
# MCP_EXECUTOR_TEST_OTLP_ENDPOINT and JAEGER_QUERY_URL, MCP_EXECUTOR_TEST_TSA_*, MCP_EXECUTOR_TEST_OPENSSL_TSA_*,
# MCP_EXECUTOR_TEST_CONFORMANCE_*: see scripts/testenv/servers.sh.
eval "$(cat "$svc/env")"

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
	./sidecar/front/streamhttp/ FuzzParseEventID later
	./sidecar/front/streamhttp/ FuzzDecodeName later
	./sidecar/front/streamhttp/ FuzzJSONText later
	./sidecar/front/streamhttp/ FuzzHeaders later
	./sidecar/front/streamhttp/ FuzzAppendEvent later
	./sidecar/front/streamhttp/ FuzzParseTokens later
	./sidecar/front/streamhttp/ FuzzParamAgrees later
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
step "the whole run took $((SECONDS - run_start)) s"
