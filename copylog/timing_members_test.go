package copylog

import (
	"bytes"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// The time of sending (sentMs) and the time with the server (serverMs)
// read back as written, at their edges too (0, a sub-millisecond time,
// the largest), and the verified text is the encoder's byte for byte; a
// line without them is the line written before they were kept.
func TestTimingMembersRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	durations := []time.Duration{0, 400 * time.Microsecond, time.Millisecond, 7 * time.Millisecond, MaxServerMs * time.Millisecond}
	sents := []time.Time{time.UnixMilli(0).UTC(), at, at.Add(999 * time.Millisecond), time.UnixMilli(1 << 52).UTC()}
	for range 200 {
		durations = append(durations, time.Duration(r.Int64N(MaxServerMs))*time.Millisecond)
		sents = append(sents, time.UnixMilli(r.Int64N(1<<53)).UTC())
	}
	for i := range durations {
		d := durations[i]
		sent := sentAtLine("c", at, sents[i%len(sents)])
		rec := Line{Kind: KindReceipt, When: at, Call: "c", Stub: fp("s"), Outcome: &record.Detail{Name: receipt.LabelToolResult, SHA256: fp("r")}, Server: &d}
		data := encodeLines(t, testKey, testName, sent, rec)
		got, err := Verify(data, testKey, testName)
		if err != nil {
			t.Fatalf("%v, %v: %v", sent.SentAt, d, err)
		}
		want := d.Truncate(time.Millisecond)
		if !got[0].SentAt.Equal(sent.SentAt) || got[1].Server == nil || *got[1].Server != want {
			t.Fatalf("read back sentAt %v server %v; wrote %v, %v", got[0].SentAt, got[1].Server, sent.SentAt, d)
		}
		if again := encodeLines(t, testKey, testName, got...); !bytes.Equal(again, data) {
			t.Fatalf("not the encoder's text:\n%s\n%s", data, again)
		}
	}
	// Without them: the lines of an older copy.
	old := encodeLines(t, testKey, testName, sentLine("c"), receiptLine("c", fp("s")))
	got, err := Verify(old, testKey, testName)
	if err != nil || !got[0].SentAt.IsZero() || got[1].Server != nil || bytes.Contains(old, []byte("sentMs")) || bytes.Contains(old, []byte("serverMs")) {
		t.Fatalf("an older copy's lines: %+v %v", got, err)
	}
	if !reflect.DeepEqual(got[0].Details, sentLine("c").Details) {
		t.Errorf("details %+v", got[0].Details)
	}
}
