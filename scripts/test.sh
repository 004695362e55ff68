#!/usr/bin/env bash
# The project's whole test run: static checks, the unit and end-to-end suite under the race detector,
# the integration tests against a real Vault and kube-apiserver, and the demo.
# Needs: Go, Node.js with testdata/npm installed (npm ci --prefix testdata/npm), helm on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=../shared/tools

echo "== go vet"
go vet ./...
echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go'))
if [ -n "$unformatted" ]; then echo "not gofmt-formatted:"; echo "$unformatted"; exit 1; fi

echo "== unit and end-to-end tests (-race)"
go test -race -count=1 -timeout 20m ./...

echo "== integration tests: real Vault and kube-apiserver"
eval "$("$tools/kube-test-cluster.sh" start)"
eval "$("$tools/vault-dev.sh" start)"
trap '"$tools/vault-dev.sh" stop >/dev/null 2>&1 || true; "$tools/kube-test-cluster.sh" stop >/dev/null 2>&1 || true' EXIT
go test -race -count=1 -timeout 20m -tags integration ./keys/... ./deploy/... ./sidecar/...

echo "== demo"
go run ./cmd/mcp-executor demo
