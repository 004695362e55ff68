package copylog

import (
	"reflect"
	"testing"

	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// UnfinishedCalls (the line-by-line count Open and ReadUnfinished keep)
// lists the calls sent without a receipt, once each, in the order sent,
// with the last not-written line's outcome, in the orders lines can come in.
func TestUnfinishedAccIsUnfinishedCalls(t *testing.T) {
	out := &record.Detail{Name: "provared.tool.result", SHA256: "x"}
	sent := func(c string) Line { return Line{Kind: KindSent, Call: c} }
	open := func(c string) Unfinished { return Unfinished{Sent: sent(c)} }
	failed := func(c, reason string) Unfinished {
		o := *out
		return Unfinished{Sent: sent(c), Outcome: &o, Reason: reason}
	}
	for name, tc := range map[string]struct {
		lines []Line
		want  []Unfinished
	}{
		"none":                      {nil, nil},
		"sent, no receipt":          {[]Line{sent("a"), sent("b"), {Kind: KindReceipt, Call: "a"}}, []Unfinished{open("b")}},
		"receipt before sent":       {[]Line{{Kind: KindReceipt, Call: "a"}, sent("a"), sent("b")}, []Unfinished{open("b")}},
		"sent twice":                {[]Line{sent("a"), sent("b"), sent("a")}, []Unfinished{open("a"), open("b")}},
		"sent again after receipt":  {[]Line{sent("a"), {Kind: KindReceipt, Call: "a"}, sent("a")}, nil},
		"not written after sent":    {[]Line{sent("a"), {Kind: KindNotWritten, Call: "a", Outcome: out, Reason: "disk"}}, []Unfinished{failed("a", "disk")}},
		"not written before sent":   {[]Line{{Kind: KindNotWritten, Call: "a", Outcome: out, Reason: "disk"}, sent("a")}, []Unfinished{failed("a", "disk")}},
		"not written then late":     {[]Line{sent("a"), {Kind: KindNotWritten, Call: "a", Outcome: out}, {Kind: KindLateReceipt, Call: "a"}}, nil},
		"order kept with receipts":  {[]Line{sent("c"), sent("a"), sent("b"), {Kind: KindReceipt, Call: "a"}}, []Unfinished{open("c"), open("b")}},
		"two not-written, last one": {[]Line{sent("a"), {Kind: KindNotWritten, Call: "a", Outcome: out, Reason: "1"}, {Kind: KindNotWritten, Call: "a", Outcome: out, Reason: "2"}}, []Unfinished{failed("a", "2")}},
	} {
		if got := UnfinishedCalls(tc.lines); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", name, got, tc.want)
		}
	}
}
