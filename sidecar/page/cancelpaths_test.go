package page

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// TestCancellationPaths: the page writes a cancellation beside the copy
// (the executor's own writable state), and both the page and the executor
// look there first and then beside the slip; one place when both are the
// same folder.
func TestCancellationPaths(t *testing.T) {
	for _, tc := range []struct {
		name       string
		slip, copy string
		want       []string
	}{
		{"a pod: the slip on the settings' read-only mount, the copy on the executor's volume",
			"/etc/mcp-executor/slip.json", "/var/lib/mcp-executor/copy.jsonl",
			[]string{"/var/lib/mcp-executor/slip.cancellation.json", "/etc/mcp-executor/slip.cancellation.json"}},
		{"one folder for both", "/work/slip.json", "/work/copy.jsonl", []string{"/work/slip.cancellation.json"}},
		{"a slip not named .json", "/etc/x/permission", "/var/lib/x/copy.jsonl",
			[]string{"/var/lib/x/permission.cancellation.json", "/etc/x/permission.cancellation.json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := &settings.Settings{}
			set.Agent.Slip, set.Executor.Copy = tc.slip, tc.copy
			if got := CancellationPaths(set); !slices.Equal(got, tc.want) {
				t.Fatalf("CancellationPaths = %q, want %q", got, tc.want)
			}
			if got := StateCancellationPath(set); got != tc.want[0] {
				t.Fatalf("StateCancellationPath = %q, want %q", got, tc.want[0])
			}
		})
	}
}

// TestFirstCancellation: the first place holding a cancellation that
// checks wins; a place whose file does not check is passed over for a
// later one that does; with none there the answer is os.ErrNotExist, and
// with only a bad one its error.
func TestFirstCancellation(t *testing.T) {
	s, good := hostileSlip(t)
	state, beside := filepath.Join(t.TempDir(), "slip.cancellation.json"), filepath.Join(t.TempDir(), "slip.cancellation.json")
	paths := []string{state, beside}
	if _, _, err := FirstCancellation(paths, s); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("no file anywhere: %v, want os.ErrNotExist", err)
	}
	if err := os.WriteFile(state, []byte(`{"payload":"x","signatures":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := FirstCancellation(paths, s); err == nil || errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), state) {
		t.Fatalf("only a bad file: %v, want its error naming %s", err, state)
	}
	if err := os.WriteFile(beside, good, 0o600); err != nil {
		t.Fatal(err)
	}
	c, at, err := FirstCancellation(paths, s)
	if err != nil || at != beside || c.Slip != s.Fingerprint {
		t.Fatalf("a bad file first, a good one beside the slip: %v at %q (%v)", c, at, err)
	}
	if err := os.WriteFile(state, good, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, at, err := FirstCancellation(paths, s); err != nil || at != state {
		t.Fatalf("good files in both places: at %q (%v), want the state's", at, err)
	}
}

// TestWatchCancellationsHonoursOnce: a cancellation written at either
// place is honoured, once, even when it then appears at the other too, and
// the watch ends.
func TestWatchCancellationsHonoursOnce(t *testing.T) {
	s, good := hostileSlip(t)
	for _, at := range []int{0, 1} {
		paths := []string{filepath.Join(t.TempDir(), "slip.cancellation.json"), filepath.Join(t.TempDir(), "slip.cancellation.json")}
		honoured := make(chan *slip.Cancellation, 2)
		ended := make(chan struct{})
		go func() {
			defer close(ended)
			WatchCancellations(context.Background(), paths, s, 5*time.Millisecond, nil, func(c *slip.Cancellation) { honoured <- c })
		}()
		if err := os.WriteFile(paths[at], good, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(paths[1-at], good, 0o600); err != nil {
			t.Fatal(err)
		}
		select {
		case c := <-honoured:
			if c.Slip != s.Fingerprint {
				t.Fatalf("honoured a cancellation of %s", c.Slip)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("a cancellation at place %d was not honoured", at)
		}
		<-ended
		if len(honoured) != 0 {
			t.Fatalf("place %d: honoured twice", at)
		}
	}
}

// TestWatchCancellationsEndsWithContext: with nothing written, the watch
// ends when its context does.
func TestWatchCancellationsEndsWithContext(t *testing.T) {
	s, _ := hostileSlip(t)
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		WatchCancellations(ctx, []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}, s, 5*time.Millisecond, nil,
			func(*slip.Cancellation) { t.Error("honoured a cancellation no one wrote") })
	}()
	cancel()
	<-ended
}
