// Package deploy holds the static Kubernetes manifests rendered from the Helm chart in
// charts/mcp-executor, the script that renders them, a Vault set-up example, and the tests that render
// the chart for several value sets and hold every document to the chart's security invariants.
package deploy
