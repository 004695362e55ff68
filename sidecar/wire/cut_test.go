package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	long := strings.Repeat("m", 8<<20)
	cases := []struct {
		name, in, want string
	}{
		{"short", "tools/call", "tools/call"},
		{"exactly the cap", strings.Repeat("a", MaxLogText), strings.Repeat("a", MaxLogText)},
		{"one over", strings.Repeat("a", MaxLogText+1), strings.Repeat("a", MaxLogText) + "…(cut, 257 bytes)"},
		{"8 MiB method name", long, strings.Repeat("m", MaxLogText) + "…(cut, 8388608 bytes)"},
		// 255 ASCII bytes then a two-byte é: é does not fit, and is not split.
		{"no split character", strings.Repeat("a", 255) + "éé", strings.Repeat("a", 255) + "…(cut, 259 bytes)"},
		{"not utf-8, short", "a\xffb", "a\uFFFDb"},
		{"not utf-8, long", "\xff" + strings.Repeat("b", 300), "\uFFFD" + strings.Repeat("b", MaxLogText-3) + "…(cut, 301 bytes)"},
	}
	for _, c := range cases {
		got := Cut(c.in)
		if got != c.want {
			t.Errorf("%s: Cut = %.80q… (%d bytes), want %.80q… (%d bytes)", c.name, got, len(got), c.want, len(c.want))
		}
		if !utf8.ValidString(got) {
			t.Errorf("%s: Cut gave bytes that are not UTF-8", c.name)
		}
	}
}

func TestLineAttr(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	log.LogAttrs(context.Background(), slog.LevelWarn, "dropped", LineAttr([]byte(`{"secret":"hunter2"}`)))
	var got struct {
		Line struct {
			Bytes  int    `json:"bytes"`
			SHA256 string `json:"sha256"`
		} `json:"line"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "hunter2") {
		t.Errorf("the log holds the line's bytes: %s", buf.String())
	}
	// sha256 of {"secret":"hunter2"}, from sha256sum.
	if got.Line.Bytes != 20 || got.Line.SHA256 != "b9d265c19d7fcd97cdd4a49018334176747b5dadb9c651f3ef74a88da13c5f9e" {
		t.Errorf("logged %+v", got.Line)
	}
}
