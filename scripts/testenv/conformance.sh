#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# conformance.sh: the MCP conformance pair: the Go SDK's conformance "everything" server (a real server
# for tests, from the module github.com/modelcontextprotocol/go-sdk) and the conformance suite
# (@modelcontextprotocol/conformance from testdata/npm). Nothing runs in the background: a test starts
# the server itself, over stdio, or over streamable HTTP with `-http 127.0.0.1:PORT` (stateless unless
# `-stateless=false`), and runs the suite against what it wants to check.
#
# usage: conformance.sh build|env|status
#   build   build everything-server into $TOOLS_DIR/go-sdk-$VERSION/, unless it is there
#   env     print the export lines: MCP_EXECUTOR_TEST_CONFORMANCE_SERVER (the server binary) and
#           MCP_EXECUTOR_TEST_CONFORMANCE_SUITE (conformance-suite beside this script: the suite's
#           command line, e.g. `$MCP_EXECUTOR_TEST_CONFORMANCE_SUITE server --url URL`)
#   status  exit 0 when both are there (the suite after `npm ci --prefix testdata/npm`)
#   start   the same as env, after build (so that every script here takes start)
#   stop    nothing to stop
#
# Variables (optional): MCP_EXECUTOR_TOOLS_DIR, CONFORMANCE_TEST_GO_SDK_VERSION (v1.8.0), GO.
set -euo pipefail
TESTENV_NAME=conformance
. "$(dirname "$0")/lib.sh"

VERSION="${CONFORMANCE_TEST_GO_SDK_VERSION:-v1.8.0}"
BIN="$TOOLS_DIR/go-sdk-$VERSION/everything-server"
SUITE="$TESTENV_DIR/conformance-suite"

build() {
	[ -x "$BIN" ] && return 0
	say "building the go-sdk $VERSION conformance everything-server (under a minute)"
	mkdir -p "$(dirname "$BIN")"
	GOBIN="$(dirname "$BIN")" go_build_env "$GO" install -ldflags "-s -w" \
		"github.com/modelcontextprotocol/go-sdk/conformance/everything-server@$VERSION"
}

print_env() {
	echo "export MCP_EXECUTOR_TEST_CONFORMANCE_SERVER=$BIN"
	echo "export MCP_EXECUTOR_TEST_CONFORMANCE_SUITE=$SUITE"
}

case "${1:-}" in
build) locked build-conformance build ;;
start) locked build-conformance build && print_env ;;
stop) ;;
env) print_env ;;
status) [ -x "$BIN" ] && "$SUITE" --version >/dev/null 2>&1 ;;
*) usage "$0 build|start|stop|env|status" ;;
esac
