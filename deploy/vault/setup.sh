#!/usr/bin/env bash
# Example Vault set-up for the chart's defaults: Kubernetes auth role "mcp-executor" bound to the
# release's service account, the policy in policy.hcl, and the KV and Transit engines.
# Run it with VAULT_ADDR and an admin VAULT_TOKEN set, from a machine that can reach the cluster.
#   NAMESPACE=agents SERVICE_ACCOUNT=agent-mcp-executor ./setup.sh
set -euo pipefail
NAMESPACE="${NAMESPACE:-agents}"
SERVICE_ACCOUNT="${SERVICE_ACCOUNT:-agent-mcp-executor}"
here="$(cd "$(dirname "$0")" && pwd)"

vault secrets enable -path=secret -version=2 kv 2>/dev/null || true
vault secrets enable transit 2>/dev/null || true
vault auth enable kubernetes 2>/dev/null || true
# Inside the cluster Vault can use its own service account to review tokens; outside, pass
# kubernetes_host, kubernetes_ca_cert and a token_reviewer_jwt bound to system:auth-delegator.
vault write auth/kubernetes/config kubernetes_host="${KUBERNETES_HOST:-https://kubernetes.default.svc}"
vault policy write mcp-executor "$here/policy.hcl"
vault write auth/kubernetes/role/mcp-executor \
	bound_service_account_names="$SERVICE_ACCOUNT" \
	bound_service_account_namespaces="$NAMESPACE" \
	audience=vault \
	token_policies=mcp-executor \
	token_ttl=1h token_max_ttl=24h
# The executor's Ed25519 signing key, kept inside Vault (open-source Vault has no ML-DSA: the ML-DSA-87
# half of the key set is a KV secret).
vault write -f transit/keys/mcp-executor-executor type=ed25519
