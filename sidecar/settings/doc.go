// Package settings reads the executor's settings file: the tool server to
// start and where its credentials come from, the agent's slip, book and keys,
// the executor's keys and copy, the rule for each tool, and the limits.
//
// The tool servers are either one "server" (its tools keep their names) or
// several "servers" by name, each a child process (the members of "server")
// or a streamable HTTP address with headers read from secret sources; their
// tools are then named <server><namespaceSeparator><tool>. Tool rules are
// exact names or globs (package policy/glob says which rule decides), and
// may refuse or set a quota (package policy/quota); "redaction" extends the
// detectors of package policy/redact. servers.go reads these members.
//
// The file is read strictly: UTF-8 JSON holding one object, no member named
// twice, no member the format does not know, every value of its type and in
// its range. The first fault stops the load with an *[Error] that names the
// file and the place (server.env.TOKEN, tools.order.amount.pointer, …).
// Relative paths are read from the settings file's folder. Secret sources
// are kept as written (apart from file paths made absolute): package keys
// interprets them; nothing here reads a secret.
package settings
