package copylog

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
)

// randomCase makes a copy and a book from a few calls, stubs, refusals
// and slips, in any order, so that calls are sent twice, receipts come
// before sent lines or twice, stubs repeat or name unknown calls, slips
// come after the stubs that name them, and approvals are used or not.
func randomCase(r *rand.Rand) (lines []Line, slipsFirst []BookEntry, entries []BookEntry) {
	calls := []string{"c0", "c1", "c2", "c3", "c4"}
	stubs := []string{fp("s0"), fp("s1"), fp("s2"), ""}
	refusals := []string{fp("r0"), fp("r1"), ""}
	slips := []string{fp("slipA"), fp("slipB"), fp("slipC")}
	pick := func(list []string) string { return list[r.IntN(len(list))] }
	answers := approvalLines()[1:2]
	declined := answers[0]
	declined.Answer = AnswerDeclined
	answers = append(answers, declined)
	var answerFPs []string
	for _, a := range answers {
		f, _ := AnswerFingerprint(a)
		answerFPs = append(answerFPs, f)
	}
	answerFPs = append(answerFPs, fp("no answer"))
	for range r.IntN(20) {
		call := pick(calls)
		switch r.IntN(9) {
		case 0, 1:
			ln := sentLine(call)
			ln.When = at.Add(time.Duration(r.IntN(100)) * time.Second)
			lines = append(lines, ln)
		case 2, 3:
			lines = append(lines, receiptLine(call, pick(stubs)))
		case 4:
			lines = append(lines, lateReceiptLine(call, pick(stubs)))
		case 5:
			ln := notWrittenLine(call)
			ln.Reason = pick([]string{"full", "changed"})
			lines = append(lines, ln)
		case 6:
			d := denialLine(call, pick(refusals), pick([]string{"", fp("rules")}))
			d.Slip, d.Unwritten = pick(slips), pick([]string{"", UnwrittenCap, "the book is full"})
			lines = append(lines, d)
		case 7:
			lines = append(lines, answers[r.IntN(len(answers))])
		case 8:
			u := approvalLines()[3]
			u.Call, u.Approval = call, pick(answerFPs)
			lines = append(lines, u)
		}
	}
	if r.IntN(4) == 0 {
		lines = append(lines, Line{Kind: KindDenialsFolded, When: at, Count: int64(r.IntN(5))})
	}
	states := map[string]bool{}
	for _, s := range slips {
		states[s] = r.IntN(2) == 0
	}
	line := 0
	for range r.IntN(14) {
		line++
		switch r.IntN(6) {
		case 0:
			s := pick(slips)
			slipsFirst = append(slipsFirst, BookEntry{Line: line, Kind: EntrySlip, Fingerprint: s, SlipStatesRules: states[s]})
		case 1:
			entries = append(entries, BookEntry{Line: line, Kind: EntryRefusal, Fingerprint: pick(refusals[:2]), Slip: pick(slips)})
		default:
			details := map[string]string{receipt.LabelCall: fp(pick(append(calls, "unknown")))}
			if r.IntN(3) == 0 {
				details[receipt.LabelRules] = fp("rules")
			}
			if r.IntN(3) == 0 {
				details[receipt.LabelApproval] = pick(answerFPs)
			}
			if r.IntN(8) == 0 {
				delete(details, receipt.LabelCall)
			}
			with := DefaultService
			if r.IntN(8) == 0 {
				with = "someone else"
			}
			entries = append(entries, BookEntry{Line: line, Kind: EntryStub, Fingerprint: pick(stubs[:3]), With: with, Details: details, Slip: pick(slips)})
		}
	}
	// Through Each the slips stand among the entries, where they fell; the
	// reference's view says of every entry whether its slip states rules.
	inBook := map[string]bool{}
	for _, s := range slipsFirst {
		inBook[s.Fingerprint] = true
	}
	for i := range entries {
		entries[i].SlipStatesRules = states[entries[i].Slip] && inBook[entries[i].Slip]
	}
	return lines, slipsFirst, entries
}

// streamView is the view CompareLines reads through Each: the slips and
// the entries by line, the entries without SlipStatesRules.
func streamView(slips, entries []BookEntry) BookView {
	all := append([]BookEntry(nil), slips...)
	for _, e := range entries {
		e.SlipStatesRules = false
		all = append(all, e)
	}
	sortByLine(all)
	return BookView{Intact: true, Each: func(fn func(BookEntry) error) error {
		for _, e := range all {
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	}}
}

func sortByLine(list []BookEntry) {
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && list[j].Line < list[j-1].Line; j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
}

// TestCompareLinesAgreesWithReference holds the flat compare against the
// compare it replaced (reference_test.go) on many random copies and books:
// the same report, approval problems and rules counts, whether the book
// comes as a list (with SlipStatesRules) or entry by entry with its slips.
func TestCompareLinesAgreesWithReference(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 15))
	for i := range 20000 {
		lines, slips, entries := randomCase(r)
		ref := newRefSide()
		for _, ln := range lines {
			ref.Add(ln)
		}
		view := BookView{Intact: true, Entries: entries}
		want, wantApprovals := ref.Compare(view), ref.ApprovalProblems(view)
		want.MatchCount = len(want.Matches)
		for _, v := range []struct {
			name string
			view BookView
		}{{"list", view}, {"each", streamView(slips, entries)}} {
			got, err := CompareLines(SliceLines(lines), v.view, CompareOptions{ListMatches: true})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Report, want) || !reflect.DeepEqual(got.Approvals, wantApprovals) || !reflect.DeepEqual(got.DenialRules, ref.DenialRules()) {
				t.Fatalf("case %d (%s) differs:\nlines %+v\nslips %+v\nentries %+v\ngot  %+v %q %v\nwant %+v %q %v", i, v.name, lines, slips, entries,
					got.Report, got.Approvals, got.DenialRules, want, wantApprovals, ref.DenialRules())
			}
			// Without the list of matches only Matches differs.
			counted, err := CompareLines(SliceLines(lines), v.view, CompareOptions{})
			if err != nil {
				t.Fatal(err)
			}
			listed := got.Report
			listed.Matches = []Match{}
			if !reflect.DeepEqual(counted.Report, listed) || counted.Report.Summary() != want.Summary() {
				t.Fatalf("case %d (%s): without ListMatches:\n%+v\nwant\n%+v", i, v.name, counted.Report, listed)
			}
		}
	}
}

// TestFileLinesReadsWhatTheFirstPassRead: lines appended between two
// readings are not seen by the later one; a copy changed between them
// fails.
func TestFileLinesReadsWhatTheFirstPassRead(t *testing.T) {
	path := tempCopy(t)
	first := encodeLines(t, testKey, testName, sentLine("c1"), receiptLine("c1", fp("s1")))
	if err := os.WriteFile(path, first, 0o600); err != nil {
		t.Fatal(err)
	}
	lines := FileLines(path, testKey, testName)
	count := func() (int, error) {
		n := 0
		err := lines(func(Line) error { n++; return nil })
		return n, err
	}
	if n, err := count(); n != 2 || err != nil {
		t.Fatalf("first reading: %d lines, %v", n, err)
	}
	more := encodeLines(t, testKey, testName, sentLine("c1"), receiptLine("c1", fp("s1")), sentLine("c2"))
	if err := os.WriteFile(path, more, 0o600); err != nil {
		t.Fatal(err)
	}
	if n, err := count(); n != 2 || err != nil {
		t.Fatalf("after an append: %d lines, %v; want the 2 of the first reading", n, err)
	}
	changed := bytes.Replace(first, []byte(`"c1"`), []byte(`"c9"`), 1)
	if err := os.WriteFile(path, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := count(); !errors.Is(err, ErrTampered) {
		t.Fatalf("after a change: %v, want ErrTampered", err)
	}
	if err := os.WriteFile(path, first[:len(first)-10], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := count(); err == nil || !strings.Contains(err.Error(), "changed while compare read it") && !errors.Is(err, ErrCutLine) {
		t.Fatalf("after a cut: %v", err)
	}
}

// TestCompareLinesCopyChangedBetweenReadings: a copy that changes between
// compare's first reading and the reading for the texts of its findings
// gives the report of a copy that does not verify.
func TestCompareLinesCopyChangedBetweenReadings(t *testing.T) {
	path := tempCopy(t)
	data := encodeLines(t, testKey, testName, sentLine("c1"), receiptLine("c1", fp("s1")))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	book := BookView{Intact: true, Each: func(fn func(BookEntry) error) error {
		// The book pass comes between the readings of the copy.
		if err := os.WriteFile(path, bytes.Replace(data, []byte(`"c1"`), []byte(`"c7"`), 1), 0o600); err != nil {
			return err
		}
		return nil
	}}
	c, err := CompareLines(FileLines(path, testKey, testName), book, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Report.CopyError == "" || c.Report.OK() {
		t.Fatalf("report %+v: want the copy unreadable", c.Report)
	}
}

// TestCompareLinesBookError: an error reading the book is compare's error.
func TestCompareLinesBookError(t *testing.T) {
	boom := fmt.Errorf("reading book: disk gone")
	_, err := CompareLines(SliceLines([]Line{sentLine("c1")}), BookView{Each: func(func(BookEntry) error) error { return boom }}, CompareOptions{})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want %v", err, boom)
	}
}
