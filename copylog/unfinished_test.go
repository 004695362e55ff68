package copylog

import (
	"reflect"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// The line-by-line count of unfinished calls Open keeps equals
// UnfinishedCalls over the whole copy, in the orders lines can come in.
func TestUnfinishedAccIsUnfinishedCalls(t *testing.T) {
	out := &record.Detail{Name: "provared.tool.result", SHA256: "x"}
	sent := func(c string) Line { return Line{Kind: KindSent, Call: c} }
	for name, lines := range map[string][]Line{
		"none":                      nil,
		"sent, no receipt":          {sent("a"), sent("b"), {Kind: KindReceipt, Call: "a"}},
		"receipt before sent":       {{Kind: KindReceipt, Call: "a"}, sent("a"), sent("b")},
		"sent twice":                {sent("a"), sent("b"), sent("a")},
		"sent again after receipt":  {sent("a"), {Kind: KindReceipt, Call: "a"}, sent("a")},
		"not written after sent":    {sent("a"), {Kind: KindNotWritten, Call: "a", Outcome: out, Reason: "disk"}},
		"not written before sent":   {{Kind: KindNotWritten, Call: "a", Outcome: out, Reason: "disk"}, sent("a")},
		"not written then late":     {sent("a"), {Kind: KindNotWritten, Call: "a", Outcome: out}, {Kind: KindLateReceipt, Call: "a"}},
		"order kept with receipts":  {sent("c"), sent("a"), sent("b"), {Kind: KindReceipt, Call: "a"}},
		"two not-written, last one": {sent("a"), {Kind: KindNotWritten, Call: "a", Outcome: out, Reason: "1"}, {Kind: KindNotWritten, Call: "a", Outcome: out, Reason: "2"}},
	} {
		var acc unfinishedAcc
		for _, ln := range lines {
			acc.add(ln)
		}
		if got, want := acc.list(), UnfinishedCalls(lines); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
}
