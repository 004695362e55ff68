package book

import (
	"slices"
	"testing"
)

// The seal in books.json's "the sample record" was made by the reference
// library, with a real RFC 3161 time-stamp beside it. Its case is set aside
// whole (the book holds terms), but its seal entry is checked here: as the
// vector answers it (on a device without SLH-DSA), and as a checker with
// SLH-DSA must answer it.
func TestSampleRecordSeal(t *testing.T) {
	const (
		fingerprint = "St1v4SDm88OdbJBurGixAgyv7N2mcMVNGKO66HpBoqU"
		sealer      = "DOg-0-l1OXO-AJ2z1vI-l5yXjuqNh5yOasQr8vyhdfc"
		authority   = "l3_bEVZ-I9DONwBvZqLwnBwOXYlOSs_nhUeH9XPWdYQ"
		stampedAt   = "2026-10-05T10:16:00Z"
	)
	var text string
	for _, c := range loadVectors(t, "books.json").Cases {
		if c["name"] == "the sample record" {
			text = c["text"].(string)
		}
	}
	if text == "" {
		t.Fatal("books.json has no case \"the sample record\"")
	}
	for _, tc := range []struct {
		name     string
		opts     Options
		verified string
		slh      string
		state    string
		sealed   bool
	}{
		{"as the vector answers it", Options{WithoutMethods: []string{"SLH-DSA-SHA2-256s"}}, "some", stateUnavailable, "untrusted", false},
		{"with SLH-DSA", Options{}, "all", stateValid, "untrusted", false},
		{"with SLH-DSA, its service trusted", Options{StampServices: []string{authority}}, "all", stateValid, "valid", true},
		{"without SLH-DSA, its service trusted", Options{StampServices: []string{authority}, WithoutMethods: []string{"SLH-DSA-SHA2-256s"}}, "some", stateUnavailable, "valid", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := CheckBook([]byte(text), tc.opts)
			e := res.Entries[9]
			if e.Kind != KindSeal || e.Fingerprint != fingerprint || e.Seal.Sealer != sealer || len(e.Problems) != 0 || e.Verified != tc.verified {
				t.Fatalf("entry 9: kind %s fingerprint %s sealer %s problems %v verified %s", e.Kind, e.Fingerprint, e.Seal.Sealer, e.Problems, e.Verified)
			}
			if len(e.signatures) != 3 || e.signatures[0].State != stateValid || e.signatures[1].State != stateValid || e.signatures[2].State != tc.slh {
				t.Fatalf("signatures %v", e.signatures)
			}
			if len(e.Seal.Stamps) != 1 || e.Seal.Stamps[0].State != tc.state || e.Seal.Stamps[0].When != stampedAt || e.Seal.Stamps[0].Time != 1791195360000 || e.Seal.Stamps[0].Authority != authority {
				t.Fatalf("stamps %+v", e.Seal.Stamps)
			}
			if tc.sealed {
				s := res.Summary.Sealed
				if s == nil || s.Entries != 9 || s.When != stampedAt || s.Seal != 9 || s.By != "service" || e.Seal.StampedAt != stampedAt {
					t.Fatalf("sealed %+v, stampedAt %q", s, e.Seal.StampedAt)
				}
				if len(res.Summary.Services) != 1 || res.Summary.Services[0] != (ServiceSeal{Service: authority, Entries: 9, When: stampedAt, Seal: 9}) {
					t.Fatalf("services %+v", res.Summary.Services)
				}
			} else {
				if res.Summary.Sealed != nil {
					t.Fatalf("sealed %+v, want none", res.Summary.Sealed)
				}
				if tc.state == "untrusted" && (len(res.Summary.NotCounted) != 1 || res.Summary.NotCounted[0].Service != authority) {
					t.Fatalf("not counted %+v", res.Summary.NotCounted)
				}
			}
			if !slices.Contains(res.Summary.MethodsMissing, "SLH-DSA-SHA2-256s") != (tc.slh == stateValid) {
				t.Fatalf("methods missing %v", res.Summary.MethodsMissing)
			}
		})
	}
}
