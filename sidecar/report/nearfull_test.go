package report

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/book"
)

// TestCheckWarnsFromNinetyPercent: check warns from 90% of the format's
// 100,000 entries (book.NearFull), saying how many the book holds, from
// when the executor refuses new calls and what to do, and a warning alone
// leaves check OK (exit 0); below 90% it does not warn. The book is a real
// one of three entries whose checked size is then set: a real book of
// 90,000 entries takes minutes to sign and to check (ML-DSA-87 on every
// stub and countersignature), which the memory benchmarks do instead.
func TestCheckWarnsFromNinetyPercent(t *testing.T) {
	e, _ := inspectBook(t, "", "a", "b")
	for _, c := range []struct {
		size int
		warn bool
	}{{book.NearFull - 1, false}, {book.NearFull, true}, {book.MaxEntries - book.FullReserve, true}} {
		t.Run(fmt.Sprint(c.size), func(t *testing.T) {
			verifyBookFile = func(path string, trust []string, fn func(book.FileEntry) error) (*book.Report, error) {
				rep, err := book.VerifyFileEntries(path, trust, fn)
				if err == nil {
					if rep.Size != 3 || len(rep.Problems) != 0 {
						t.Fatalf("the real book: %d entries, problems %v", rep.Size, rep.Problems)
					}
					rep.Size = c.size
				}
				return rep, err
			}
			t.Cleanup(func() { verifyBookFile = book.VerifyFileEntries })
			rep := CheckSetup(context.Background(), CheckOptions{ConfigPath: e.SettingsPath})
			var warnings []SetupItem
			for _, it := range rep.Items {
				if it.What == "book" && it.Level == LevelWarning {
					warnings = append(warnings, it)
				}
			}
			if !rep.OK() {
				t.Fatalf("check not OK (exit 1): %+v", rep.Items)
			}
			if !c.warn {
				if len(warnings) != 0 {
					t.Fatalf("warned below 90%%: %+v", warnings)
				}
				return
			}
			want := fmt.Sprintf("%d of the 100000 entries a book may hold: from 99000 the executor refuses new calls (1001) so that the stubs of calls in flight can still be written", c.size)
			if len(warnings) != 1 || warnings[0].Message != want || !strings.Contains(warnings[0].Fix, "start a new book") {
				t.Fatalf("warnings %+v\nwant one saying %q", warnings, want)
			}
		})
	}
}
