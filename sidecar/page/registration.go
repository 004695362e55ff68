package page

import (
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// Registration on the page (docs/design/page.md, "Registration"): a
// WebAuthn registration proves only that its sender holds some key, so
// the page asks for something only the person has before it gives a
// registration challenge: the registration code printed where the page was
// started (code.go). A first passkey needs the code; replacing it needs
// the code and then a signature of the passkey being replaced over the new
// key's thumbprint.

// registerBegin checks the registration code and gives a challenge for
// navigator.credentials.create: "register" when no passkey is registered,
// "replace" when one is.
func (s *Server) registerBegin(_ *http.Request, body []byte) (any, error) {
	var in struct {
		Code string `json:"code"`
	}
	if err := decodeBody(body, &in); err != nil {
		return nil, err
	}
	set, err := s.loadSettings()
	if err != nil {
		return nil, err
	}
	cur, err := s.registered(set)
	if err != nil {
		return nil, err
	}
	if cur != nil && (cur.Origin != s.origin || cur.RPID != s.rpID) {
		// Its signature, which a replacement needs, cannot be made here.
		return nil, &apiError{http.StatusConflict, fmt.Sprintf("the registered passkey is for %s (rpId %s), and this page is %s (rpId %s): "+
			"replace it from a page at %s, or remove %s on the executor's side", cur.Origin, cur.RPID, s.origin, s.rpID, cur.Origin, s.passkeyPath(set))}
	}
	gen, voided, err := s.code.check(in.Code, s.o.Now())
	if voided {
		s.log.Warn("page: the registration code is void: too many wrong codes were tried, by something else that reaches the page",
			slog.Int("wrong", codeWrongMax))
	}
	if err != nil {
		if ae, ok := errors.AsType[*apiError](err); ok && ae.status == http.StatusForbidden {
			// A wrong code (never what was typed). Refusals beyond the
			// rate limit are not logged: they are not checked.
			s.log.Warn("page: a wrong registration code", slog.String("reason", ae.msg))
		}
		return nil, err
	}
	c := make([]byte, 32)
	rand.Read(c)
	user := make([]byte, 16)
	rand.Read(user)
	p := &pending{kind: "register", challenge: c, codeGen: gen}
	out := map[string]string{"challenge": canon.B64(c), "rpId": s.rpID, "userId": canon.B64(user), "kind": "register"}
	if cur != nil {
		p.kind, p.replaces = "replace", cur.Thumbprint
		out["kind"], out["replaces"] = "replace", cur.Thumbprint
	}
	out["token"] = s.remember(p)
	return out, nil
}

// registerFinish checks what navigator.credentials.create gave. A first
// passkey is stored at once, and the code is spent. A replacement is not:
// the page answers with a challenge for the passkey being replaced, over
// the new key's thumbprint (ReplaceSigningInput), and stores the new one
// when that signature comes back (sign, kind "replace-confirm").
func (s *Server) registerFinish(_ *http.Request, body []byte) (any, error) {
	var in struct {
		Token        string       `json:"token"`
		Registration Registration `json:"registration"`
	}
	if err := decodeBody(body, &in); err != nil {
		return nil, err
	}
	p, err := s.take(in.Token)
	if err != nil {
		return nil, err
	}
	if p.kind != "register" && p.kind != "replace" {
		return nil, bad("this challenge is not for a registration")
	}
	reg, err := checkRegistration(in.Registration, p.challenge, s.origin, s.rpID, s.o.Now())
	if err != nil {
		return nil, bad("the registration does not check: %v", err)
	}
	set, err := s.loadSettings()
	if err != nil {
		return nil, err
	}
	s.regMu.Lock()
	defer s.regMu.Unlock()
	cur, err := s.registered(set)
	if err != nil {
		return nil, err
	}
	if p.kind == "register" {
		if cur != nil {
			return nil, &apiError{http.StatusConflict, "a passkey was registered meanwhile"}
		}
		if !s.code.spend(p.codeGen) {
			return nil, codeError(http.StatusGone, "the registration code was used meanwhile: start mcp-executor page again for a new one")
		}
		if err := s.storePasskey(set, reg); err != nil {
			return nil, err
		}
		s.log.Info("page: a passkey was registered", slog.String("thumbprint", reg.Thumbprint), slog.String("alg", reg.Alg))
		return reg, nil
	}
	if cur == nil || cur.Thumbprint != p.replaces {
		return nil, &apiError{http.StatusConflict, "the registered passkey changed meanwhile; start again"}
	}
	if reg.Thumbprint == cur.Thumbprint {
		return nil, bad("the new passkey is the one registered already")
	}
	nonce := make([]byte, 16)
	rand.Read(nonce)
	input := ReplaceSigningInput(cur.Thumbprint, reg.Thumbprint, nonce)
	sum := sha256.Sum256(input)
	token := s.remember(&pending{kind: "replace-confirm", challenge: sum[:], signed: input, codeGen: p.codeGen,
		replaces: cur.Thumbprint, newKey: &reg})
	return map[string]any{"confirm": true, "token": token, "challenge": canon.B64(sum[:]), "rpId": s.rpID,
		"credentialId": cur.CredentialID, "replaces": cur.Thumbprint, "thumbprint": reg.Thumbprint}, nil
}

// ReplaceSigningInput is what the registered passkey signs to let the
// passkey whose thumbprint is newTP replace it (oldTP): its SHA-256 is the
// challenge, fresh for each replacement (nonce).
func ReplaceSigningInput(oldTP, newTP string, nonce []byte) []byte {
	return []byte("mcp-executor.page.replace.v0." + oldTP + "." + newTP + "." + canon.B64(nonce))
}

// storeReplacement stores the new passkey of a replacement whose
// signature by the passkey being replaced has been checked.
func (s *Server) storeReplacement(set *settings.Settings, p *pending) (any, error) {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	cur, err := s.registered(set)
	if err != nil {
		return nil, err
	}
	if cur == nil || cur.Thumbprint != p.replaces || p.newKey == nil {
		return nil, &apiError{http.StatusConflict, "the registered passkey changed meanwhile; start again"}
	}
	if !s.code.spend(p.codeGen) {
		return nil, codeError(http.StatusGone, "the registration code was used meanwhile: start mcp-executor page again for a new one")
	}
	if err := s.storePasskey(set, *p.newKey); err != nil {
		return nil, err
	}
	s.log.Warn("page: the passkey was replaced", slog.String("was", cur.Thumbprint), slog.String("thumbprint", p.newKey.Thumbprint),
		slog.String("alg", p.newKey.Alg))
	out := map[string]any{"done": "replaced", "replaced": cur.Thumbprint, "thumbprint": p.newKey.Thumbprint, "alg": p.newKey.Alg}
	if contains(set.Agent.IssuerKeys, cur.Thumbprint) || !contains(set.Agent.IssuerKeys, p.newKey.Thumbprint) {
		out["warning"] = "put " + p.newKey.Thumbprint + " in the settings' agent.issuerKeys (and take " + cur.Thumbprint +
			" out once no slip it signed is in force); a slip the old passkey signed cannot be answered on this page any more"
	}
	return out, nil
}

// storePasskey writes the page's passkey file (public values only),
// synced and renamed into place, its folder made 0700 when missing.
func (s *Server) storePasskey(set *settings.Settings, reg Registered) error {
	data, err := encode(reg)
	if err != nil {
		return err
	}
	path := s.passkeyPath(set)
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("page: the passkey file's folder %s: %w", dir, err)
	}
	return approval.WriteFileAtomic(dir, name, data)
}
