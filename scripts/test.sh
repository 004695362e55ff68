#!/usr/bin/env bash
# The project's whole test run: static checks, then every test (unit, end-to-end through the real binary,
# and integration against a real Vault and kube-apiserver) under the race detector, then the demo.
# Needs: Go, Node.js with testdata/npm installed (npm ci --prefix testdata/npm), helm on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=../shared/tools

echo "== go vet"
go vet ./...
go vet -tags integration ./...
echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then echo "not gofmt-formatted:"; echo "$unformatted"; exit 1; fi

echo "== start the real Vault, kube-apiserver and single-node cluster the integration tests use"
stop_servers() {
	"$tools/kube-real-cluster.sh" stop >/dev/null 2>&1 || true
	"$tools/vault-dev.sh" stop >/dev/null 2>&1 || true
	"$tools/kube-test-cluster.sh" stop >/dev/null 2>&1 || true
}
trap stop_servers EXIT
eval "$("$tools/kube-test-cluster.sh" start)"
eval "$("$tools/vault-dev.sh" start)"
# The real cluster (deploy/cluster): its lines are exported with the prefix REAL_CLUSTER_ so that they
# do not replace the kube-apiserver-only cluster's KUBECONFIG the other integration tests use.
real_env=$("$tools/kube-real-cluster.sh" start)
eval "$(printf '%s\n' "$real_env" | sed 's/^export /export REAL_CLUSTER_/')"
export REAL_CLUSTER_TOOLS="$(cd "$tools" && pwd)"

echo "== all tests, unit, end-to-end and integration (-race)"
go test -race -count=1 -timeout 30m -tags integration ./...

echo "== short fuzz runs of the parsers that face untrusted bytes"
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

echo "== demo"
go run ./cmd/mcp-executor demo
