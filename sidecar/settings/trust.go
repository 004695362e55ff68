package settings

import "strings"

// NoPasskeyFix says how to get the value agent.issuerKeys lacks.
const NoPasskeyFix = "run `mcp-executor page --config FILE`, have the person register their passkey there " +
	"(and sign the slip), and put the thumbprint the page shows into agent.issuerKeys"

// TrustsAPasskey returns nil when agent.issuerKeys names a passkey, and
// otherwise an *Error saying that the executor will not start and how to
// get the thumbprint. The settings read without the member, so that
// keys, tools and page (which needs them to register the passkey whose
// thumbprint goes there) work before it is known; stdio, serve and check
// ask this.
func (s *Settings) TrustsAPasskey() error {
	if len(s.Agent.IssuerKeys) > 0 {
		return nil
	}
	return &Error{File: s.File, Place: "agent.issuerKeys", Reason: "not given, so the executor trusts no passkey and will not start: it acts only under a slip " +
		"signed by a passkey named there; to get the thumbprint, " + s.fix(NoPasskeyFix)}
}

// fix puts the settings file's path in the place of FILE in text.
func (s *Settings) fix(text string) string {
	return strings.Replace(text, "FILE", s.File, 1)
}
