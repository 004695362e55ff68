package streamhttp_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/seed-6e06167c/mcp-executor/sidecar/front/streamhttp"
)

// An event id is taken only in its one spelling: what is taken prints back as it was written.
func FuzzParseEventID(f *testing.F) {
	for _, s := range []string{"0-0", "3-17", "9999999999-9999999999", "01-1", "1-", "-1", "1-1-1", "+1-2", "1 -2", "１-2", "10000000000-1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		back, ok := streamhttp.ParseEventID(s)
		if ok && back != s {
			t.Fatalf("%q taken as %q", s, back)
		}
	})
}

// A base64 Mcp-Name decodes to UTF-8 text whose strict encoding is what was inside the sentinel; a
// value without the whole sentinel is itself.
func FuzzDecodeName(f *testing.F) {
	for _, s := range []string{"echo", "=?base64?ZWNobw==?=", "=?base64?ZWNobw?=", "=?base64?ZWNobw==", "=?base64?/w==?=", "=?BASE64?ZWNobw==?=", "=?base64??="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := streamhttp.DecodeName(s)
		inner, sentinel := strings.CutPrefix(s, "=?base64?")
		inner, sentinel2 := strings.CutSuffix(inner, "?=")
		if !sentinel || !sentinel2 {
			if err != nil || got != s {
				t.Fatalf("%q: %q %v", s, got, err)
			}
			return
		}
		if err != nil {
			return
		}
		if !utf8.ValidString(got) || base64.StdEncoding.EncodeToString([]byte(got)) != inner {
			t.Fatalf("%q decoded to %q", s, got)
		}
	})
}

// jsonText reads a JSON string as encoding/json does, and refuses it exactly when its escapes are
// not UTF-16 (a lone surrogate), where decoders differ.
func FuzzJSONText(f *testing.F) {
	for _, s := range []string{`"echo"`, `"\u0065cho"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"\ud83dx"`, `"\\ud83d"`, `"a\"b"`, `"\u00e9"`, `12`, `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := streamhttp.JSONText([]byte(s))
		var want string
		jerr := json.Unmarshal([]byte(s), &want)
		if err == nil {
			if jerr != nil || got != want {
				t.Fatalf("%q: %q, encoding/json %q %v", s, got, want, jerr)
			}
			if strings.ContainsRune(got, utf8.RuneError) && !strings.ContainsRune(s, utf8.RuneError) && !strings.Contains(s, `\ufffd`) && !strings.Contains(strings.ToLower(s), `\ufffd`) {
				t.Fatalf("%q: a replacement character came from the escapes: %q", s, got)
			}
			return
		}
		if jerr == nil && len(s) > 0 && s[0] == '"' && !loneSurrogate(s) {
			t.Fatalf("%q refused (%v) though encoding/json reads it and it has no lone surrogate", s, err)
		}
	})
}

// loneSurrogate reports, by a second reading, whether a JSON string's \u escapes hold a surrogate
// outside a high-low pair.
func loneSurrogate(s string) bool {
	var units []uint16
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			if s[i+1] == 'u' && i+5 < len(s) {
				var r uint16
				for _, c := range []byte(s[i+2 : i+6]) {
					r <<= 4
					switch {
					case c >= '0' && c <= '9':
						r |= uint16(c - '0')
					case c >= 'a' && c <= 'f':
						r |= uint16(c-'a') + 10
					case c >= 'A' && c <= 'F':
						r |= uint16(c-'A') + 10
					}
				}
				units = append(units, r)
				i += 5
				continue
			}
			i++
		}
		units = append(units, 0)
	}
	for i := 0; i < len(units); i++ {
		switch u := units[i]; {
		case u >= 0xd800 && u <= 0xdbff:
			if i+1 >= len(units) || units[i+1] < 0xdc00 || units[i+1] > 0xdfff {
				return true
			}
			i++
		case u >= 0xdc00 && u <= 0xdfff:
			return true
		}
	}
	_ = utf16.IsSurrogate
	return false
}

// Headers: a header the front reads is taken only once and in visible ASCII; a spelling another
// reader could fold onto one of them is refused.
func FuzzHeaders(f *testing.F) {
	f.Add("Mcp-Session-Id", "abc", "Mcp-Session-Id", "def")
	f.Add("Mcp_Session_Id", "abc", "Accept", "text/event-stream")
	f.Add("mcp-name", "caf\xc3\xa9", "X", "y")
	f.Add("Mcp-Param-A_b", "1", "Mcp-Method", "tools/call")
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2 string) {
		h := http.Header{}
		h[n1] = append(h[n1], v1)
		h[n2] = append(h[n2], v2)
		if err := streamhttp.CheckHeaderNames(h); err == nil {
			for name := range h {
				folded := strings.ReplaceAll(strings.ToLower(name), "_", "-")
				for _, ours := range []string{"mcp-session-id", "mcp-protocol-version", "mcp-method", "mcp-name", "last-event-id", "authorization", "origin", "accept", "content-type"} {
					if folded == ours && name != http.CanonicalHeaderKey(ours) {
						t.Fatalf("%q taken beside %q", name, ours)
					}
				}
			}
		}
		for _, name := range []string{"Mcp-Session-Id", "Mcp-Name", "Accept"} {
			v, present, err := streamhttp.ReadOne(h, name, name != "Mcp-Session-Id")
			if err != nil || !present {
				continue
			}
			if len(h.Values(name)) != 1 {
				t.Fatalf("%s taken with %d values", name, len(h.Values(name)))
			}
			for i := 0; i < len(v); i++ {
				if c := v[i]; (c < 0x21 || c > 0x7e) && !((c == ' ' || c == '\t') && name != "Mcp-Session-Id" && i > 0 && i < len(v)-1) {
					t.Fatalf("%s taken with byte %#x", name, c)
				}
			}
		}
	})
}

// An event written for any data reads back, with the standard's parser, as one event with that id
// and that data (a CR or CRLF the server wrote between tokens reads as LF); nothing in data becomes a
// field of its own.
func FuzzAppendEvent(f *testing.F) {
	for _, s := range []string{"", `{"a":1}`, "{\r\"a\":1}", "{\r\n\"a\"\n:1}", "id: 9\n", "\rretry: 1\r\rdata: x", "\xef\xbb\xbf{}"} {
		f.Add(s, 0)
	}
	f.Fuzz(func(t *testing.T, data string, retry int) {
		retry %= 100000
		ev := streamhttp.AppendEvent(nil, "7-3", retry, []byte(data))
		var got []sseEvent
		if err := parseSSE(bytes.NewReader(ev), func(e sseEvent) bool { got = append(got, e); return true }); err != nil {
			t.Fatal(err)
		}
		want := strings.ReplaceAll(strings.ReplaceAll(data, "\r\n", "\n"), "\r", "\n")
		if len(got) != 1 || got[0].id != "7-3" || got[0].data != want || got[0].event != "" {
			t.Fatalf("%q wrote %q, read as %+v", data, ev, got)
		}
		if retry > 0 && got[0].retry != retry {
			t.Fatalf("retry %d read as %d", retry, got[0].retry)
		}
	})
}

// Tokens: each line taken is a token that matches; nothing else matches.
func FuzzParseTokens(f *testing.F) {
	f.Add("token-of-client-a-0123456789\n# comment\n\ntoken-of-client-b-0123456789\r\n", "token-of-client-a-0123456789")
	f.Add("short\n", "short")
	f.Add("spaces in a token here\n", "spaces")
	f.Fuzz(func(t *testing.T, text, try string) {
		ts, err := streamhttp.ParseTokens([]byte(text))
		if err != nil {
			return
		}
		lines := map[string]bool{}
		for _, l := range strings.Split(text, "\n") {
			l = strings.TrimSuffix(l, "\r")
			if strings.TrimSpace(l) == "" || l[0] == '#' {
				continue
			}
			if len(l) < 16 {
				t.Fatalf("a token of %d bytes taken", len(l))
			}
			lines[l] = true
			if !ts.Matches(l) {
				t.Fatalf("%q taken but does not match", l)
			}
		}
		if ts.Matches(try) != lines[try] {
			t.Fatalf("%q matches: %v, is a line: %v", try, ts.Matches(try), lines[try])
		}
	})
}

// One id key for every spelling of one string id; numbers as written.
func TestIDKey(t *testing.T) {
	t.Parallel()
	same := [][2]string{{`"a"`, `"\u0061"`}, {`"é"`, `"\u00e9"`}, {`"\/"`, `"/"`}}
	for _, p := range same {
		if streamhttp.IDKey([]byte(p[0])) != streamhttp.IDKey([]byte(p[1])) {
			t.Errorf("%s and %s have two keys", p[0], p[1])
		}
	}
	differ := [][2]string{{`"1"`, `1`}, {`1`, `1.0`}, {`"a"`, `"A"`}}
	for _, p := range differ {
		if streamhttp.IDKey([]byte(p[0])) == streamhttp.IDKey([]byte(p[1])) {
			t.Errorf("%s and %s have one key", p[0], p[1])
		}
	}
}

// An Mcp-Param header agrees with an argument only when it says the same: the same text (as written or
// in base64), the same boolean word, the same whole number written as a JSON number.
func TestParamAgrees(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		header, arg string
		want        bool
	}{
		{"us-west1", `"us-west1"`, true},
		{"us-west1", `"us-west2"`, false},
		{"=?base64?WsO8cmljaA==?=", `"Z\u00fcrich"`, true},
		{"=?base64?WsO8cmljaA==?=", `"Zurich"`, false},
		{"true", `true`, true},
		{"True", `true`, false},
		{"42", `42`, true},
		{"42.0", `42`, true},
		{"4.2e1", `42`, true},
		{"0x2A", `42`, false},
		{"042", `42`, false},
		{"NaN", `42`, false},
		{"Inf", `1e400`, false},
		{"42", `42.5`, false},
		{"9007199254740993", `9007199254740993`, false},
		{"1", `{"a":1}`, false},
		{"x", `["x"]`, false},
	} {
		if got := streamhttp.ParamAgrees(c.header, []byte(c.arg)); got != c.want {
			t.Errorf("header %q, argument %s: %v, want %v", c.header, c.arg, got, c.want)
		}
	}
}

// Whatever the bytes, an Mcp-Param header agrees with a string argument only when it decodes to that
// string.
func FuzzParamAgrees(f *testing.F) {
	f.Add("us", `"us"`)
	f.Add("=?base64?dXM=?=", `"us"`)
	f.Add("1e0", `1`)
	f.Fuzz(func(t *testing.T, header, arg string) {
		if len(arg) == 0 || !json.Valid([]byte(arg)) {
			return
		}
		if !streamhttp.ParamAgrees(header, []byte(arg)) || arg[0] != '"' {
			return
		}
		var want string
		_ = json.Unmarshal([]byte(arg), &want)
		got, err := streamhttp.DecodeName(header)
		if err != nil || got != want {
			t.Fatalf("header %q agrees with %s but reads %q (%v)", header, arg, got, err)
		}
	})
}
