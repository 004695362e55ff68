package approval

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestFileLayout pins the request file a person reads and edits.
func TestFileLayout(t *testing.T) {
	got, err := FileFor(testRequest()).Encode()
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "request.json")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to write it): %v", err)
	}
	if string(got) != string(want) {
		t.Fatalf("file:\n%s\nwant:\n%s", got, want)
	}
	f, err := ParseFile(want)
	if err != nil || !f.Bound(FileFor(testRequest())) || f.Approved != nil {
		t.Fatalf("ParseFile(golden): %+v %v", f, err)
	}
	restored := *testRequest()
	restored.Shown = nil
	rf := FileFor(&restored)
	if string(rf.Arguments) != "null" || !sameRequest(rf, f) || rf.Bound(f) {
		t.Fatal("a restored request's file does not match the file it wrote before")
	}
}

func TestParseFileFaults(t *testing.T) {
	good, _ := FileFor(testRequest()).Encode()
	edit := func(old, replacement string) string {
		if !strings.Contains(string(good), old) {
			t.Fatalf("no %s in the file", old)
		}
		return strings.Replace(string(good), old, replacement, 1)
	}
	for _, c := range []struct{ name, text, want string }{
		{"not json", `{"id":`, "not one JSON object"},
		{"list", `[]`, "not a JSON object"},
		{"trailing", string(good) + "{}", "not one JSON object"},
		{"not utf-8", "{\"id\":\"\xff\"}", "not UTF-8"},
		{"twice", edit(`"approved": null`, `"approved": null, "approved": true`), "named twice"},
		{"twice folded", edit(`"approved": null`, `"approved": null, "Approved": true`), "named twice"},
		{"twice in arguments", edit(`"path": "a"`, `"path": "a", "PATH": "b"`), "named twice"},
		{"unknown", edit(`"approved": null`, `"approved": true, "by": "me"`), `"by" is not one`},
		{"missing", edit(`"approved": null`, `"approvedd": null`), "is not one"},
		{"approved text", edit(`"approved": null`, `"approved": "true"`), "not of its type"},
		{"approved number", edit(`"approved": null`, `"approved": 1`), "not of its type"},
		{"id form", edit(`"AAECAwQFBgcICQoLDA0ODw"`, `"abc"`), "not of its form"},
		{"sha form", edit(`"argumentsSha256": "`, `"argumentsSha256": "x`), "not of its form"},
		{"time form", edit(`.000Z"`, `Z"`), "is not"},
		{"amount extra", edit(`"value": 1`, `"value": 1, "x": 2`), "not of its type"},
		{"amount fraction", edit(`"value": 1`, `"value": 1.5`), "not of its type"},
		{"amount negative", edit(`"value": 1`, `"value": -1`), "amount must be"},
		{"amount missing unit", edit(`"unit": "files",`, ``), "amount must be"},
		{"big number", edit(`"value": 1`, `"value": 1e300`), "not one JSON object"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := ParseFile([]byte(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestAnswerFileAndWaiting(t *testing.T) {
	dir := t.TempDir()
	q, err := NewQueue(filepath.Join(dir, "q"), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := testRequest()
	later := *r
	later.ID = "BAECAwQFBgcICQoLDA0ODw"
	later.ExpiresAt = r.ExpiresAt.Add(time.Minute)
	for _, x := range []*Request{&later, r} {
		data, _ := FileFor(x).Encode()
		if err := WriteFileAtomic(q.Dir(), FileName(x.ID), data); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(q.Dir(), "junk.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	at := r.RequestedAt
	files, skipped, err := Waiting(q.Dir(), at)
	if err != nil || len(files) != 2 || files[0].ID != r.ID || files[1].ID != later.ID || len(skipped) != 1 || skipped[0] != "junk.json" {
		t.Fatalf("waiting: %v %+v %v", err, files, skipped)
	}
	f, err := AnswerFile(q.Dir(), r.ID, true, at)
	if err != nil || f.Approved == nil || !*f.Approved || f.AnsweredWith != AnsweredWithCommand {
		t.Fatalf("answer: %+v %v", f, err)
	}
	data, _ := os.ReadFile(filepath.Join(q.Dir(), FileName(r.ID)))
	if back, err := ParseFile(data); err != nil || !back.Bound(FileFor(r)) || back.Approved == nil || !*back.Approved {
		t.Fatalf("the answered file: %s %v", data, err)
	}
	if _, err := AnswerFile(q.Dir(), r.ID, false, at); err == nil || !strings.Contains(err.Error(), "already answered") {
		t.Fatalf("second answer: %v", err)
	}
	if _, err := AnswerFile(q.Dir(), later.ID, true, later.ExpiresAt); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("expired: %v", err)
	}
	if _, err := AnswerFile(q.Dir(), "CAECAwQFBgcICQoLDA0ODw", true, at); err == nil || !strings.Contains(err.Error(), "no request") {
		t.Fatalf("missing: %v", err)
	}
	if _, err := AnswerFile(q.Dir(), "../x", true, at); err == nil || !strings.Contains(err.Error(), "not a request id") {
		t.Fatalf("bad id: %v", err)
	}
	if files, _, _ := Waiting(q.Dir(), at); len(files) != 1 {
		t.Fatalf("after the answer %d wait", len(files))
	}
	if left, _ := filepath.Glob(filepath.Join(q.Dir(), ".*")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	if _, err := NewQueue(filepath.Join(q.Dir(), FileName(r.ID)), 0, nil); err == nil {
		t.Fatal("a file was taken as the queue folder")
	}
}

func TestRedactSecrets(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"path":"a","token":"x","nested":{"Password":"p","list":[{"apiKey":1}]}}`, `{"nested":{"Password":"[redacted]","list":[{"apiKey":"[redacted]"}]},"path":"a","token":"[redacted]"}`},
		{`{"header":"Bearer abc.def","jwt":"eyJhbGciOi.x.y","key":"-----BEGIN PRIVATE KEY-----","gh":"ghp_abc","n":12.50}`, `{"gh":"[redacted]","header":"[redacted]","jwt":"[redacted]","key":"[redacted]","n":12.50}`},
		{`["sk-live-123","plain"]`, `["[redacted]","plain"]`},
		{`not json`, `"[arguments not shown]"`},
		{`{} {}`, `"[arguments not shown]"`},
	} {
		got := string(RedactSecrets([]byte(c.in)))
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%s: not JSON", got)
		}
	}
}

func FuzzParseFile(f *testing.F) {
	good, _ := FileFor(testRequest()).Encode()
	f.Add(good)
	f.Add([]byte(strings.Replace(string(good), `"approved": null`, `"approved": true`, 1)))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := ParseFile(data)
		if err != nil {
			return
		}
		// What is accepted encodes and reads back as the same request.
		enc, err := file.Encode()
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseFile(enc)
		if err != nil || !back.Bound(file) || (back.Approved == nil) != (file.Approved == nil) {
			t.Fatalf("round trip: %v\n%s", err, enc)
		}
	})
}

func FuzzRedactSecrets(f *testing.F) {
	f.Add([]byte(`{"token":"x","a":[1,"Bearer y"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if out := RedactSecrets(data); !json.Valid(out) {
			t.Fatalf("not JSON: %q", out)
		}
	})
}
