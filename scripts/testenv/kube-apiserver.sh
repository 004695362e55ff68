#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# kube-apiserver.sh: a real kube-apiserver on 127.0.0.1 with its etcd, and nothing else (no kubelet,
# scheduler or controllers): for the tests of Secrets, RBAC, ApprovalRequests, server-side dry runs and
# Vault's Kubernetes auth (TokenReview). Every start has an empty etcd.
#
# usage: kube-apiserver.sh build|start|stop|env|status
#   build   build etcd and the Kubernetes binaries into the cache (see kubebuild.sh), unless there
#   start   build, start etcd and the API server in the background, wait for /readyz, print the lines below
#   stop    stop both
#   env     print the export lines: KUBECONFIG, KUBE_API_SERVER, KUBE_ADMIN_TOKEN (a system:masters
#           user's bearer token), KUBE_CA_FILE
#   status  exit 0 when both run and the API server is ready
#
# What it is not: no controller manager runs, so no `default` service account appears by itself,
# Deployments make no pods, and a deleted namespace stays Terminating.
#
# Variables (optional): MCP_EXECUTOR_TOOLS_DIR, KUBE_TEST_VERSION, KUBE_TEST_ETCD_VERSION (kubebuild.sh),
# KUBE_TEST_PORT (6443), KUBE_TEST_ETCD_PORT (2379; its peer port is the next one), GO.
set -euo pipefail
TESTENV_NAME=kube-apiserver
. "$(dirname "$0")/lib.sh"
# shellcheck source=kubebuild.sh
. "$TESTENV_DIR/kubebuild.sh"

PORT="${KUBE_TEST_PORT:-6443}"
ETCD_PORT="${KUBE_TEST_ETCD_PORT:-2379}"
TOKEN=admin-token
STATE="$RUN_DIR/kube-$PORT"
SERVER="https://127.0.0.1:$PORT"
ETCD_URL="http://127.0.0.1:$ETCD_PORT"
PEER_URL="http://127.0.0.1:$((ETCD_PORT + 1))"

etcd_ok() { curl -fsS --max-time 2 "$ETCD_URL/health" 2>/dev/null | grep -q '"health":"true"'; }
api_ok() {
	curl -fsS --max-time 3 --cacert "$STATE/certs/apiserver.crt" -H "Authorization: Bearer $TOKEN" \
		"$SERVER/readyz" 2>/dev/null | grep -qx ok
}

print_env() {
	echo "export KUBECONFIG=$STATE/kubeconfig"
	echo "export KUBE_API_SERVER=$SERVER"
	echo "export KUBE_ADMIN_TOKEN=$TOKEN"
	echo "export KUBE_CA_FILE=$STATE/certs/apiserver.crt"
}

start() {
	kube_binaries
	mkdir -p "$STATE"
	if alive "$STATE/etcd.pid" || alive "$STATE/kube-apiserver.pid"; then
		if alive "$STATE/etcd.pid" && alive "$STATE/kube-apiserver.pid" && api_ok; then
			print_env
			return 0
		fi
		say "a half-running earlier start: stopping it first"
		stop
	fi
	ports_free "$PORT" "$ETCD_PORT" "$((ETCD_PORT + 1))"
	rm -rf "$STATE/etcd-data" "$STATE/certs"
	mkdir -p "$STATE/certs"
	[ -f "$STATE/sa.key" ] || openssl genrsa -out "$STATE/sa.key" 2048 2>/dev/null
	printf '%s,admin,admin-uid,system:masters\n' "$TOKEN" >"$STATE/tokens.csv"
	chmod 600 "$STATE/sa.key" "$STATE/tokens.csv"

	daemon "$STATE/etcd.pid" "$STATE/etcd.log" --dir "$STATE" "$ETCD_BIN" --name=default \
		--data-dir="$STATE/etcd-data" --listen-client-urls="$ETCD_URL" --advertise-client-urls="$ETCD_URL" \
		--listen-peer-urls="$PEER_URL" --initial-advertise-peer-urls="$PEER_URL" \
		--initial-cluster="default=$PEER_URL" --log-level=warn
	wait_until etcd "$STATE/etcd.pid" "$STATE/etcd.log" 60 etcd_ok || { stop; exit 1; }

	# The API server makes its own serving certificate in --cert-dir (for 127.0.0.1) on its first start.
	daemon "$STATE/kube-apiserver.pid" "$STATE/kube-apiserver.log" --dir "$STATE" "$KUBE_BIN_DIR/kube-apiserver" \
		--etcd-servers="$ETCD_URL" --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$PORT" \
		--cert-dir="$STATE/certs" \
		--service-account-key-file="$STATE/sa.key" --service-account-signing-key-file="$STATE/sa.key" \
		--service-account-issuer=https://kubernetes.default.svc \
		--authorization-mode=RBAC --token-auth-file="$STATE/tokens.csv" \
		--service-cluster-ip-range=10.0.0.0/24 --allow-privileged=true --endpoint-reconciler-type=none
	wait_until kube-apiserver "$STATE/kube-apiserver.pid" "$STATE/kube-apiserver.log" 180 api_ok || { stop; exit 1; }
	make_kubeconfig "$STATE/kubeconfig" "$SERVER" "$STATE/certs/apiserver.crt" "$TOKEN"
	say "kube-apiserver $KUBE_VERSION on $SERVER, etcd on $ETCD_URL"
	print_env
}

stop() {
	stop_pid "$STATE/kube-apiserver.pid"
	stop_pid "$STATE/etcd.pid"
}

case "${1:-}" in
build) kube_binaries ;;
start) start ;;
stop) stop ;;
env) print_env ;;
status) alive "$STATE/etcd.pid" && alive "$STATE/kube-apiserver.pid" && api_ok ;;
*) usage "$0 build|start|stop|env|status" ;;
esac
