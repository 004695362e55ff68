package book

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const vectorDir = "../../testdata/provared-vectors"

type vectorFile struct {
	About    string           `json:"about"`
	Function string           `json:"function"`
	Cases    []map[string]any `json:"cases"`
}

// loadVectors reads a vector file with numbers as int64 where whole, as
// canonical values hold them.
func loadVectors(t testing.TB, name string) vectorFile {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(vectorDir, name))
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var f struct {
		About    string `json:"about"`
		Function string `json:"function"`
		Cases    []any  `json:"cases"`
	}
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("decoding %s: %v", name, err)
	}
	out := vectorFile{About: f.About, Function: f.Function}
	for _, c := range f.Cases {
		out.Cases = append(out.Cases, numbers(c).(map[string]any))
	}
	return out
}

func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, y := range x {
			x[k] = numbers(y)
		}
	case []any:
		for i, y := range x {
			x[i] = numbers(y)
		}
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

func optionsOf(v any) Options {
	m, _ := v.(map[string]any)
	var o Options
	if keys, ok := m["issuerKeys"].([]any); ok {
		o.IssuerKeys = []string{}
		for _, k := range keys {
			s, _ := k.(string)
			o.IssuerKeys = append(o.IssuerKeys, s)
		}
	}
	if ms, ok := m["withoutMethods"].([]any); ok {
		for _, x := range ms {
			s, _ := x.(string)
			o.WithoutMethods = append(o.WithoutMethods, s)
		}
	}
	if r, ok := m["expectedRoot"].(string); ok {
		o.ExpectedRoot = r
	}
	if s, ok := m["expectedSize"]; ok {
		n := -1 // a size that is not a whole number matches no book
		if i, isInt := s.(int64); isInt {
			n = int(i)
		}
		o.ExpectedSize = &n
	}
	return o
}

// setAsideReason names what a case needs that this package does not read:
// an entry kind, or an option for what is handed over beside a book.
func setAsideReason(c map[string]any) string {
	var kinds []string
	text, _ := c["text"].(string)
	for _, line := range strings.Split(text, "\n") {
		var v map[string]any
		if json.Unmarshal([]byte(line), &v) != nil {
			continue
		}
		for name := range v {
			switch name {
			case "terms", "seal", "vouching", "withdrawal", "stamps":
				if !slices.Contains(kinds, name) {
					kinds = append(kinds, name)
				}
			}
		}
	}
	opts, _ := c["options"].(map[string]any)
	for _, name := range []string{"cancellations", "disclosures", "blocks", "stampServices", "vouchers", "sealKeys"} {
		if _, ok := opts[name]; ok {
			kinds = append(kinds, "option "+name)
		}
	}
	slices.Sort(kinds)
	return strings.Join(kinds, ", ")
}

// booksSetAside lists, by name, every books.json case this package does
// not run, with the kind or option that causes it.
var booksSetAside = map[string]string{
	"terms, a stub relying on them, and refusals":                   "terms",
	"a stub outside the terms it relies on":                         "terms",
	"a cancellation, time-stamped, and stubs after it":              "option stampServices, stamps",
	"a cancellation, its time-stamp service not trusted":            "stamps",
	"the cancellation left out, the person's copy handed over":      "option cancellations, option stampServices",
	"the person's copy handed over twice":                           "option cancellations, option stampServices",
	"copies that are not a list":                                    "option cancellations",
	"an empty list of copies":                                       "option cancellations",
	"a vouching record before the slip, its organisation not named": "vouching",
	"a vouching record before the slip, its organisation named":     "option vouchers, vouching",
	"a vouching record before the slip, another organisation named": "option vouchers, vouching",
	"a vouching record, then its withdrawal":                        "vouching, withdrawal",
	"disclosures that are a list":                                   "option disclosures",
	"disclosures for a slip that is not here":                       "option disclosures",
	"blocks that are not fingerprints":                              "option blocks",
	"blocks that are fingerprints":                                  "option blocks",
	"the sample record":                                             "seal, stamps, terms",
	"the sample record, its passkey trusted":                        "seal, stamps, terms",
}

func codes(list any) []string {
	out := []string{}
	switch l := list.(type) {
	case []any:
		for _, x := range l {
			m, _ := x.(map[string]any)
			s, _ := m["code"].(string)
			out = append(out, s)
		}
	case []Finding:
		for _, f := range l {
			out = append(out, f.Code)
		}
	}
	return out
}

func TestBooksVectors(t *testing.T) {
	f := loadVectors(t, "books.json")
	if f.Function != "checkBook" || len(f.Cases) != 52 {
		t.Fatalf("books.json: function %q, %d cases; want checkBook, 52", f.Function, len(f.Cases))
	}
	ran := 0
	for _, c := range f.Cases {
		name := c["name"].(string)
		reason := setAsideReason(c)
		if want, listed := booksSetAside[name]; listed || reason != "" {
			if !listed || want != reason {
				t.Errorf("%s: set aside for %q, but the list says %q", name, reason, want)
			}
			continue
		}
		ran++
		t.Run(name, func(t *testing.T) {
			got := CheckBook([]byte(c["text"].(string)), optionsOf(c["options"]))
			want := c["expected"].(map[string]any)["ok"].(map[string]any)
			compareResult(t, got, want)
		})
	}
	if ran+len(booksSetAside) != 52 {
		t.Errorf("ran %d and set aside %d of 52", ran, len(booksSetAside))
	}
	t.Logf("books.json: ran %d cases, set aside %d", ran, len(booksSetAside))
}

func compareResult(t *testing.T, got Result, want map[string]any) {
	t.Helper()
	if g, w := codes(got.Problems), codes(want["problems"]); !slices.Equal(g, w) {
		t.Errorf("book problems %v, want %v", g, w)
	}
	if w := want["size"].(int64); int64(got.Size) != w {
		t.Errorf("size %d, want %d", got.Size, w)
	}
	if w, ok := want["root"].(string); ok && got.Root != w {
		t.Errorf("root %s, want %s", got.Root, w)
	}
	wantEntries := want["entries"].([]any)
	if len(got.Entries) != len(wantEntries) {
		t.Fatalf("%d entries, want %d", len(got.Entries), len(wantEntries))
	}
	for i, we := range wantEntries {
		w := we.(map[string]any)
		g := got.Entries[i]
		if g.Kind != w["kind"] {
			t.Errorf("entry %d: kind %s, want %s", i, g.Kind, w["kind"])
		}
		if gc, wc := codes(g.Problems), codes(w["problems"]); !slices.Equal(gc, wc) {
			t.Errorf("entry %d: problems %v, want %v", i, gc, wc)
		}
		if gc, wc := codes(g.Breaches), codes(w["breaches"]); !slices.Equal(gc, wc) {
			t.Errorf("entry %d: breaches %v, want %v", i, gc, wc)
		}
		if wf, ok := w["fingerprint"].(string); ok && g.Fingerprint != wf {
			t.Errorf("entry %d: fingerprint %s, want %s", i, g.Fingerprint, wf)
		}
		if g.Verified != w["verified"] {
			t.Errorf("entry %d: verified %s, want %s", i, g.Verified, w["verified"])
		}
		if wp, ok := w["pass"].(string); (ok || g.Pass != "") && g.Pass != wp {
			t.Errorf("entry %d: pass %q, want %q", i, g.Pass, wp)
		}
		if wc, ok := w["compared"].(bool); ok && (g.Kind == KindStub || g.Kind == KindPass) && g.Compared != wc {
			t.Errorf("entry %d: compared %v, want %v", i, g.Compared, wc)
		}
	}
	ws := want["summary"].(map[string]any)
	s := got.Summary
	for name, g := range map[string]bool{"intact": s.Intact, "problemFound": s.ProblemFound, "fullyChecked": s.FullyChecked, "withinSlips": s.WithinSlips} {
		if ws[name] != g {
			t.Errorf("summary.%s %v, want %v", name, g, ws[name])
		}
	}
	var wantFirst *int64
	if fb, ok := ws["firstBreach"].(int64); ok {
		wantFirst = &fb
	}
	if (s.FirstBreach == nil) != (wantFirst == nil) || (s.FirstBreach != nil && int64(*s.FirstBreach) != *wantFirst) {
		t.Errorf("summary.firstBreach %v, want %v", s.FirstBreach, ws["firstBreach"])
	}
	gotMissing := s.MethodsMissing
	wantMissing := []string{}
	for _, m := range ws["methodsMissing"].([]any) {
		wantMissing = append(wantMissing, m.(string))
	}
	if !slices.Equal(gotMissing, wantMissing) {
		t.Errorf("summary.methodsMissing %v, want %v", gotMissing, wantMissing)
	}
	gc, _ := json.Marshal(s.Counts)
	var gotCounts map[string]any
	_ = json.Unmarshal(gc, &gotCounts)
	for name, w := range ws["counts"].(map[string]any) {
		if g, ok := gotCounts[name].(float64); !ok || int64(g) != w.(int64) {
			t.Errorf("summary.counts.%s %v, want %v", name, gotCounts[name], w)
		}
	}
}

func TestCheckBeforeVectors(t *testing.T) {
	f := loadVectors(t, "check-before.json")
	if f.Function != "checkBefore" || len(f.Cases) != 14 {
		t.Fatalf("check-before.json: function %q, %d cases; want checkBefore, 14", f.Function, len(f.Cases))
	}
	for _, c := range f.Cases {
		name := c["name"].(string)
		if reason := setAsideReason(c); reason != "" {
			t.Errorf("%s: would be set aside for %q; no check-before case should be", name, reason)
			continue
		}
		t.Run(name, func(t *testing.T) {
			text := []byte(c["text"].(string))
			p := ProposalFromValue(c["proposal"].(map[string]any))
			opts := optionsOf(c["options"])
			want := c["expected"].(map[string]any)["ok"].(map[string]any)
			compareDecision(t, "from scratch", CheckBefore(text, p, opts), want)

			// The same answer from a book opened from a file, through its ledger.
			path := filepath.Join(t.TempDir(), "book.jsonl")
			if err := os.WriteFile(path, text, 0o644); err != nil {
				t.Fatal(err)
			}
			b, err := OpenBook(path, opts)
			if err != nil {
				t.Fatalf("OpenBook: %v", err)
			}
			defer b.Close()
			compareDecision(t, "ledger", b.Ledger().CheckBefore(p), want)
		})
	}
}

func compareDecision(t *testing.T, how string, got Decision, want map[string]any) {
	t.Helper()
	if got.Allowed != want["allowed"] {
		t.Errorf("%s: allowed %v, want %v (%v %v)", how, got.Allowed, want["allowed"], got.Problems, got.Breaches)
	}
	if g, w := codes(got.Problems), codes(want["problems"]); !slices.Equal(g, w) {
		t.Errorf("%s: problems %v, want %v (%v)", how, g, w, got.Problems)
	}
	if g, w := codes(got.Breaches), codes(want["breaches"]); !slices.Equal(g, w) {
		t.Errorf("%s: breaches %v, want %v", how, g, w)
	}
	wantNeeds := []string{}
	for _, n := range want["needs"].([]any) {
		wantNeeds = append(wantNeeds, n.(string))
	}
	if !slices.Equal(got.Needs, wantNeeds) {
		t.Errorf("%s: needs %v, want %v", how, got.Needs, wantNeeds)
	}
}
