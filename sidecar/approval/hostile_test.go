//go:build unix

package approval

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestQueueAnswerFileKinds: an answer is read only from a regular file with
// one link, written in the queue itself. A symbolic link would name the
// owner of its target as the answerer; a hard link brings in a file written
// elsewhere; a FIFO would block the watch in open or read for good.
func TestQueueAnswerFileKinds(t *testing.T) {
	dir, q, r, want, data := approvedAnswer(t)
	elsewhere := filepath.Join(dir, "elsewhere.json")
	if err := os.WriteFile(elsewhere, data, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(q.Dir(), FileName(r.ID))
	for _, c := range []struct {
		name string
		make func() error
		bad  string // "" when the answer is taken
	}{
		{"regular file", func() error { return WriteFileAtomic(q.Dir(), FileName(r.ID), data) }, ""},
		{"symbolic link", func() error { return os.Symlink(elsewhere, path) }, "symbolic link"},
		{"hard link", func() error { return os.Link(elsewhere, path) }, "2 hard links"},
		{"fifo", func() error { return syscall.Mkfifo(path, 0o600) }, "not a regular file"},
		{"folder", func() error { return os.Mkdir(path, 0o700) }, "not a regular file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.RemoveAll(path); err != nil {
				t.Fatal(err)
			}
			if err := c.make(); err != nil {
				t.Fatal(err)
			}
			a, bad, ok := q.read(r, want, path)
			if c.bad == "" {
				if !ok || !a.Approved || a.Channel != ChannelQueue || !strings.HasPrefix(a.Who, "uid ") {
					t.Fatalf("the answer was not taken: %+v %q", a, bad)
				}
				return
			}
			if ok || !strings.Contains(bad, c.bad) {
				t.Fatalf("got answer %v %+v, reason %q; want refused with %q", ok, a, bad, c.bad)
			}
		})
	}
}

// TestQueueAnswerOversized: a file past MaxFileSize is no answer, whatever
// its first megabyte says.
func TestQueueAnswerOversized(t *testing.T) {
	_, q, r, want, data := approvedAnswer(t)
	big := append(append([]byte{}, data...), []byte(strings.Repeat(" ", MaxFileSize))...)
	if err := WriteFileAtomic(q.Dir(), FileName(r.ID), big); err != nil {
		t.Fatal(err)
	}
	if _, bad, ok := q.read(r, want, filepath.Join(q.Dir(), FileName(r.ID))); ok || !strings.Contains(bad, "larger than 1 MiB") {
		t.Fatalf("an oversized file: taken %v, reason %q", ok, bad)
	}
}

// TestParseFileDifferentReaders: bytes another JSON reader would read as
// another answer are refused: a BOM, a trailing NUL, a member named in
// another case (encoding/json would match it), a second object.
func TestParseFileDifferentReaders(t *testing.T) {
	good, _ := FileFor(testRequest()).Encode()
	yes := strings.Replace(string(good), `"approved": null`, `"approved": true`, 1)
	for name, text := range map[string]string{
		"bom":             "\uFEFF" + yes,
		"trailing nul":    yes + "\x00",
		"upper case name": strings.Replace(string(good), `"approved": null`, `"Approved": true`, 1),
		"second value":    string(good) + yes,
		"nul in a name":   strings.Replace(yes, `"approved"`, `"approved\u0000"`, 1),
		"nfd id":          strings.Replace(yes, `"tool": "`, "\"tool\": \"e\u0301", 1),
	} {
		f, err := ParseFile([]byte(text))
		if name == "nfd id" {
			// A tool name in another normalisation is another tool: read,
			// but not bound to the request.
			if err != nil || f.Bound(FileFor(testRequest())) {
				t.Errorf("%s: %v, bound %v", name, err, f.Bound(FileFor(testRequest())))
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted as %+v", name, f)
		}
	}
}

// TestWaitingSkipsFIFO: the approve command's listing and answer do not
// block on a FIFO named like a request file.
func TestWaitingSkipsFIFO(t *testing.T) {
	dir := t.TempDir()
	r := testRequest()
	if err := syscall.Mkfifo(filepath.Join(dir, FileName(r.ID)), 0o600); err != nil {
		t.Fatal(err)
	}
	files, skipped, err := Waiting(dir, r.RequestedAt)
	if err != nil || len(files) != 0 || len(skipped) != 1 {
		t.Fatalf("waiting: %v %v %v", files, skipped, err)
	}
	if _, err := AnswerFile(dir, r.ID, true, r.RequestedAt); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("answer: %v", err)
	}
}

// FuzzQueueAnswer feeds any bytes, as the request's file, to the queue's
// reader of answers: never a panic, and an answer only from a file that
// ParseFile reads as this very request with approved set.
func FuzzQueueAnswer(f *testing.F) {
	r := testRequest()
	want := FileFor(r)
	good, _ := want.Encode()
	f.Add(good)
	f.Add([]byte(strings.Replace(string(good), `"approved": null`, `"approved": true`, 1)))
	f.Add([]byte(strings.Replace(string(good), `"approved": null`, `"approved": false, "answeredWith": "mcp-executor approve"`, 1)))
	f.Add([]byte(strings.Replace(string(good), `"approved": null`, `"approved": true, "answeredWith": "someone"`, 1)))
	dir := f.TempDir()
	q, err := NewQueue(filepath.Join(dir, "q"), 0, nil)
	if err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(q.Dir(), FileName(r.ID))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		a, _, ok := q.read(r, want, path)
		if !ok {
			return
		}
		file, err := ParseFile(data)
		if err != nil || !file.Bound(want) || file.Approved == nil || *file.Approved != a.Approved || a.Request != r.ID {
			t.Fatalf("answer %+v from %q (%v)", a, data, err)
		}
	})
}

// approvedAnswer makes a queue in a new folder, the test request, the file
// asked for and the bytes of its answer that approves.
func approvedAnswer(t *testing.T) (dir string, q *Queue, r *Request, want File, data []byte) {
	t.Helper()
	dir = t.TempDir()
	q, err := NewQueue(filepath.Join(dir, "q"), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	r = testRequest()
	want = FileFor(r)
	yes := true
	answered := want
	answered.Approved = &yes
	if data, err = answered.Encode(); err != nil {
		t.Fatal(err)
	}
	return dir, q, r, want, data
}
