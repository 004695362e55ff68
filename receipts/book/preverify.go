package book

import (
	"sync"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// Checking a line's signatures where it is parsed. The reader knows which
// key each signature must fit only once it has read the slip the line is
// under; it publishes each usable slip's keys here as it reads the slip,
// and from then on the worker that parses a stub line checks the stub's
// and the countersignature's signatures against those very keys (the same
// *jwk.Key values) and notes the answers on the line. When the reader
// asks for a signature, an answer noted for that signature (the same
// decoded bytes) and that key is the answer; any other it checks as it
// would have. So a guess by a worker never changes an answer: at worst it
// is wasted.

// keyBoard holds the keys of the usable slips and passes read so far.
type keyBoard struct {
	mu     sync.RWMutex
	slips  map[string]*slipState
	passes map[string]jwk.KeySet // a helper's keys, by its pass
}

func newKeyBoard() *keyBoard {
	return &keyBoard{slips: map[string]*slipState{}, passes: map[string]jwk.KeySet{}}
}

// publish makes the keys of the slip or the pass e was read as (when
// usable) known.
func (kb *keyBoard) publish(r *reader, e *Entry) {
	if kb == nil {
		return
	}
	switch e.Kind {
	case KindSlip:
		if st := r.slips[e.Fingerprint]; st != nil && st.usable && st.slip != nil {
			kb.mu.Lock()
			if _, seen := kb.slips[st.fingerprint]; !seen {
				kb.slips[st.fingerprint] = st
			}
			kb.mu.Unlock()
		}
	case KindPass:
		if ps := r.passes[e.Fingerprint]; ps != nil && ps.usable {
			kb.mu.Lock()
			if _, seen := kb.passes[ps.fingerprint]; !seen {
				kb.passes[ps.fingerprint] = ps.pass.To.Keys
			}
			kb.mu.Unlock()
		}
	}
}

// keysFor returns the keys a stub under slip must be signed with (the
// agent's or, where it names a pass, the helper's), and those of its
// service with.
func (kb *keyBoard) keysFor(slip, with string, hasWith bool, pass string, hasPass bool) (signer jwk.KeySet, service *jwk.KeySet, ok bool) {
	kb.mu.RLock()
	st := kb.slips[slip]
	helper, known := kb.passes[pass]
	kb.mu.RUnlock()
	if st == nil || (hasPass && !known) {
		return jwk.KeySet{}, nil, false
	}
	if svc := st.rules.with[with]; hasWith && svc != nil {
		service = svc.keys
	}
	if hasPass {
		return helper, service, true
	}
	return st.slip.Agent.Keys, service, true
}

// checkedSig is one signature a worker checked: its decoded bytes (by
// their first byte's address), the key, and the answer.
type checkedSig struct {
	sig *byte
	key *jwk.Key
	ok  bool
}

// preverify checks the signatures of a stub line's stub and
// countersignature against the keys kb knows for its slip.
func (pl *parsedLine) preverify(kb *keyBoard, opts Options, scratch *[]byte) {
	if kb == nil || pl.deferred || pl.obj == nil {
		return
	}
	stub, _ := pl.obj["stub"].(preParsed)
	if stub.rec == nil || stub.err != nil {
		return
	}
	c := stub.rec.Content
	with, hasWith := c["with"].(string)
	pass, hasPass := c["pass"].(string)
	signer, service, ok := kb.keysFor(str(c, "slip"), with, hasWith, pass, hasPass)
	if !ok {
		return
	}
	pl.checkAll(stub.rec, signer, opts, scratch)
	if cs, _ := pl.obj["countersignature"].(preParsed); cs.rec != nil && cs.err == nil && service != nil {
		pl.checkAll(cs.rec, *service, opts, scratch)
	}
}

// checkAll checks rec's signatures against keys, building each signing
// input in scratch (the worker's own).
func (pl *parsedLine) checkAll(rec *record.Record, keys jwk.KeySet, opts Options, scratch *[]byte) {
	ordered := []*jwk.Key{keys.Ed25519, keys.MLDSA87}
	for i := range rec.Signatures {
		if i >= len(ordered) || ordered[i] == nil || opts.without(ordered[i].Alg) {
			continue
		}
		sig, err := rec.Signatures[i].Bytes()
		if err != nil || len(sig) == 0 {
			continue
		}
		*scratch = rec.AppendSigningInput((*scratch)[:0], i)
		pl.checked = append(pl.checked, checkedSig{&sig[0], ordered[i], checkSignature(ordered[i], *scratch, sig)})
	}
}

// answer returns the answer a worker noted for sig under k (none on a nil
// line).
func (pl *parsedLine) answer(k *jwk.Key, sig []byte) (ok, found bool) {
	if pl == nil || len(sig) == 0 {
		return false, false
	}
	for _, c := range pl.checked {
		if c.sig == &sig[0] && c.key == k {
			return c.ok, true
		}
	}
	return false, false
}
