package page

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
)

func TestChannelLeavesPlainRequestsAlone(t *testing.T) {
	dir := t.TempDir()
	ch := NewChannel(dir, func() *slip.Slip { return nil }, time.Millisecond, nil)
	if err := ch.Ask(context.Background(), &approval.Request{ID: canon.NewID()}, func(approval.Answer) { t.Error("answered") }); err != nil {
		t.Fatal(err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("a request without a prepared approval left files: %v", names)
	}
}

func TestPreparedFilesGoWhenTheRequestEnds(t *testing.T) {
	f := newFixture(t)
	c := f.client()
	f.registerAndSign(c, newSoftPasskey(t, f.origin, "localhost"))
	ctx, cancel := context.WithCancel(context.Background())
	h, _ := f.hold(ctx, "call-1", 10, `{}`)
	cancel() // the call's client went away: the request stays open until it expires
	<-h.result
	id := waitingID(t, c)
	f.hub.Close() // the executor stops: a restored request could not be signed, so the files go
	f.waitFor(func() bool {
		_, err := os.Stat(filepath.Join(f.queue, PreparedName(id)))
		return os.IsNotExist(err)
	}, "the prepared file to be removed")
}

func TestPreparedFileMustShowWhatIsSigned(t *testing.T) {
	f := newFixture(t)
	c, _ := f.signedIn()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, _ := f.hold(ctx, "call-1", 150, `{"item":"paper"}`)
	id := waitingID(t, c)
	path := filepath.Join(f.queue, PreparedName(id))
	var p Prepared
	if err := readStrict(path, &p); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Check(); err != nil {
		t.Fatalf("the executor's own file: %v", err)
	}
	edits := map[string]func(*Prepared){
		"a smaller amount shown":  func(q *Prepared) { q.Amount.Value = 15 },
		"another tool shown":      func(q *Prepared) { q.Tool = "list" },
		"other arguments shown":   func(q *Prepared) { q.ArgumentsSHA256 = canon.Fingerprint([]byte("x")) },
		"another action shown":    func(q *Prepared) { q.Action = "supplies.list" },
		"a challenge not its own": func(q *Prepared) { q.Challenge = canon.B64(make([]byte, 32)) },
	}
	for name, edit := range edits {
		q := p
		am := *p.Amount
		q.Amount = &am
		edit(&q)
		if _, err := q.Check(); err == nil {
			t.Errorf("%s: taken", name)
		}
		data, _ := json.Marshal(q)
		if err := approval.WriteFileAtomic(f.queue, PreparedName(id), data); err != nil {
			t.Fatal(err)
		}
		if code, out := c.post("/api/approval/prepare", map[string]any{"request": id, "decision": "approve"}); code != 409 {
			t.Errorf("%s: the page prepared it: %d %v", name, code, out)
		}
	}
	cancel()
	<-h.result
}

func TestWatchCancellation(t *testing.T) {
	f := newFixture(t)
	c, pk := f.signedIn()
	s := f.currentSlip()
	path := CancellationPath(f.slip)
	if !strings.HasSuffix(path, "slip.cancellation.json") {
		t.Fatalf("path %s", path)
	}
	honoured := make(chan *slip.Cancellation, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go WatchCancellation(ctx, path, s, 5*time.Millisecond, nil, func(c *slip.Cancellation) { honoured <- c })

	// A cancellation signed by another passkey is not honoured; the
	// person's, signed on the page, is.
	stranger := newSoftPasskey(t, f.origin, "localhost")
	prep, err := consent.PrepareCancellation(s.Fingerprint, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	as, _ := stranger.assert(prep.Challenge).Decode()
	v, _ := slip.Assemble(prep, as)
	if err := os.WriteFile(path, canon.MustMarshal(v), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCancellation(path, s); err == nil || !strings.Contains(err.Error(), "cancellation-invalid") {
		t.Fatalf("a stranger's cancellation: %v", err)
	}
	os.Remove(path)
	ch := c.must("/api/cancel/prepare", map[string]any{})
	c.must("/api/sign", map[string]any{"token": ch["token"], "assertion": pk.assert(challengeOf(t, ch))})
	select {
	case got := <-honoured:
		if got.Slip != s.Fingerprint || got.Record.Fingerprint != ch["fingerprint"] {
			t.Fatalf("honoured %+v", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the cancellation was not honoured within 20 s")
	}
}
