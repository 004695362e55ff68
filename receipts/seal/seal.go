package seal

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/stamp"
	"github.com/seed-6e06167c/mcp-executor/receipts/tree"
)

// ContentType is the "type" of a seal's content.
const ContentType = "provared.seal.v0"

// Fields are what a seal states.
type Fields struct {
	// ID is the seal's unique number (16 bytes, base64url); "" for a fresh
	// random one.
	ID string
	// Name is the recorder's name, a label of 1 to 200 characters.
	Name string
	// Keys is the recorder's key set (the signer's).
	Keys jwk.SealKeySet
	// Size and Root are the number of entries before the seal and their
	// top fingerprint: a tree.Builder's Size and Root over exactly those
	// lines.
	Size int
	Root tree.Hash
	// Previous is the fingerprint of the seal before this one in the book;
	// "" for the first.
	Previous string
	// When is when the seal is made, as the recorder states it (to the second).
	When time.Time
}

// Prepared is a seal's content, confirmed and written canonically, before
// it is signed. Its fingerprint is known at once: what a time-stamp
// service is asked to stamp.
type Prepared struct {
	content     map[string]any
	text        []byte
	payload     string
	fingerprint string
	keys        jwk.SealKeySet
}

// Prepare confirms the fields as the format's content check does and
// writes the content.
func Prepare(f Fields) (*Prepared, error) {
	if f.Keys.Value() == nil {
		return nil, errors.New("preparing a seal: the recorder's key set is not complete")
	}
	id := f.ID
	if id == "" {
		b := make([]byte, 16)
		rand.Read(b) // never fails (crypto/rand, Go 1.24+)
		id = canon.B64(b)
	}
	c := map[string]any{
		"type": ContentType,
		"id":   id,
		"by":   map[string]any{"keys": f.Keys.Value(), "name": f.Name},
		"size": int64(f.Size),
		"root": canon.B64(f.Root[:]),
		"when": canon.FormatTime(f.When),
	}
	if f.Previous != "" {
		c["previous"] = f.Previous
	}
	if err := record.ValidateSeal(c); err != nil {
		return nil, fmt.Errorf("preparing a seal: %w", err)
	}
	text, err := canon.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("preparing a seal: %w", err)
	}
	return &Prepared{content: c, text: text, payload: canon.B64(text), fingerprint: canon.Fingerprint(text), keys: f.Keys}, nil
}

// Fingerprint is the seal's fingerprint (of its content, base64url).
func (p *Prepared) Fingerprint() string { return p.fingerprint }

// Stamped is what a time-stamp service is asked to stamp: the 32 bytes of
// the seal's fingerprint.
func (p *Prepared) Stamped() []byte {
	b, _ := canon.UnB64(p.fingerprint) // a fingerprint this package wrote
	return b
}

// ContentText is the content's canonical bytes.
func (p *Prepared) ContentText() []byte { return append([]byte(nil), p.text...) }

// Sign signs the prepared content with the three keys of s, in the
// format's order, checks each signature against the keys the content
// names, and returns the sealed record. The keys of s must be the keys
// the seal was prepared with.
func (p *Prepared) Sign(ctx context.Context, s Signer) (*Sealed, error) {
	if !s.Keys().Equal(p.keys) {
		return nil, errors.New("signing a seal: the signer's keys are not the keys the seal names")
	}
	headers := record.Seal.ProtectedHeaders()
	sigs := make([]any, len(headers))
	for i, alg := range jwk.SealAlgs {
		input := []byte(headers[i] + "." + p.payload)
		sig, err := s.Sign(ctx, alg, input)
		if err != nil {
			return nil, fmt.Errorf("signing a seal with %s: %w", alg, err)
		}
		if !p.keys.Key(alg).Verify(input, sig) {
			return nil, fmt.Errorf("signing a seal: the %s signature does not check against the recorder's key", alg)
		}
		sigs[i] = map[string]any{"protected": headers[i], "signature": canon.B64(sig)}
	}
	env := map[string]any{"payload": p.payload, "signatures": sigs}
	rec, err := record.Parse(env, record.Seal)
	if err != nil {
		return nil, fmt.Errorf("signing a seal: the record written does not read back: %w", err)
	}
	return &Sealed{Record: rec}, nil
}

// Sealed is a signed seal.
type Sealed struct{ Record *record.Record }

// Fingerprint is the seal's fingerprint.
func (s *Sealed) Fingerprint() string { return s.Record.Fingerprint }

// Line writes the seal's book line: {"seal": record} with, when any,
// "stamps": the tokens in base64url, in order. More than MaxStamps tokens,
// or the same one twice, is refused.
func (s *Sealed) Line(tokens [][]byte) ([]byte, error) {
	if len(tokens) > stamp.MaxStamps {
		return nil, fmt.Errorf("a seal carries at most %d time-stamps", stamp.MaxStamps)
	}
	v := map[string]any{"seal": s.Record.Value()}
	if len(tokens) > 0 {
		seen := map[string]bool{}
		list := make([]any, len(tokens))
		for i, t := range tokens {
			if len(t) == 0 || len(t) > stamp.MaxTokenBytes {
				return nil, fmt.Errorf("time-stamp %d is empty or larger than %d bytes", i, stamp.MaxTokenBytes)
			}
			text := canon.B64(t)
			if seen[text] {
				return nil, errors.New("the same time-stamp is given twice")
			}
			seen[text] = true
			list[i] = text
		}
		v["stamps"] = list
	}
	return canon.Marshal(v)
}

// Stamp is one time-stamp beside a seal, as DecodeStamps reads it: a
// service's token, or a block time-stamp (a proof and its block's header).
type Stamp struct {
	Kind   string // "service" or "block"
	Token  []byte // service
	Proof  []byte // block
	Header []byte // block
}

// Stamp kinds.
const (
	KindService = "service"
	KindBlock   = "block"
)

// DecodeStamps reads the "stamps" beside a seal or a cancellation as the
// reference does (decodeStamps): a list of 1 to 4, each a service's token
// in base64url (text) or a block time-stamp {"block","proof"}, none twice.
func DecodeStamps(v any) ([]Stamp, error) {
	list, ok := v.([]any)
	if !ok || len(list) < 1 || len(list) > stamp.MaxStamps {
		return nil, problem.New(record.CodeBadField, "stamps: must be a list of 1 to %d", stamp.MaxStamps)
	}
	seen := map[string]bool{}
	out := make([]Stamp, 0, len(list))
	for i, s := range list {
		path := fmt.Sprintf("stamps[%d]", i)
		decode := func(text any, most int, what string) ([]byte, error) {
			t, ok := text.(string)
			if !ok || len(t) == 0 || len(t) > (most*4+2)/3 {
				return nil, problem.New(record.CodeBadField, "%s: %s", path, what)
			}
			b, err := canon.UnB64(t)
			if err != nil {
				return nil, problem.New("bad-base64url", "a time-stamp is not base64url")
			}
			return b, nil
		}
		var item Stamp
		var key string
		if m, isObject := s.(map[string]any); isObject {
			if len(m) != 2 || m["block"] == nil || m["proof"] == nil {
				return nil, problem.New(record.CodeBadField, "%s: a block time-stamp holds exactly block and proof", path)
			}
			h, err := decode(m["block"], 1024, "must hold a block header of 80 bytes, in base64url")
			if err != nil {
				return nil, err
			}
			p, err := decode(m["proof"], stamp.MaxTokenBytes, "must hold a proof in base64url, of at most 12,288 bytes")
			if err != nil {
				return nil, err
			}
			item = Stamp{Kind: KindBlock, Header: h, Proof: p}
			key = fmt.Sprintf("%v %v", m["block"], m["proof"])
		} else {
			t, err := decode(s, stamp.MaxTokenBytes, "must be a time-stamp in base64url, of at most 12,288 bytes")
			if err != nil {
				return nil, err
			}
			item = Stamp{Kind: KindService, Token: t}
			key, _ = s.(string)
		}
		if seen[key] {
			return nil, problem.New(record.CodeBadField, "stamps: the same time-stamp is given twice")
		}
		seen[key] = true
		out = append(out, item)
	}
	return out, nil
}

// Line is a seal line's parts, read.
type Line struct {
	Record *record.Record
	Keys   jwk.SealKeySet
	Stamps []Stamp
	// HasStamps says the line holds "stamps" (DecodeStamps read them).
	HasStamps bool
}

// ParseLine reads a seal line's value (the line read as canonical JSON):
// exactly "seal", or "seal" and "stamps"; the record's envelope and
// content; the stamps' layout. No signature and no stamp is checked.
func ParseLine(v map[string]any) (*Line, error) {
	_, hasStamps := v["stamps"]
	if v["seal"] == nil || len(v) > 2 || (len(v) == 2 && !hasStamps) {
		return nil, problem.New("unknown-entry", "a seal line holds seal, and stamps beside it if any")
	}
	rec, err := record.Parse(v["seal"], record.Seal)
	if err != nil {
		return nil, err
	}
	if err := record.ValidateSeal(rec.Content); err != nil {
		return nil, err
	}
	by, _ := rec.Content["by"].(map[string]any)
	keys, err := jwk.CheckSealKeySetAt(by["keys"], "by.keys")
	if err != nil {
		return nil, err
	}
	l := &Line{Record: rec, Keys: keys, HasStamps: hasStamps}
	if hasStamps {
		if l.Stamps, err = DecodeStamps(v["stamps"]); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Size is the number of entries the seal says it covers.
func (l *Line) Size() int64 {
	n, _ := record.WholeNumber(l.Record.Content["size"])
	return n
}

// Root is the top fingerprint the seal names.
func (l *Line) Root() string { s, _ := l.Record.Content["root"].(string); return s }

// Previous is the fingerprint of the seal before, "" for none.
func (l *Line) Previous() string { s, _ := l.Record.Content["previous"].(string); return s }

// When is the seal's stated time.
func (l *Line) When() time.Time {
	s, _ := l.Record.Content["when"].(string)
	t, _ := canon.ParseTime(s)
	return t
}

// Sealer is the fingerprint of the recorder's key set.
func (l *Line) Sealer() string { return l.Keys.Fingerprint() }

// CheckSignatures checks the three signatures of a seal against its keys,
// each with the key in its place: true only if all three check.
func CheckSignatures(rec *record.Record, keys jwk.SealKeySet) bool {
	if len(rec.Signatures) != len(jwk.SealAlgs) {
		return false
	}
	for i, alg := range jwk.SealAlgs {
		k := keys.Key(alg)
		sig, err := rec.Signatures[i].Bytes()
		if k == nil || err != nil || rec.Signatures[i].Alg != alg || !k.Verify(rec.SigningInput(i), sig) {
			return false
		}
	}
	return true
}
