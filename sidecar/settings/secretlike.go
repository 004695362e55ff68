package settings

import (
	"strings"
	"sync"

	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact"
)

// secretNameHints are parts of a variable's or header's name that mark
// its value as a credential.
var secretNameHints = []string{"pass", "pwd", "secret", "token", "key", "credential", "auth", "cookie", "session", "cert", "signature"}

// builtinRedactor finds what the executor's built-in detectors take for a
// secret (API keys, tokens, private keys, passwords in pairs).
var builtinRedactor = sync.OnceValue(func() *redact.Redactor {
	r, err := redact.New(make([]byte, redact.SaltSize), redact.Options{})
	if err != nil {
		panic("the built-in redactor: " + err.Error()) // the built-in detectors always compile
	}
	return r
})

// looksSecret reports whether a value written in the settings under name
// (a server's variable, an HTTP server's header) looks like a credential:
// by its name, or because the built-in detectors of secrets find one in
// it. A value written there that looks like a setting (LOG_LEVEL=debug) is
// not warned of; one that looks like a secret is.
func looksSecret(name, value string) bool {
	lower := strings.ToLower(name)
	for _, h := range secretNameHints {
		if strings.Contains(lower, h) {
			return true
		}
	}
	r := builtinRedactor()
	return r.IsKey(name) || r.Text(value) != value || r.Text(name+"="+value) != name+"="+value
}
