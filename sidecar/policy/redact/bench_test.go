package redact

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// benchDocs are 16 KiB arguments objects of three shapes: one long text
// (a file being written: code and prose with one token in it), many short
// members (a form, a batch of records), and one of each kind of value the
// detectors look at (URLs, ids, paths, digests, base64).
func benchDocs() map[string][]byte {
	rng := rand.New(rand.NewPCG(3, 5))
	words := strings.Fields("the request handler reads a configuration file from disk and writes the result " +
		"to the output stream when every check passes otherwise it returns an error with context for the caller")
	var code strings.Builder
	for i := 0; code.Len() < 14<<10 || !longEnough(code.String()); i++ {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&code, "func handle%dRequest(w http.ResponseWriter, r *http.Request) error {\n", i)
		case 1:
			fmt.Fprintf(&code, "\tid := r.URL.Query().Get(\"id\") // see https://example.com/docs/v%d/handlers#section-%d\n", i%9, i)
		case 2:
			code.WriteString("\t// ")
			for range 12 {
				code.WriteString(words[rng.IntN(len(words))] + " ")
			}
			code.WriteString("\n")
		default:
			fmt.Fprintf(&code, "\treturn fmt.Errorf(\"reading %%s: %%w\", \"/srv/data/file-%d.json\", err)\n}\n\n", i)
		}
		if i == 40 {
			code.WriteString("\tconst key = \"" + fakeGitHub + "\"\n")
		}
	}
	text, _ := json.Marshal(map[string]any{"path": "/srv/app/handlers.go", "content": code.String(), "overwrite": true, "mode": 420})
	form := map[string]any{}
	for i := 0; ; i++ {
		form[fmt.Sprintf("field_%03d", i)] = words[rng.IntN(len(words))] + " " + words[rng.IntN(len(words))]
		form[fmt.Sprintf("count_%03d", i)] = rng.IntN(1000)
		if b, _ := json.Marshal(form); len(b) >= 16<<10 {
			break
		}
	}
	members, _ := json.Marshal(form)
	var items []map[string]any
	for i := 0; ; i++ {
		items = append(items, map[string]any{
			"id": fmt.Sprintf("550e8400-e29b-41d4-a716-%012d", i), "url": fmt.Sprintf("https://api.example.com/v2/items/%d?page=%d", i, i%7),
			"path": fmt.Sprintf("/home/user/projects/app/src/module_%d/file.go", i), "digest": "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
			"blob": "aGVsbG8gd29ybGQgdGhpcyBpcyBhIHRlc3Q=", "when": time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC).Format(time.RFC3339),
		})
		if b, _ := json.Marshal(map[string]any{"items": items}); len(b) >= 16<<10 {
			break
		}
	}
	mixed, _ := json.Marshal(map[string]any{"items": items})
	return map[string][]byte{"text": text, "members": members, "mixed": mixed}
}

func longEnough(content string) bool {
	b, _ := json.Marshal(map[string]any{"path": "/srv/app/handlers.go", "content": content, "overwrite": true, "mode": 420})
	return len(b) >= 16<<10
}

// BenchmarkJSON16K: redacting a 16 KiB arguments object, beside its floor,
// the redactor as it was (legacy_test.go: the same expressions through the
// same passes, no provider names, entropy, decoders or split check). Both
// run in turn in every round, so the machine's noise falls on each alike;
// the redactor's time is reported as a ratio to the floor of the same run
// (x-floor).
func BenchmarkJSON16K(b *testing.B) {
	for name, doc := range benchDocs() {
		b.Run(name, func(b *testing.B) {
			r := newTest(b, Options{})
			old := newLegacy(testSalt)
			b.SetBytes(int64(len(doc)))
			var floor, now time.Duration
			for b.Loop() {
				t0 := time.Now()
				if _, err := old.JSON(doc); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := r.JSON(doc); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				floor, now = floor+t1.Sub(t0), now+t2.Sub(t1)
			}
			b.ReportMetric(float64(floor.Nanoseconds())/float64(b.N), "floor-ns/op")
			b.ReportMetric(float64(now.Nanoseconds())/float64(b.N), "redact-ns/op")
			b.ReportMetric(float64(now)/float64(floor), "x-floor")
		})
	}
}

// The benchmark's documents are what it says, and the floor redacts the
// token in the text as the redactor does.
func TestBenchDocs(t *testing.T) {
	r := newTest(t, Options{})
	old := newLegacy(testSalt)
	for name, doc := range benchDocs() {
		if len(doc) < 16<<10 || len(doc) > 17<<10 {
			t.Errorf("%s: %d bytes", name, len(doc))
		}
		a, err := old.JSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		b, err := r.JSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(a), fakeGitHub) || strings.Contains(string(b), fakeGitHub) {
			t.Errorf("%s: the token shown", name)
		}
		if name == "mixed" && string(b) != string(doc) {
			t.Errorf("mixed: the redactor changed harmless values")
		}
	}
}
