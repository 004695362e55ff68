package page

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// A passkey signs for the page it is used on: the browser writes that
// page's origin into the client data, and the authenticator the rpId's
// hash into its data. The page checks an answer against its own origin;
// the executor checks the same answer against the origin the slip names.
// When the two differ, every answer made here fails one of those checks,
// so the page compares them first and says which is which.

// originOf is the origin a passkey's client data names, "" when it names
// none or does not parse.
func originOf(clientData []byte) string {
	m, err := passkey.ParseClientData(clientData)
	if err != nil {
		return ""
	}
	o, _ := m["origin"].(string)
	return o
}

// recordOrigin is the origin named in the client data of a passkey-signed
// record's first signature, "" when there is none to read.
func recordOrigin(v any) string {
	m, _ := v.(map[string]any)
	sigs, _ := m["signatures"].([]any)
	if len(sigs) == 0 {
		return ""
	}
	sig, _ := sigs[0].(map[string]any)
	h, _ := sig["header"].(map[string]any)
	cd, _ := h["clientDataJSON"].(string)
	raw, err := canon.UnB64(cd)
	if err != nil {
		return ""
	}
	return originOf(raw)
}

// checkAnsweredHere confirms that a passkey answer was made on this page,
// before its signature is checked: its client data names this page's
// origin, not inside a frame of another page, and its authenticator data
// this page's rpId. Each error names what was compared with what.
func (s *Server) checkAnsweredHere(a passkey.Assertion) error {
	m, err := passkey.ParseClientData(a.ClientDataJSON)
	if err != nil {
		return err
	}
	o, _ := m["origin"].(string)
	if o != s.origin {
		return fmt.Errorf("the passkey answered on the page %q, and this page is %s", o, s.origin)
	}
	if cross, _ := m["crossOrigin"].(bool); cross {
		return fmt.Errorf("the passkey answered inside a frame of another page than %s", s.origin)
	}
	rp := sha256.Sum256([]byte(s.rpID))
	if len(a.AuthenticatorData) < 32 {
		return errors.New("the passkey's authenticator data is cut short")
	}
	if !bytes.Equal(a.AuthenticatorData[:32], rp[:]) {
		return fmt.Errorf("the passkey signed for another rpId than this page's (%s)", s.rpID)
	}
	return nil
}

// slipProblem says why this page cannot answer under the slip sl, "" when
// it can: the slip names another origin or rpId than this page's (the
// executor checks each answer against the slip's), or it was signed by
// another passkey than the one registered here (reg, when known).
func (s *Server) slipProblem(sl *slip.Slip, reg *Registered) string {
	if sl.Issuer.Origin != s.origin || sl.Issuer.RPID != s.rpID {
		return fmt.Sprintf("This page is %s (rpId %s), and the slip in force names %s (rpId %s). "+
			"A passkey signs for the page it is used on, and the executor checks every answer against the slip's origin, "+
			"so an answer made here would be refused. Answer on a page at %s (%s).",
			s.origin, s.rpID, sl.Issuer.Origin, sl.Issuer.RPID, sl.Issuer.Origin, serveHint(sl.Issuer.Origin))
	}
	if reg != nil && sl.Issuer.Key.Thumbprint != reg.Thumbprint {
		return fmt.Sprintf("The slip in force was signed by the passkey %s, and this page's passkey is %s: "+
			"only the slip's issuer can answer under it.", sl.Issuer.Key.Thumbprint, reg.Thumbprint)
	}
	return ""
}

// passkeyProblem says why the registered passkey cannot sign on this page,
// "" when it can (or none is registered).
func (s *Server) passkeyProblem(reg *Registered) string {
	if reg == nil || (reg.Origin == s.origin && reg.RPID == s.rpID) {
		return ""
	}
	return fmt.Sprintf("The passkey was registered for %s (rpId %s), and this page is %s (rpId %s): it signs nothing here. Open the page at %s (%s).",
		reg.Origin, reg.RPID, s.origin, s.rpID, reg.Origin, serveHint(reg.Origin))
}

// serveHint says how to serve the page at origin.
func serveHint(origin string) string {
	u, err := url.Parse(origin)
	if err == nil && u.Scheme == "http" && u.Hostname() == "localhost" {
		port := u.Port()
		if port == "" {
			port = "80"
		}
		return "mcp-executor page --listen 127.0.0.1:" + port
	}
	return "mcp-executor page --origin " + origin + " behind a proxy serving that origin"
}
