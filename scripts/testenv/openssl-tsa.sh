#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# openssl-tsa.sh: a second RFC 3161 time-stamp authority on 127.0.0.1, signing with RSA through
# OpenSSL's `openssl ts -reply` (Debian's openssl) behind the small HTTP front of
# internal/testtools/opensslts. A new root CA and TSA certificate (extendedKeyUsage timeStamping,
# critical) are made at each start.
#
# usage: openssl-tsa.sh build|start|stop|env|status
#   build   build the front from this checkout into the state folder
#   start   build, start it in the background, wait until it serves, print the lines below
#   stop    stop it
#   env     print the export lines: MCP_EXECUTOR_TEST_OPENSSL_TSA_URL (POST a DER TimeStampReq there,
#           Content-Type application/timestamp-query) and MCP_EXECUTOR_TEST_OPENSSL_TSA_CHAIN (PEM: the
#           TSA's certificate, then the root)
#   status  exit 0 when it runs and serves
#
# Variables (optional): MCP_EXECUTOR_TOOLS_DIR, OPENSSL_TSA_TEST_PORT (18331), GO.
set -euo pipefail
TESTENV_NAME=openssl-tsa
. "$(dirname "$0")/lib.sh"

PORT="${OPENSSL_TSA_TEST_PORT:-18331}"
STATE="$RUN_DIR/openssl-tsa-$PORT"
BIN="$STATE/opensslts"
URL="http://127.0.0.1:$PORT/"

build() {
	command -v openssl >/dev/null || die "openssl is not installed (apt-get install openssl)"
	mkdir -p "$STATE"
	(cd "$REPO_DIR" && "$GO" build -o "$BIN.part" ./internal/testtools/opensslts)
	mv "$BIN.part" "$BIN"
}

answers() { curl -fsS --max-time 2 -o /dev/null "${URL}chain.pem" 2>/dev/null; }

print_env() {
	echo "export MCP_EXECUTOR_TEST_OPENSSL_TSA_URL=$URL"
	echo "export MCP_EXECUTOR_TEST_OPENSSL_TSA_CHAIN=$STATE/ca/chain.pem"
}

start() {
	if alive "$STATE/opensslts.pid"; then
		answers || die "opensslts (pid $(cat "$STATE/opensslts.pid")) runs but does not answer; see $STATE/opensslts.log"
		print_env
		return 0
	fi
	build
	ports_free "$PORT"
	rm -rf "$STATE/ca"
	daemon "$STATE/opensslts.pid" "$STATE/opensslts.log" --dir "$STATE" \
		"$BIN" -listen "127.0.0.1:$PORT" -dir "$STATE/ca" -openssl "$(command -v openssl)"
	wait_until opensslts "$STATE/opensslts.pid" "$STATE/opensslts.log" 60 answers || { stop; exit 1; }
	say "OpenSSL's ts behind opensslts on $URL"
	print_env
}

stop() { stop_pid "$STATE/opensslts.pid"; }

case "${1:-}" in
build) build ;;
start) start ;;
stop) stop ;;
env) print_env ;;
status) alive "$STATE/opensslts.pid" && answers ;;
*) usage "$0 build|start|stop|env|status" ;;
esac
