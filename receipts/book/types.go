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
	// tests of how a check behaves without them). SLH-DSA-SHA2-256s is
	// always without: this program has no SLH-DSA.
	WithoutMethods []string
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
	if alg == "SLH-DSA-SHA2-256s" {
		return true
	}
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
	// Compared says whether a stub was compared with its slip.
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
