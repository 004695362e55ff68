#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# vault.sh: a HashiCorp Vault dev server on 127.0.0.1 for the tests of keys in Vault (KV v2, Transit,
# Kubernetes auth, AppRole).
#
# usage: vault.sh build|start|stop|env|status
#   build   build vault into $TOOLS_DIR/vault-$VERSION/vault, unless it is there
#   start   build, then run `vault server -dev` in the background (in-memory, root token), wait until it
#           answers, print the export lines below
#   stop    stop what start started
#   env     print the export lines: VAULT_ADDR, VAULT_TOKEN, VAULT_BIN (the binary, which the cluster
#           tests put in an image)
#   status  exit 0 when it runs and answers
#
# Variables (optional): MCP_EXECUTOR_TOOLS_DIR (the cache, default ~/.cache/mcp-executor-tools),
# VAULT_TEST_VERSION (v1.21.0), VAULT_TEST_PORT (8200), VAULT_TEST_TOKEN (root), GO.
#
# The build: the module zip of github.com/hashicorp/vault keeps `replace` lines that point its api and
# sdk modules at folders of the repository which the zip does not hold, so `go install vault@v` fails.
# A copy of the source with only those lines taken out builds against the api and sdk versions its
# go.mod requires (for an x.y.0 release such as v1.21.0 they are the same code).
set -euo pipefail
TESTENV_NAME=vault
. "$(dirname "$0")/lib.sh"

VERSION="${VAULT_TEST_VERSION:-v1.21.0}"
PORT="${VAULT_TEST_PORT:-8200}"
TOKEN="${VAULT_TEST_TOKEN:-root}"
BIN="$TOOLS_DIR/vault-$VERSION/vault"
STATE="$RUN_DIR/vault-$PORT"
ADDR="http://127.0.0.1:$PORT"

build() {
	[ -x "$BIN" ] && return 0
	local src="$TOOLS_DIR/vault-$VERSION/src"
	say "building vault $VERSION (the longest build: 12 to 20 min on 2 cores, some 3.5 GB of Go caches)"
	copy_module "github.com/hashicorp/vault@$VERSION" "$src"
	sed -i -E '/^replace[[:space:]]+github\.com\/hashicorp\/vault\/(api|sdk)([[:space:]]|\/)/d' "$src/go.mod"
	if grep -qE '=>[[:space:]]+\./' "$src/go.mod"; then
		die "a replace to a local folder is left in vault's go.mod: $(grep -E '=>[[:space:]]+\./' "$src/go.mod")"
	fi
	(cd "$src" && go_build_env "$GO" build -ldflags "-s -w" -o "$BIN.part" .)
	mv "$BIN.part" "$BIN"
	rm -rf "$src"
}

answers() { VAULT_ADDR="$ADDR" VAULT_TOKEN="$TOKEN" "$BIN" status >/dev/null 2>&1; }

print_env() {
	echo "export VAULT_ADDR=$ADDR"
	echo "export VAULT_TOKEN=$TOKEN"
	echo "export VAULT_BIN=$BIN"
}

start() {
	build
	mkdir -p "$STATE"
	if alive "$STATE/vault.pid"; then
		answers || die "vault (pid $(cat "$STATE/vault.pid")) runs but does not answer; see $STATE/vault.log"
		print_env
		return 0
	fi
	ports_free "$PORT"
	# HOME is the state folder, so that the dev server's token helper writes nothing into the real one.
	HOME="$STATE" VAULT_ADDR='' VAULT_TOKEN='' daemon "$STATE/vault.pid" "$STATE/vault.log" --dir "$STATE" \
		"$BIN" server -dev -dev-root-token-id="$TOKEN" -dev-listen-address="127.0.0.1:$PORT" -dev-no-store-token
	wait_until "vault" "$STATE/vault.pid" "$STATE/vault.log" 60 answers || { stop; exit 1; }
	say "vault $VERSION dev server on $ADDR (pid $(cat "$STATE/vault.pid"))"
	print_env
}

stop() { stop_pid "$STATE/vault.pid"; }

case "${1:-}" in
build) build ;;
start) start ;;
stop) stop ;;
env) print_env ;;
status) alive "$STATE/vault.pid" && answers ;;
*) usage "$0 build|start|stop|env|status" ;;
esac
