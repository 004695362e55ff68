//go:build unix

package page

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/consent"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
)

// hostileSlip is a slip issued by a development passkey, and a
// cancellation of it that passkey signed.
func hostileSlip(t testing.TB) (*slip.Slip, []byte) {
	d, err := passkey.NewDevPasskey("http://localhost:8443", "localhost")
	if err != nil {
		t.Fatal(err)
	}
	s, err := slip.WriteSlip(map[string]any{
		"issuer": d.Issuer("Sam"), "agent": map[string]any{"keys": testKeys(t).Value(), "name": "a"},
		"actions": []any{"supplies.order"}, "limits": []any{}, "with": []any{},
		"validFrom": "2026-01-01T00:00:00Z", "validUntil": "2027-01-01T00:00:00Z", "purpose": "p",
	}, d)
	if err != nil {
		t.Fatal(err)
	}
	prep, err := consent.PrepareCancellation(s.Fingerprint, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	a, err := d.Assert(prep.Challenge)
	if err != nil {
		t.Fatal(err)
	}
	v, err := slip.Assemble(prep, a)
	if err != nil {
		t.Fatal(err)
	}
	return s, canon.MustMarshal(v)
}

// TestCancellationFIFODoesNotStopTheWatch: a FIFO put where the
// cancellation file is awaited is refused at once (an open without
// O_NONBLOCK would wait for a writer for good), and the person's
// cancellation written over it later is honoured.
func TestCancellationFIFODoesNotStopTheWatch(t *testing.T) {
	s, good := hostileSlip(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "slip.cancellation.json")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadCancellation(path, s); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a FIFO: %v", err)
	}
	honoured := make(chan *slip.Cancellation, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go WatchCancellation(ctx, path, s, 5*time.Millisecond, nil, func(c *slip.Cancellation) { honoured <- c })
	tmp := filepath.Join(dir, ".new")
	if err := os.WriteFile(tmp, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-honoured:
		if c.Slip != s.Fingerprint {
			t.Fatalf("honoured %+v", c)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the cancellation written over the FIFO was not honoured within 20 s")
	}
}

// TestCancellationReadersDisagree: a cancellation that another JSON reader
// would read differently (a member twice, last one wins in encoding/json;
// a BOM; a trailing NUL; an oversized file) is refused.
func TestCancellationReadersDisagree(t *testing.T) {
	s, good := hostileSlip(t)
	if _, err := ReadCancellation(writeTemp(t, good), s); err != nil {
		t.Fatalf("the good cancellation: %v", err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(good, &m); err != nil {
		t.Fatal(err)
	}
	dupe := strings.Replace(string(good), `{`, `{"signatures":[],`, 1)
	folded := strings.Replace(string(good), `{`, `{"PAYLOAD":"x",`, 1)
	for name, text := range map[string]string{
		"member twice":       dupe,
		"member case-folded": folded,
		"bom":                "\uFEFF" + string(good),
		"trailing nul":       string(good) + "\x00",
		"two values":         string(good) + string(good),
		"oversized":          string(good) + strings.Repeat(" ", MaxFileSize),
	} {
		if _, err := ReadCancellation(writeTemp(t, []byte(text)), s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestSignedFileNamesExactly: encoding/json matches member names without
// regard to case and keeps the last of two; the signed and prepared files
// are refused when another reader could see another answer in them.
func TestSignedFileNamesExactly(t *testing.T) {
	id := canon.NewID()
	for name, text := range map[string]string{
		"upper case":               `{"Request":"` + id + `","approval":{}}`,
		"twice":                    `{"request":"` + id + `","request":"` + canon.NewID() + `","approval":{}}`,
		"nested case":              `{"request":"` + id + `","declined":{"AuthenticatorData":"","clientDataJSON":"","signature":""}}`,
		"folded twice in approval": `{"request":"` + id + `","approval":{"payload":"a","Payload":"b"}}`,
	} {
		var sf Signed
		if err := decodeStrict([]byte(text), &sf); err == nil {
			t.Errorf("%s: accepted as %+v", name, sf)
		}
	}
	var sf Signed
	if err := decodeStrict([]byte(`{"request":"`+id+`","declined":{"authenticatorData":"","clientDataJSON":"","signature":""}}`), &sf); err != nil {
		t.Fatalf("the exact names: %v", err)
	}
}

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "slip.cancellation.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// FuzzCancellationFile feeds any bytes to the reader of the cancellation
// file beside the slip: never a panic, and never a cancellation of another
// slip or one the issuer's passkey did not sign.
func FuzzCancellationFile(f *testing.F) {
	s, good := hostileSlip(f)
	f.Add(good)
	f.Add([]byte(`{}`))
	f.Add([]byte(strings.Replace(string(good), `{`, `{"signatures":[],`, 1)))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "slip.cancellation.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := ReadCancellation(path, s)
		if err != nil {
			return
		}
		if c.Slip != s.Fingerprint || c.Record == nil {
			t.Fatalf("accepted %+v", c)
		}
	})
}
