package book

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// SignedStub is a stub line made of records this process has just signed:
// the stub and its countersignature, each a record.Signed (which only
// record.SignChecked makes, so nothing read from a file or from another
// process can be one), and the person's approval when the call was held
// for one. AppendSigned writes it without checking the two records'
// hybrid signatures again; the approval, which comes from outside, is
// checked in full.
type SignedStub struct {
	Stub             record.Signed
	Countersignature record.Signed // zero: none
	Approval         *record.Record
}

// Fingerprint is the stub's fingerprint.
func (s SignedStub) Fingerprint() string { return s.Stub.Fingerprint() }

// Line is the same line as records (each a copy).
func (s SignedStub) Line() Line {
	return Line{Stub: s.Stub.Record(), Countersignature: s.Countersignature.Record(), Approval: s.Approval}
}

// Bytes is the line's canonical text, without its line feed: the text
// Line().Bytes() gives, put together from the envelopes built when the
// records were signed.
func (s SignedStub) Bytes() ([]byte, error) {
	if s.Stub.Kind() != record.Stub {
		return nil, errors.New("a signed stub line holds a stub signed by record.SignChecked")
	}
	if !s.Countersignature.IsZero() && s.Countersignature.Kind() != record.Countersignature {
		return nil, errors.New("a signed stub line's countersignature is not a countersignature")
	}
	var approval []byte
	if s.Approval != nil {
		var err error
		if approval, err = canon.Marshal(s.Approval.Value()); err != nil {
			return nil, fmt.Errorf("writing a book line: the approval: %w", err)
		}
	}
	// The members in their canonical order: approval, countersignature, stub.
	// The buffer holds the line exactly, and the line feed the writer adds
	// (enqueue), so that nothing is copied under the book's lock.
	b := make([]byte, 0, s.size(approval)+1)
	b = append(b, '{')
	if approval != nil {
		b = append(b, `"approval":`...)
		b = append(append(b, approval...), ',')
	}
	if !s.Countersignature.IsZero() {
		b = append(b, `"countersignature":`...)
		b = append(s.Countersignature.AppendEnvelope(b), ',')
	}
	b = append(b, `"stub":`...)
	b = s.Stub.AppendEnvelope(b)
	return append(b, '}'), nil
}

// Len is len(Bytes()) without putting the line together: the
// envelopes' lengths and the members' names (an approval, when there is
// one, is marshalled to be measured).
func (s SignedStub) Len() (int, error) {
	if s.Stub.Kind() != record.Stub {
		return 0, errors.New("a signed stub line holds a stub signed by record.SignChecked")
	}
	if !s.Countersignature.IsZero() && s.Countersignature.Kind() != record.Countersignature {
		return 0, errors.New("a signed stub line's countersignature is not a countersignature")
	}
	var approval []byte
	if s.Approval != nil {
		var err error
		if approval, err = canon.Marshal(s.Approval.Value()); err != nil {
			return 0, fmt.Errorf("measuring a book line: the approval: %w", err)
		}
	}
	return s.size(approval), nil
}

// size is the length of the line's text, without its line feed, with
// approval the approval's canonical text (nil for none).
func (s SignedStub) size(approval []byte) int {
	n := len(`{"stub":}`) + s.Stub.EnvelopeLen()
	if approval != nil {
		n += len(`"approval":,`) + len(approval)
	}
	if !s.Countersignature.IsZero() {
		n += len(`"countersignature":,`) + s.Countersignature.EnvelopeLen()
	}
	return n
}

// AppendSigned is AppendStub for a line this process signed: the same
// checks of the line against the book and the reservation (its slip, its
// place in the chain, the countersignature's stub, the approval, the
// slip's limits), except that the stub's and the countersignature's
// signatures are not checked again. Only that their keys are the keys the
// slip names for the agent and for the service is checked: a key
// compared, not a signature. A line from anywhere else goes through
// AppendStub or Append, which check every signature.
func (b *Book) AppendSigned(r *Reservation, s SignedStub) error {
	if err := b.readyFor(r); err != nil {
		return err
	}
	line, err := s.Bytes()
	if err != nil {
		return err
	}
	obj := map[string]any{"stub": signedValue{s.Stub.Record(), s.Stub.Keys()}}
	if !s.Countersignature.IsZero() {
		obj["countersignature"] = signedValue{s.Countersignature.Record(), s.Countersignature.Keys()}
	}
	if s.Approval != nil {
		obj["approval"] = s.Approval.Value()
	}
	return b.appendLines([][]byte{line}, r, obj, false)
}

// readyFor confirms that it is r's turn in this book.
func (b *Book) readyFor(r *Reservation) error {
	if r == nil || r.l != b.ledger {
		return errors.New("the reservation is not one of this book's")
	}
	select {
	case <-r.turn:
		return nil
	default:
		return errors.New("it is not this reservation's turn: wait for Position first")
	}
}

// signedValue stands in a line's value for a record signed in this
// process, with the keys that signed it. Only AppendSigned puts one there.
type signedValue struct {
	rec  *record.Record
	keys jwk.KeySet
}

// readSigned reads a line AppendSigned made: obj is its value, in which
// the signed records stand as signedValue.
func (r *reader) readSigned(line []byte, obj map[string]any, strict bool) (Entry, error) {
	names := make([]string, 0, len(obj))
	for k, v := range obj {
		names = append(names, k)
		if sv, ok := v.(signedValue); ok {
			r.signed = append(r.signed, sv)
		}
	}
	defer func() { r.signed = r.signed[:0] }()
	sort.Strings(names)
	return r.readValue(line, obj, strings.Join(names, ","), nil, strict)
}

// parseRecord reads v as a record of kind: a record signed in this process
// as it is, one a worker has read (parseLines) as it was read, anything
// else through record.Parse.
func (r *reader) parseRecord(v any, kind record.Kind) (*record.Record, error) {
	if x, ok := v.(signedValue); ok {
		if x.rec.Kind != kind {
			return nil, problemf("check-failed", "a %s signed here stands where a %s belongs", x.rec.Kind, kind)
		}
		return x.rec, nil
	}
	return parsedRecord(v, kind)
}

// parsedRecord reads v as a record of kind: one a worker has read
// (parseLines) as it was read, anything else through record.Parse.
func parsedRecord(v any, kind record.Kind) (*record.Record, error) {
	if x, ok := v.(preParsed); ok {
		if x.kind == kind {
			return x.rec, x.err
		}
		return record.Parse(x.raw, kind)
	}
	return record.Parse(v, kind)
}

// signerOf returns the keys that signed rec when rec was signed in this
// process (it is one of the line's signedValue records).
func (r *reader) signerOf(rec *record.Record) (jwk.KeySet, bool) {
	for _, sv := range r.signed {
		if sv.rec == rec {
			return sv.keys, true
		}
	}
	return jwk.KeySet{}, false
}

// sameKey reports whether a and b are the same public key.
func sameKey(a, b *jwk.Key) bool {
	return a != nil && b != nil && a.Alg == b.Alg && a.Thumbprint == b.Thumbprint
}
