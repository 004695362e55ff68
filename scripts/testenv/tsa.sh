#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# tsa.sh: an RFC 3161 time-stamp authority on 127.0.0.1: Sigstore's timestamp-server with its in-memory
# signer (a fresh ECDSA key and certificate chain each start), for the tests of time-stamped seals.
#
# usage: tsa.sh build|start|stop|env|status
#   build   build timestamp-server into $TOOLS_DIR/timestamp-authority-$VERSION/, unless it is there
#   start   build, start it in the background, wait until it answers, save its certificate chain,
#           print the lines below
#   stop    stop it
#   env     print the export lines: MCP_EXECUTOR_TEST_TSA_URL (POST a DER TimeStampReq there with
#           Content-Type application/timestamp-query; the answer is a DER TimeStampResp) and
#           MCP_EXECUTOR_TEST_TSA_CHAIN (the chain as PEM, leaf first, the root last)
#   status  exit 0 when it runs and answers
#
# Variables (optional): MCP_EXECUTOR_TOOLS_DIR, TSA_TEST_VERSION (v1.2.9; v2 needs Go 1.27),
# TSA_TEST_PORT (18330), GO.
#
# Two changes to how the server runs, both so that it talks to nothing and listens only where asked:
# start turns its NTP monitoring off (it would ask public time servers), and the build takes a copy of
# the source in which its Prometheus listener, fixed at :2112 on every address, is moved to a free port
# on 127.0.0.1 (two runs on one machine would otherwise fight over 2112, and the loser exits).
set -euo pipefail
TESTENV_NAME=tsa
. "$(dirname "$0")/lib.sh"

VERSION="${TSA_TEST_VERSION:-v1.2.9}"
PORT="${TSA_TEST_PORT:-18330}"
BIN="$TOOLS_DIR/timestamp-authority-$VERSION/timestamp-server"
STATE="$RUN_DIR/tsa-$PORT"
BASE="http://127.0.0.1:$PORT/api/v1/timestamp"

build() {
	[ -x "$BIN" ] && return 0
	local src
	src="$(dirname "$BIN")/src"
	say "building Sigstore's timestamp-server $VERSION (about 2 to 4 min on 2 cores)"
	copy_module "github.com/sigstore/timestamp-authority@$VERSION" "$src"
	grep -q 'Addr:[[:space:]]*":2112"' "$src/pkg/server/prometheus.go" ||
		die "pkg/server/prometheus.go of timestamp-authority $VERSION no longer listens on \":2112\": look at it again"
	sed -i -E 's/Addr:([[:space:]]*)":2112"/Addr:\1"127.0.0.1:0"/' "$src/pkg/server/prometheus.go"
	(cd "$src" && go_build_env "$GO" build -ldflags "-s -w" -o "$BIN.part" ./cmd/timestamp-server)
	mv "$BIN.part" "$BIN"
	rm -rf "$src"
}

answers() { curl -fsS --max-time 2 -o "$STATE/chain.pem.part" "$BASE/certchain" 2>/dev/null; }

print_env() {
	echo "export MCP_EXECUTOR_TEST_TSA_URL=$BASE"
	echo "export MCP_EXECUTOR_TEST_TSA_CHAIN=$STATE/chain.pem"
}

start() {
	locked build-tsa build
	mkdir -p "$STATE"
	if alive "$STATE/tsa.pid"; then
		answers || die "timestamp-server (pid $(cat "$STATE/tsa.pid")) runs but does not answer; see $STATE/tsa.log"
		print_env
		return 0
	fi
	ports_free "$PORT"
	rm -f "$STATE/chain.pem"
	HOME="$STATE" daemon "$STATE/tsa.pid" "$STATE/tsa.log" --dir "$STATE" "$BIN" serve \
		--host 127.0.0.1 --port "$PORT" --timestamp-signer memory --disable-ntp-monitoring --log-type prod
	wait_until timestamp-server "$STATE/tsa.pid" "$STATE/tsa.log" 60 answers || { stop; exit 1; }
	grep -q 'BEGIN CERTIFICATE' "$STATE/chain.pem.part" || die "$BASE/certchain gave no PEM certificates"
	mv "$STATE/chain.pem.part" "$STATE/chain.pem"
	say "timestamp-server $VERSION on $BASE"
	print_env
}

stop() { stop_pid "$STATE/tsa.pid"; }

case "${1:-}" in
build) locked build-tsa build ;;
start) start ;;
stop) stop ;;
env) print_env ;;
status) alive "$STATE/tsa.pid" && answers ;;
*) usage "$0 build|start|stop|env|status" ;;
esac
