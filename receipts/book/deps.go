package book

import (
	"math"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/problem"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// This file is where the book meets the packages that read single
// records: the envelope (record), slips, approvals and cancellations
// (slip), passkey signatures (passkey) and key sets (jwk).

func actionKind(action string) (string, bool) { return slip.ActionKind(action) }

// keySetSignatures checks the two signatures of a hybrid record against a
// key set, each with the key in its place.
func (r *reader) keySetSignatures(rec *record.Record, keys jwk.KeySet) []SigState {
	ordered := []*jwk.Key{keys.Ed25519, keys.MLDSA87}
	states := make([]SigState, 0, len(rec.Signatures))
	for i := range rec.Signatures {
		if i >= len(ordered) || ordered[i] == nil {
			states = append(states, SigState{Method: rec.Signatures[i].Alg, State: stateInvalid})
			continue
		}
		k := ordered[i]
		st := SigState{Method: k.Alg, State: stateInvalid}
		if signer, ok := r.signerOf(rec); ok {
			// Signed here, by signer's keys: it checks if those are the keys expected.
			switch {
			case r.opts.without(k.Alg):
				st.State = stateUnavailable
			case sameKey(signer.Key(k.Alg), k) && rec.Signatures[i].Alg == k.Alg:
				st.State = stateValid
			}
			states = append(states, st)
			continue
		}
		if r.covered && !r.opts.without(k.Alg) {
			// Checked at an earlier start: the checkpoint's top fingerprint confirms the line.
			states = append(states, SigState{Method: k.Alg, State: stateValid})
			continue
		}
		switch sig, err := rec.Signatures[i].Bytes(); {
		case r.opts.without(k.Alg):
			st.State = stateUnavailable
		case err == nil && r.check(k, rec, i, sig):
			st.State = stateValid
		}
		states = append(states, st)
	}
	return states
}

// check checks signature i of rec (decoded: sig) against k: the answer a
// worker noted for it on the line being read (preverify), else verify's.
func (r *reader) check(k *jwk.Key, rec *record.Record, i int, sig []byte) bool {
	if ok, found := r.line.answer(k, sig); found {
		return ok
	}
	return r.verify(k, rec.SigningInput(i), sig)
}

func verifyWithKey(k *jwk.Key, input, sig []byte) bool { return checkSignature(k, input, sig) }

// checkSignature checks one signature; the benchmarks' child processes
// replace it to read books with placeholder signatures.
var checkSignature = func(k *jwk.Key, input, sig []byte) bool { return k.Verify(input, sig) }

func overall(states []SigState) string {
	for _, s := range states {
		if s.State == stateInvalid {
			return stateInvalid
		}
	}
	for _, s := range states {
		if s.State == stateUnavailable {
			return stateUnavailable
		}
	}
	return stateValid
}

func verifiedBy(states []SigState) string {
	if len(states) == 0 || overall(states) == stateInvalid {
		return "none"
	}
	valid := 0
	for _, s := range states {
		if s.State == stateValid {
			valid++
		}
	}
	switch {
	case valid == len(states):
		return "all"
	case valid > 0:
		return "some"
	}
	return "none"
}

// passkeyState checks the one passkey signature of an approval or a
// cancellation against the issuer the slip names.
func (r *reader) passkeyState(s *slip.Slip, rec *record.Record) (string, error) {
	st, err := passkey.Check(s.Issuer.Key, s.Issuer.Origin, s.Issuer.RPID, rec, r.opts.withoutList())
	if err != nil {
		return stateInvalid, err
	}
	return string(st), nil
}

func (o Options) withoutList() []string { return append([]string(nil), o.WithoutMethods...) }

func (o Options) slipOptions() slip.Options {
	return slip.Options{IssuerKeys: o.IssuerKeys, WithoutMethods: o.withoutList()}
}

// rulesOf turns a checked slip into the form comparisons read.
func rulesOf(s *slip.Slip) *rules {
	r := &rules{
		actions:    map[string]bool{},
		never:      map[string]bool{},
		with:       map[string]*service{},
		validFrom:  s.ValidFrom.Unix(),
		validUntil: s.ValidUntil.Unix(),
	}
	for _, a := range s.Actions {
		r.actions[a] = true
	}
	for _, n := range s.Never {
		r.never[n] = true
	}
	for _, l := range s.Limits {
		r.limits = append(r.limits, limit{action: l.Action, kind: l.Kind, value: l.Value, per: l.Per, unit: l.Unit})
	}
	for _, c := range s.Requires {
		r.requires = append(r.requires, condition{need: c.Need, action: c.Action, above: c.Above, unit: c.Unit})
	}
	for _, w := range s.With {
		r.with[w.ID] = &service{id: w.ID, keys: w.Keys}
	}
	return r
}

// Reading members of content that a validator has already confirmed.

func str(c map[string]any, name string) string {
	s, _ := c[name].(string)
	return s
}

func has(c map[string]any, name string) bool {
	_, ok := c[name]
	return ok
}

func whole(c map[string]any, name string) int64 {
	switch n := c[name].(type) {
	case int64:
		return n
	case int:
		return int64(n)
	}
	return -1
}

func timeOf(c map[string]any, name string) int64 {
	t, ok := canon.ParseTime(str(c, name))
	if !ok {
		return math.MinInt64
	}
	return t.Unix()
}

// requestOf reads what a stub, an approval or a proposal says is done.
func requestOf(c map[string]any) request {
	q := request{action: str(c, "action"), when: timeOf(c, "when")}
	if a, ok := c["amount"].(map[string]any); ok {
		q.amount = &amount{unit: str(a, "unit"), value: whole(a, "value")}
	}
	if has(c, "with") {
		q.with, q.hasWith = str(c, "with"), true
	}
	return q
}

// requestText is what an approval and a stub must agree on: the action and
// the amount, service and documents, each in both or in neither.
func requestText(c map[string]any) string {
	m := map[string]any{"action": c["action"]}
	for _, name := range []string{"amount", "details", "with"} {
		if v, ok := c[name]; ok {
			m[name] = v
		}
	}
	b, err := canon.Marshal(m)
	if err != nil {
		return "\x00" + err.Error()
	}
	return string(b)
}

// validateRequest confirms the members that say what is asked for (the
// reference's validateRequest): the action, and where present the amount,
// the service and the documents. It reads them through the stub's own
// validator, with the stub's other members set to values that pass.
func validateRequest(c map[string]any) error {
	probe := map[string]any{
		"type": "provared.stub.v0", "id": "AAAAAAAAAAAAAAAAAAAAAA", "seq": int64(0),
		"slip": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "when": c["when"], "action": c["action"],
	}
	for _, name := range []string{"amount", "details", "with"} {
		if v, ok := c[name]; ok {
			probe[name] = v
		}
	}
	return record.ValidateStub(probe)
}

func problemf(code, format string, a ...any) error { return problem.New(code, format, a...) }
