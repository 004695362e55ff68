#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# servers.sh: every real server the integration tests use, together.
#
# usage: servers.sh build|start|stop|env|status [NAME...]
#   build   build each, saying how long each took; what is in the cache at the right version is not
#           built again. Vault, the longest build, goes beside the others (two builds at a time: a Go
#           build leaves cores idle while it links and between packages that wait for each other)
#   start   start each in the background, all at once; wait for all; print their export lines on
#           standard output (so: eval "$(scripts/testenv/servers.sh start)"), and last
#           MCP_EXECUTOR_TESTENV_STARTED, the names of those this call started (comma-separated): one that
#           was running already is used as it is, and is not among them. When one fails, its log is
#           shown, what this call started is stopped again, and the exit status is 1.
#   stop    stop each (what was not started is left alone)
#   env     print the export lines of each
#   status  exit 0 when each runs
# NAME is one of the scripts beside this one; without any, all of them:
#   vault           Vault dev server                           VAULT_ADDR, VAULT_TOKEN, VAULT_BIN
#   kube-apiserver  kube-apiserver + etcd                      KUBECONFIG, KUBE_API_SERVER, KUBE_ADMIN_TOKEN, KUBE_CA_FILE
#   cluster         one-node cluster that runs pods (root)     REAL_CLUSTER_*
#   jaeger          Jaeger all-in-one                          MCP_EXECUTOR_TEST_OTLP_ENDPOINT, JAEGER_QUERY_URL, JAEGER_OTLP_GRPC
#   tsa             Sigstore's timestamp-server                MCP_EXECUTOR_TEST_TSA_URL, MCP_EXECUTOR_TEST_TSA_CHAIN
#   openssl-tsa     openssl ts behind an HTTP front            MCP_EXECUTOR_TEST_OPENSSL_TSA_URL, MCP_EXECUTOR_TEST_OPENSSL_TSA_CHAIN
#   conformance     go-sdk everything-server + the suite       MCP_EXECUTOR_TEST_CONFORMANCE_SERVER, MCP_EXECUTOR_TEST_CONFORMANCE_SUITE
set -euo pipefail
TESTENV_NAME=servers
. "$(dirname "$0")/lib.sh"

ALL=(vault kube-apiserver cluster jaeger tsa openssl-tsa conformance)

names() {
	local n a ok
	for n in "$@"; do
		ok=
		for a in "${ALL[@]}"; do [ "$n" = "$a" ] && ok=1; done
		[ -n "$ok" ] || usage "$0 build|start|stop|env|status [${ALL[*]}]"
	done
}

build_one() {
	local t0=$SECONDS
	"$TESTENV_DIR/$1.sh" build >&2 || { say "building $1 failed"; return 1; }
	say "$1: built or found in $((SECONDS - t0)) s"
}

build() {
	local n rest=() vault="" rc=0
	for n in "$@"; do
		if [ "$n" = vault ]; then vault=1; else rest+=("$n"); fi
	done
	local lane=""
	if [ -n "$vault" ]; then
		build_one vault &
		lane=$!
	fi
	for n in "${rest[@]}"; do
		build_one "$n" || rc=1
	done
	if [ -n "$lane" ]; then wait "$lane" || rc=1; fi
	return "$rc"
}

start() {
	local out n failed=() fresh=() rc
	out=$(mktemp -d)
	declare -A pid
	for n in "$@"; do
		"$TESTENV_DIR/$n.sh" status >/dev/null 2>&1 || fresh+=("$n")
	done
	for n in "$@"; do
		"$TESTENV_DIR/$n.sh" start >"$out/$n.env" 2>"$out/$n.log" &
		pid[$n]=$!
	done
	for n in "$@"; do
		rc=0
		wait "${pid[$n]}" || rc=$?
		if [ "$rc" != 0 ]; then
			failed+=("$n")
			say "$n did not start (exit $rc); its log:"
			cat "$out/$n.log" >&2
		fi
	done
	if [ ${#failed[@]} -gt 0 ]; then
		[ ${#fresh[@]} -eq 0 ] || stop "${fresh[@]}"
		rm -rf "$out"
		die "not started: ${failed[*]} (what this call started is stopped again)"
	fi
	for n in "$@"; do
		sed 's/^/  /' "$out/$n.log" >&2
		cat "$out/$n.env"
	done
	local IFS=,
	echo "export MCP_EXECUTOR_TESTENV_STARTED=${fresh[*]}"
	rm -rf "$out"
}

stop() {
	local n rc=0
	for n in "$@"; do
		"$TESTENV_DIR/$n.sh" stop >&2 || { rc=1; say "stopping $n failed"; }
	done
	return "$rc"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- "${ALL[@]}"
names "$@"
case $cmd in
build) build "$@" ;;
start) start "$@" ;;
stop) stop "$@" ;;
env) for n in "$@"; do "$TESTENV_DIR/$n.sh" env; done ;;
status) for n in "$@"; do "$TESTENV_DIR/$n.sh" status || { say "$n is not running"; exit 1; }; done ;;
*) usage "$0 build|start|stop|env|status [${ALL[*]}]" ;;
esac
