package page

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// ChannelPage is the channel name of answers given with the passkey.
const ChannelPage = "page"

// The suffixes of the files beside a queue request file <id>.json.
const (
	PreparedSuffix = ".prepared"
	SignedSuffix   = ".signed"
)

// MaxFileSize is the largest file of this package read.
const MaxFileSize = 1 << 20

// PreparedName is the name of the prepared file beside request id.
func PreparedName(id string) string { return id + PreparedSuffix }

// SignedName is the name of the signed answer beside request id.
func SignedName(id string) string { return id + SignedSuffix }

// Prepared is <queue>/<id>.prepared: a held call and the Provared approval
// prepared for its stub, the challenge the person's passkey must sign.
type Prepared struct {
	Request         string          `json:"request"` // the queue request's id
	Tool            string          `json:"tool"`
	Action          string          `json:"action"`
	Amount          *record.Amount  `json:"amount"`    // null when none
	Arguments       json.RawMessage `json:"arguments"` // secret-looking values redacted
	ArgumentsSHA256 string          `json:"argumentsSha256"`
	RequestedAt     string          `json:"requestedAt"`
	ExpiresAt       string          `json:"expiresAt"`
	Slip            string          `json:"slip"`        // the slip's fingerprint
	Payload         string          `json:"payload"`     // the approval's payload, base64url
	Protected       string          `json:"protected"`   // its protected header, base64url
	Challenge       string          `json:"challenge"`   // base64url SHA-256 of protected "." payload
	Fingerprint     string          `json:"fingerprint"` // of the approval's content: the stub's "approval"
}

// PreparedFor is the file of a request that carries a prepared approval.
func PreparedFor(r *approval.Request) (Prepared, error) {
	if r.Prepared == nil {
		return Prepared{}, fmt.Errorf("page: request %s carries no prepared approval", r.ID)
	}
	f := approval.FileFor(r)
	return Prepared{Request: r.ID, Tool: r.Tool, Action: r.Action, Amount: r.Amount, Arguments: f.Arguments,
		ArgumentsSHA256: r.Arguments, RequestedAt: f.RequestedAt, ExpiresAt: f.ExpiresAt, Slip: r.Slip,
		Payload: r.Prepared.PayloadB64, Protected: r.Prepared.ProtectedB64,
		Challenge: canon.B64(r.Prepared.Challenge), Fingerprint: r.Prepared.Fingerprint}, nil
}

// Approval rebuilds the prepared approval from the file, confirming that
// its challenge and fingerprint are those of its payload.
func (p Prepared) Approval() (*slip.Prepared, error) {
	protected, ok := passkey.ProtectedHeader(record.Approval)
	if !ok || p.Protected != protected {
		return nil, errors.New("page: the prepared file's protected header is not an approval's")
	}
	content, err := canon.UnB64(p.Payload)
	if err != nil {
		return nil, errors.New("page: the prepared file's payload is not base64url")
	}
	sum := sha256.Sum256([]byte(p.Protected + "." + p.Payload))
	if canon.B64(sum[:]) != p.Challenge || canon.Fingerprint(content) != p.Fingerprint {
		return nil, errors.New("page: the prepared file's challenge or fingerprint is not its payload's")
	}
	return &slip.Prepared{Kind: record.Approval, ContentBytes: content, PayloadB64: p.Payload,
		ProtectedB64: p.Protected, Challenge: sum[:], Fingerprint: p.Fingerprint}, nil
}

// Assertion is a passkey's answer as the files and the page carry it: each
// value base64url.
type Assertion struct {
	AuthenticatorData string `json:"authenticatorData"`
	ClientDataJSON    string `json:"clientDataJSON"`
	Signature         string `json:"signature"`
}

// Decode gives the passkey values as bytes.
func (a Assertion) Decode() (passkey.Assertion, error) {
	ad, err1 := canon.UnB64(a.AuthenticatorData)
	cd, err2 := canon.UnB64(a.ClientDataJSON)
	sig, err3 := canon.UnB64(a.Signature)
	if err1 != nil || err2 != nil || err3 != nil {
		return passkey.Assertion{}, errors.New("page: a passkey value is not base64url")
	}
	return passkey.Assertion{AuthenticatorData: ad, ClientDataJSON: cd, Signature: sig}, nil
}

// Signed is <queue>/<id>.signed: the answer to a held call, exactly one of
// Approval (the assembled Provared approval record) and Declined (the
// passkey's signature over [DeclineSigningInput]).
type Signed struct {
	Request  string          `json:"request"`
	Approval json.RawMessage `json:"approval,omitempty"`
	Declined *Assertion      `json:"declined,omitempty"`
}

// DeclineSigningInput is what the passkey signs to decline the call whose
// prepared approval has this fingerprint: its SHA-256 is the challenge.
// There is no Provared record of a no; the signature shows that the slip's
// issuer said it.
func DeclineSigningInput(fingerprint string) []byte {
	return []byte("mcp-executor.decline.v0." + fingerprint)
}

// readStrict reads a JSON file of at most MaxFileSize into v, refusing
// unknown members and trailing text.
func readStrict(path string, v any) error {
	data, err := readRegular(path)
	if err != nil {
		return err
	}
	return decodeStrict(data, v)
}

// readRegular reads at most MaxFileSize+1 bytes of the regular file at
// path. The open does not block (O_NONBLOCK) and anything but a regular
// file is refused, so a FIFO or a device put where a file is awaited
// cannot stop the reader that polls it. A symbolic link is followed: a
// passkey or cancellation file may come from a mounted Secret.
func readRegular(path string) ([]byte, error) {
	fh, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = fh.Close() }() // read only: a failed close loses nothing
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	return io.ReadAll(io.LimitReader(fh, MaxFileSize+1))
}

func decodeStrict(data []byte, v any) error {
	if len(data) > MaxFileSize {
		return errors.New("larger than 1 MiB")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not the expected JSON object: %w", err)
	}
	if dec.More() {
		return errors.New("text after the JSON object")
	}
	return checkNames(data, reflect.TypeOf(v))
}

// checkNames refuses what encoding/json reads differently from a strict
// reader: a member named twice (it keeps the last) or named in another
// case than the field (it matches without regard to case), at any depth.
func checkNames(data []byte, t reflect.Type) error {
	if _, dup := wire.FoldedDuplicate(data); dup {
		return errors.New("a member is named twice (or twice under case folding)")
	}
	return exactNames(data, t)
}

// exactNames confirms that each member of the JSON object data is named
// exactly as a field of the struct t (or *t) says, at every depth where
// the value is again a struct.
func exactNames(data []byte, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == reflect.TypeOf(json.RawMessage{}) {
		return nil
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil || members == nil {
		return nil // not an object: the decoder said so, or it is null
	}
	fields := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
	for name, raw := range members {
		ft, ok := fields[name]
		if !ok {
			return fmt.Errorf("member %q is not named as the file names it", name)
		}
		if err := exactNames(raw, ft); err != nil {
			return err
		}
	}
	return nil
}

// recordValue decodes a record's JSON into the value record.Parse takes.
func recordValue(raw []byte) (any, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, dup := wire.FoldedDuplicate(raw); dup {
		return nil, errors.New("a member is named twice (or twice under case folding)")
	}
	return v, nil
}

// encode is indented JSON for people, ending in LF.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// CancellationPath is where a cancellation of the slip at slipPath is
// looked for beside it: its name without ".json" followed by
// ".cancellation.json" (slip.json → slip.cancellation.json). Any Provared
// signer may drop one there.
func CancellationPath(slipPath string) string {
	dir, base := filepath.Split(slipPath)
	return filepath.Join(dir, strings.TrimSuffix(base, ".json")+".cancellation.json")
}

// StateCancellationPath is where the page writes a cancellation of the
// settings' slip: beside the executor's copy, on the executor's own
// writable state, with the name CancellationPath gives. The folder of the
// slip may be read-only (in a pod it is the settings' mount), and the page
// runs where the executor does.
func StateCancellationPath(set *settings.Settings) string {
	return filepath.Join(filepath.Dir(set.Executor.Copy), filepath.Base(CancellationPath(set.Agent.Slip)))
}

// CancellationPaths are the places the executor and the page look for a
// cancellation of the settings' slip, in order: the executor's own state
// (StateCancellationPath), then beside the slip (CancellationPath); one
// place when the two are the same.
func CancellationPaths(set *settings.Settings) []string {
	state, beside := StateCancellationPath(set), CancellationPath(set.Agent.Slip)
	if state == beside {
		return []string{state}
	}
	return []string{state, beside}
}

// Check rebuilds the prepared approval and confirms that what the file
// shows a person (slip, action, amount, tool, arguments' fingerprint) is
// what the passkey would sign: the payload says the slip, action and
// amount, and its details name the tool and the arguments, when they do,
// by the same fingerprints.
func (p Prepared) Check() (*slip.Prepared, error) {
	prep, err := p.Approval()
	if err != nil {
		return nil, err
	}
	prop, err := consent.ProposalOf(prep)
	if err != nil {
		return nil, fmt.Errorf("page: the prepared payload: %w", err)
	}
	amountSame := (prop.Amount == nil) == (p.Amount == nil) &&
		(prop.Amount == nil || (prop.Amount.Unit == p.Amount.Unit && prop.Amount.Value == p.Amount.Value))
	if prop.Slip != p.Slip || prop.Action != p.Action || !amountSame {
		return nil, errors.New("page: the prepared file shows another slip, action or amount than its payload says")
	}
	for _, d := range prop.Details {
		if (d.Name == "provared.arguments" && d.SHA256 != p.ArgumentsSHA256) ||
			(d.Name == "provared.tool-name" && d.SHA256 != canon.Fingerprint([]byte(p.Tool))) {
			return nil, fmt.Errorf("page: the prepared file shows other %s than its payload names", d.Name)
		}
	}
	return prep, nil
}
