# Vault policy for mcp-executor (the chart's defaults: KV v2 mount "secret", Transit mount "transit").
# The executor reads its keys, the copy key and the tool server's credential, and signs with its
# Transit key; it can read no other path and can never export the Transit key.
path "secret/data/mcp-executor/*" {
  capabilities = ["read"]
}
# Only for `mcp-executor keys`, which writes missing keys once; drop it after set-up.
# path "secret/data/mcp-executor/*" { capabilities = ["create", "read", "update"] }
path "transit/sign/mcp-executor-*" {
  capabilities = ["update"]
}
path "transit/keys/mcp-executor-*" {
  capabilities = ["read"]
}
