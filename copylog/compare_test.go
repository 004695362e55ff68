package copylog

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
)

// stub is a book stub of the executor for call, with the given
// fingerprint; rules adds an executor.rules detail.
func stub(line int, call, fingerprint string, rules bool) BookEntry {
	d := map[string]string{"provared.arguments": fp("{}"), receipt.LabelCall: fp(call)}
	if rules {
		d[receipt.LabelRules] = fp("rules")
	}
	return BookEntry{Line: line, Kind: EntryStub, Fingerprint: fingerprint, With: DefaultService, Details: d, Slip: fp("slip")}
}

func underRules(e BookEntry) BookEntry { e.SlipStatesRules = true; return e }

func refusal(line int, fingerprint string) BookEntry {
	return BookEntry{Line: line, Kind: EntryRefusal, Fingerprint: fingerprint, Slip: fp("slip")}
}

func intact(entries ...BookEntry) BookView { return BookView{Intact: true, Entries: entries} }

// finding lists a report's findings by call, for table tests.
type findings struct {
	Matches, Differs, Missing, NotWritten, SentWithoutReceipt, MissingDenials, WithoutRules []string
	UnknownReceipts                                                                         []int // book lines
}

func findingsOf(r Report) findings {
	var f findings
	for _, m := range r.Matches {
		f.Matches = append(f.Matches, m.Call)
	}
	for _, d := range r.Differs {
		f.Differs = append(f.Differs, d.Call)
	}
	for _, m := range r.Missing {
		f.Missing = append(f.Missing, m.Call)
	}
	for _, n := range r.NotWritten {
		f.NotWritten = append(f.NotWritten, n.Call)
	}
	for _, s := range r.SentWithoutReceipt {
		f.SentWithoutReceipt = append(f.SentWithoutReceipt, s.Call)
	}
	for _, d := range r.MissingDenials {
		f.MissingDenials = append(f.MissingDenials, d.Call)
	}
	for _, w := range r.WithoutRules {
		f.WithoutRules = append(f.WithoutRules, w.Kind+":"+w.Call)
	}
	for _, u := range r.UnknownReceipts {
		f.UnknownReceipts = append(f.UnknownReceipts, u.Line)
	}
	return f
}

func TestCompare(t *testing.T) {
	s1, s2, s9 := fp("stub-1"), fp("stub-2"), fp("stub-9")
	tests := []struct {
		name    string
		lines   []Line
		book    BookView
		want    findings
		ok      bool
		summary string
	}{
		{
			name:    "everything agrees",
			lines:   []Line{{Kind: KindStart, When: at}, sentLine("c1"), receiptLine("c1", s1), withdrawnLine("c0")},
			book:    intact(stub(2, "c1", s1, false)),
			want:    findings{Matches: []string{"c1"}},
			ok:      true,
			summary: "compare: OK 1 call, 1 match; copy ok; book intact",
		},
		{
			name:    "a receipt written at a restart matches",
			lines:   []Line{sentLine("c2"), notWrittenLine("c2"), lateReceiptLine("c2", s2)},
			book:    intact(stub(3, "c2", s2, false)),
			want:    findings{Matches: []string{"c2"}},
			ok:      true,
			summary: "compare: OK 1 call, 1 match; copy ok; book intact",
		},
		{
			name:    "a receipt line before its call's sent line still counts",
			lines:   []Line{receiptLine("c1", s1), sentLine("c1"), sentLine("c1")},
			book:    intact(stub(2, "c1", s1, false)),
			want:    findings{Matches: []string{"c1"}},
			ok:      true,
			summary: "compare: OK 1 call, 1 match; copy ok; book intact",
		},
		{
			name:    "a receipt of a call never sent is not compared",
			lines:   []Line{receiptLine("c7", s1), sentLine("c1"), receiptLine("c1", s2)},
			book:    intact(stub(2, "c1", s2, false)),
			want:    findings{Matches: []string{"c1"}},
			ok:      true,
			summary: "compare: OK 1 call, 1 match; copy ok; book intact",
		},
		{
			name:    "the book holds another receipt for the call",
			lines:   []Line{sentLine("c1"), receiptLine("c1", s1)},
			book:    intact(stub(2, "c1", s9, false)),
			want:    findings{Differs: []string{"c1"}},
			summary: "compare: FAIL 1 call, 0 match, 1 differs; copy ok; book intact",
		},
		{
			name:    "a second receipt beside the right one",
			lines:   []Line{sentLine("c1"), receiptLine("c1", s1)},
			book:    intact(stub(2, "c1", s1, false), stub(3, "c1", s9, false)),
			want:    findings{Matches: []string{"c1"}, Differs: []string{"c1"}},
			summary: "compare: FAIL 1 call, 1 match, 1 differs; copy ok; book intact",
		},
		{
			name:    "a receipt left out of the book",
			lines:   []Line{sentLine("c1"), receiptLine("c1", s1), sentLine("c2"), receiptLine("c2", s2)},
			book:    intact(stub(2, "c1", s1, false)),
			want:    findings{Matches: []string{"c1"}, Missing: []string{"c2"}},
			summary: "compare: FAIL 2 calls, 1 match, 1 missing; copy ok; book intact",
		},
		{
			name:    "the executor could not write the book",
			lines:   []Line{sentLine("c1"), notWrittenLine("c1")},
			book:    intact(),
			want:    findings{NotWritten: []string{"c1"}},
			summary: "compare: FAIL 1 call, 0 match, 1 not written; copy ok; book intact",
		},
		{
			name:    "sent and never given a receipt",
			lines:   []Line{sentLine("c1")},
			book:    intact(),
			want:    findings{SentWithoutReceipt: []string{"c1"}},
			summary: "compare: FAIL 1 call, 0 match, 1 sent without receipt; copy ok; book intact",
		},
		{
			name:  "receipts the copy does not know",
			lines: []Line{sentLine("c1"), receiptLine("c1", s1)},
			book: intact(
				stub(2, "c1", s1, false),
				stub(3, "never-sent", s9, false),
				BookEntry{Line: 4, Kind: EntryStub, Fingerprint: fp("no call"), With: DefaultService, Details: map[string]string{}},
				BookEntry{Line: 5, Kind: EntryStub, Fingerprint: fp("other service"), With: "bank", Details: map[string]string{receipt.LabelCall: fp("x")}},
				BookEntry{Line: 6, Kind: EntryStub, Fingerprint: fp("no with"), Details: map[string]string{receipt.LabelCall: fp("y")}},
			),
			want:    findings{Matches: []string{"c1"}, UnknownReceipts: []int{3, 4}},
			summary: "compare: FAIL 1 call, 1 match, 2 unknown receipts; copy ok; book intact",
		},
		{
			name: "denials: one missing, one in the book, one over the hourly cap",
			lines: []Line{
				denialLine("d1", fp("refusal-1"), ""),
				denialLine("d2", fp("refusal-2"), ""),
				denialLine("d3", "", ""),
			},
			book:    intact(refusal(1, fp("refusal-2"))),
			want:    findings{MissingDenials: []string{"d1"}},
			summary: "compare: FAIL 0 calls, 0 match, 1 denial missing; copy ok; book intact",
		},
		{
			name: "a denial the book could not take fails; one over the hourly cap does not",
			lines: func() []Line {
				capped, failed := denialLine("d-cap", "", ""), denialLine("d-fail", "", "")
				capped.Unwritten = UnwrittenCap
				failed.Unwritten = "the book could not take the denial: read-only file system"
				return []Line{capped, failed}
			}(),
			book:    intact(),
			want:    findings{},
			summary: "compare: FAIL 0 calls, 0 match, 1 denial not written; copy ok; book intact",
		},
		{
			name: "refusals folded past the hourly cap do not fail; a denial the book could not take still does",
			lines: func() []Line {
				failed := denialLine("d-fail", "", "")
				failed.Unwritten = "the book could not take the denial: read-only file system"
				return []Line{{Kind: KindDenialsFolded, When: at, Count: 7}, failed}
			}(),
			book:    intact(),
			want:    findings{},
			summary: "compare: FAIL 0 calls, 0 match, 1 denial not written; copy ok; book intact",
		},
		{
			name: "receipts and denials without rules under a slip that states rules",
			lines: []Line{
				sentLine("c1"), receiptLine("c1", s1),
				sentLine("c2"), receiptLine("c2", s2),
				denialLine("d1", fp("refusal-1"), ""),
				denialLine("d2", fp("refusal-2"), fp("rules")),
			},
			book: intact(
				underRules(stub(2, "c1", s1, false)),
				underRules(stub(3, "c2", s2, true)),
				underRules(refusal(4, fp("refusal-1"))),
				underRules(refusal(5, fp("refusal-2"))),
			),
			want:    findings{Matches: []string{"c1", "c2"}, WithoutRules: []string{"stub:c1", "refusal:d1"}},
			ok:      true,
			summary: "compare: OK 2 calls, 2 match, 2 without rules; copy ok; book intact",
		},
		{
			name:    "a book with problems fails however well it agrees",
			lines:   []Line{sentLine("c1"), receiptLine("c1", s1)},
			book:    BookView{Intact: true, Problems: 2, Entries: []BookEntry{stub(2, "c1", s1, false)}},
			want:    findings{Matches: []string{"c1"}},
			summary: "compare: FAIL 1 call, 1 match; copy ok; book has 2 problems",
		},
		{
			name:    "a book that is not intact fails",
			lines:   []Line{sentLine("c1"), receiptLine("c1", s1)},
			book:    BookView{Intact: false, Problems: 1, Entries: []BookEntry{stub(2, "c1", s1, false)}},
			want:    findings{Matches: []string{"c1"}},
			summary: "compare: FAIL 1 call, 1 match; copy ok; book not intact, 1 problem",
		},
		{
			name:    "another service id",
			lines:   []Line{sentLine("c1"), receiptLine("c1", s1)},
			book:    BookView{Service: "files", Intact: true, Entries: []BookEntry{func() BookEntry { e := stub(2, "c1", s1, false); e.With = "files"; return e }()}},
			want:    findings{Matches: []string{"c1"}},
			ok:      true,
			summary: "compare: OK 1 call, 1 match; copy ok; book intact",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare(tc.lines, tc.book)
			if got := findingsOf(r); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("findings\n got %+v\nwant %+v", got, tc.want)
			}
			if r.OK() != tc.ok {
				t.Errorf("OK() = %v, want %v", r.OK(), tc.ok)
			}
			if got := r.Summary(); got != tc.summary {
				t.Errorf("summary\n got %q\nwant %q", got, tc.summary)
			}
		})
	}
}

func TestCompareCopyUnreadable(t *testing.T) {
	_, err := Verify([]byte("{}\n"), testKey, testName)
	r := CopyUnreadable(err, intact())
	if r.OK() {
		t.Error("an unreadable copy compared OK")
	}
	want := "compare: FAIL 0 calls, 0 match; copy unreadable; book intact"
	if r.Summary() != want {
		t.Errorf("summary %q, want %q", r.Summary(), want)
	}
	var b bytes.Buffer
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if want := want + "\ncopy: copy line 1: the line has no tag\n"; b.String() != want {
		t.Errorf("text %q, want %q", b.String(), want)
	}
	if !errors.Is(err, ErrTampered) {
		t.Errorf("%v is not ErrTampered", err)
	}
}

// TestCompareRendering pins the human and the JSON report of one copy and
// book that disagree in every way, in testdata/compare.txt and
// testdata/compare.json.
func TestCompareRendering(t *testing.T) {
	path := tempCopy(t)
	l := mustOpen(t, path)
	err := l.Append(
		Line{Kind: KindStart, When: at},
		sentLine("c-match"), receiptLine("c-match", fp("stub-match")),
		sentLine("c-late"), lateReceiptLine("c-late", fp("stub-late")),
		sentLine("c-differs"), receiptLine("c-differs", fp("stub-copy")),
		sentLine("c-missing"), receiptLine("c-missing", fp("stub-missing")),
		sentLine("c-notwritten"), notWrittenLine("c-notwritten"),
		sentLine("c-stopped"),
		denialLine("d-missing", fp("refusal-missing"), ""),
		denialLine("d-capped", "", ""),
		denialLine("d-norules", fp("refusal-norules"), ""),
	)
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	lines, err := ReadFile(path, testKey, testName)
	if err != nil {
		t.Fatal(err)
	}
	book := BookView{Intact: true, Problems: 1, Entries: []BookEntry{
		stub(2, "c-match", fp("stub-match"), true),
		stub(3, "c-late", fp("stub-late"), true),
		stub(4, "c-differs", fp("stub-book"), true),
		stub(5, "c-unknown", fp("stub-unknown"), true),
		underRules(stub(6, "c-stopped", fp("stub-stopped"), false)),
		underRules(refusal(7, fp("refusal-norules"))),
	}}
	r := Compare(lines, book)
	var text bytes.Buffer
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	js, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	js = append(js, '\n')
	var back map[string]any
	if err := json.Unmarshal(js, &back); err != nil || back["ok"] != false {
		t.Errorf("JSON does not read back with ok false: %v %v", err, back["ok"])
	}
	for name, got := range map[string][]byte{"compare.txt": text.Bytes(), "compare.json": js} {
		golden := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(golden, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("reading %s (run with -update to write it): %v", golden, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs:\ngot:\n%s\nwant:\n%s", golden, got, want)
		}
	}
}

// A denials-folded line's count is read into the report: as denials, and as denials with no refusal
// by the hourly cap.
func TestCompareReadsFoldedCount(t *testing.T) {
	r := Compare([]Line{denialLine("d1", fp("refusal-1"), ""), {Kind: KindDenialsFolded, When: at, Count: 7}},
		intact(refusal(1, fp("refusal-1"))))
	if r.Denials != 8 || r.DenialsUnwritten != 7 || !r.OK() {
		t.Fatalf("denials %d, unwritten %d, ok %v; want 8, 7, true", r.Denials, r.DenialsUnwritten, r.OK())
	}
}
