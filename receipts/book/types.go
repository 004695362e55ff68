package book

// Limits of the format (section 7).
const (
	MaxEntries   = 100000 // the most entries a book may hold
	MaxLineBytes = 131072 // the longest line, in bytes, without its line feed
	// NearFull is the number of entries (90% of MaxEntries) from which
	// `check` and `verify` warn that the book is nearly full.
	NearFull = MaxEntries * 9 / 10
	// FullReserve is how many entries before MaxEntries the executor stops
	// taking new calls, so that every call already in flight, and the
	// receipts a restart writes from the copy, still find room.
	FullReserve = 1000
	// Format names the checker's result format.
	Format = "provared-book-draft-v0"
	// clockAllowance is the 300 s the format allows between two clocks.
	clockAllowance = 300
)

// Options are the checker's options.
type Options struct {
	// IssuerKeys are the RFC 7638 thumbprints of the passkeys trusted to sign
	// slips. Without any, the checker notes that slips were not compared with
	// a trusted key, and the check before acting refuses everything.
	IssuerKeys []string
	// WithoutMethods names signing methods to treat as not built in (for
	// tests of how a check behaves without them, and for the format's
	// vectors, answered as on a device without SLH-DSA-SHA2-256s): a
	// signature by one is "unavailable", never valid. Every method the
	// format names is built in here, SLH-DSA-SHA2-256s included. The names
	// "RSA", "ECDSA" and "Ed25519" also reach a time-stamp's check.
	WithoutMethods []string
	// SealKeys are the fingerprints of the key sets of the recorders the
	// caller expects (format description §21.1, rule 5); nil for none, and
	// a seal's keys are then noted as not compared. A seal by other keys
	// is the problem "sealer-not-expected".
	SealKeys []string
	// StampServices are the fingerprints of the certificates of the
	// time-stamp services the caller trusts (§21.2). A sound time-stamp
	// from any other is shown as not counted, never as a time.
	StampServices []string
	// ExpectedRoot is the top fingerprint the caller already trusts; "" for
	// none. Read by CheckBook and CheckBefore, which check a fixed text; a
	// Book, which grows, does not read it.
	ExpectedRoot string
	// ExpectedSize is the number of entries the caller already trusts; nil
	// for none. Read as ExpectedRoot is.
	ExpectedSize *int
	// Checkpoint, read by OpenBook alone, is the state the executor last
	// verified (see [Checkpoint]); nil for none.
	Checkpoint *Checkpoint
}

func (o Options) without(alg string) bool {
	for _, m := range o.WithoutMethods {
		if m == alg {
			return true
		}
	}
	return false
}

// Finding is a problem or a breach: the reference's code and our words.
type Finding struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Signature states.
const (
	stateValid       = "valid"
	stateInvalid     = "invalid"
	stateUnavailable = "unavailable"
	stateUnchecked   = "unchecked"
	stateAbsent      = "absent"
)

// Entry kinds.
const (
	KindUnreadable      = "unreadable"
	KindSlip            = "slip"
	KindStub            = "stub"
	KindRefusal         = "refusal"
	KindCancellation    = "cancellation"
	KindAcknowledgement = "acknowledgement"
	KindSeal            = "seal"
	KindPass            = "pass"
)

// SigState is the state of one signature: its method and "valid",
// "invalid" or "unavailable".
type SigState struct {
	Method string `json:"method"`
	State  string `json:"state"`
}

// Entry is what the checker found for one line.
type Entry struct {
	Index       int       `json:"index"`
	Kind        string    `json:"kind"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	Verified    string    `json:"verified"` // "all", "some" or "none"
	Problems    []Finding `json:"problems"`
	Breaches    []Finding `json:"breaches"`
	Notes       []string  `json:"notes"`
	Slip        string    `json:"slip,omitempty"`
	// Pass is the pass a helper's stub, or an acknowledgement, names (once
	// found in the book).
	Pass string `json:"pass,omitempty"`
	// Compared says whether a stub was compared with its slip, and a pass
	// with what its writer holds.
	Compared bool `json:"compared,omitempty"`
	// Needs lists what the slip asks to go with a stub.
	Needs []string `json:"needs,omitempty"`

	signatures    []SigState // the entry's own signatures, as checked
	passkeyState  string     // slip or cancellation: valid, invalid, unavailable, unchecked
	passkeyAlg    string
	counterState  string // stubs: absent, unchecked, invalid, valid, unavailable
	counterSigs   []SigState
	approvalState string // stubs: absent, invalid, valid, unavailable
	approvalAlg   string

	// Seal is what a seal entry shows; nil for every other kind.
	Seal *SealDetails `json:"seal,omitempty"`

	// when is the latest time the entry states (its own, a
	// countersignature's or an approval's), in milliseconds; hasWhen says
	// it states one.
	when    int64
	hasWhen bool
}

// SealDetails is what the checker found for a seal beyond any entry's.
type SealDetails struct {
	// Sealer is the fingerprint of the seal's key set.
	Sealer string `json:"sealer"`
	// Stamps are its time-stamps as checked, in their order.
	Stamps []StampState `json:"stamps,omitempty"`
	// StampedAt is the time its counted time-stamps give it; "" for none.
	StampedAt string `json:"stampedAt,omitempty"`
	// missing names time-stamps this checker did not check (block
	// time-stamps): never a pass.
	missing []string
}

// StampState is one time-stamp beside a seal, as checked.
type StampState struct {
	Kind  string `json:"kind"`  // "service" or "block"
	State string `json:"state"` // "valid", "untrusted", "unavailable", "invalid"
	When  string `json:"when,omitempty"`
	// Time is the stated time in milliseconds.
	Time int64 `json:"time,omitempty"`
	// Authority is the fingerprint of the certificate that signed.
	Authority string `json:"authority,omitempty"`
}

// Sealed is how far the last counted time-stamp reaches: every entry
// before seal Seal (the first Entries entries) existed by When.
type Sealed struct {
	Entries int    `json:"entries"`
	When    string `json:"when"`
	Seal    int    `json:"seal"`
	By      string `json:"by"` // "service" or "block"
}

// ServiceSeal is what one trusted time-stamp service shows: the first
// Entries entries existed by When, by its stamp on the seal at index Seal.
type ServiceSeal struct {
	Service string `json:"service"`
	Entries int    `json:"entries"`
	When    string `json:"when"`
	Seal    int    `json:"seal"`
}

// UncountedStamp is a sound time-stamp from a service the caller did not
// name: shown, never taken as a time.
type UncountedStamp struct {
	Seal    int    `json:"seal"`
	Service string `json:"service"`
	When    string `json:"when"`
}

// Counts are the numbers of entries of each kind.
type Counts struct {
	Slips            int `json:"slips"`
	Stubs            int `json:"stubs"`
	Countersigned    int `json:"countersigned"`
	OneSided         int `json:"oneSided"`
	Approved         int `json:"approved"`
	Refusals         int `json:"refusals"`
	Terms            int `json:"terms"`
	Seals            int `json:"seals"`
	Cancellations    int `json:"cancellations"`
	Acknowledgements int `json:"acknowledgements"`
	Vouchings        int `json:"vouchings"`
	Passes           int `json:"passes"`
}

// Summary is the checker's verdict on a whole book.
type Summary struct {
	// Intact: no problem was found and every signature was checked.
	Intact         bool     `json:"intact"`
	ProblemFound   bool     `json:"problemFound"`
	FullyChecked   bool     `json:"fullyChecked"`
	MethodsMissing []string `json:"methodsMissing"`
	// WithinSlips: every stub was compared with its slip and none was outside it.
	WithinSlips bool   `json:"withinSlips"`
	FirstBreach *int   `json:"firstBreach"`
	Counts      Counts `json:"counts"`
	// Sealed is how far the last counted time-stamp reaches; nil when no
	// seal's time-stamp counts.
	Sealed *Sealed `json:"sealed"`
	// Services are, for each trusted time-stamp service, the furthest its
	// stamps reach; NotCounted the sound stamps of services not named.
	Services   []ServiceSeal    `json:"services,omitempty"`
	NotCounted []UncountedStamp `json:"notCounted,omitempty"`
}

// Result is the checker's answer for a whole book.
type Result struct {
	Format   string    `json:"format"`
	Size     int       `json:"size"`
	Root     string    `json:"root,omitempty"`
	Problems []Finding `json:"problems"`
	Notes    []string  `json:"notes"`
	Entries  []Entry   `json:"entries"`
	Summary  Summary   `json:"summary"`
}
