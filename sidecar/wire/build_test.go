package wire

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The lines the executor builds read back, through go-sdk, as the
// messages they are meant to be.
func TestBuiltLinesReadByGoSDK(t *testing.T) {
	msg, err := jsonrpc.DecodeMessage(ErrorLine([]byte(`"c-1"`), CodeNotTaken, "not taken: <stopping>", []byte(`{"a":1}`)))
	if err != nil {
		t.Fatal(err)
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.ID.Raw() != "c-1" {
		t.Fatalf("read as %#v", msg)
	}
	var we *jsonrpc.Error
	if !asWire(resp.Error, &we) || we.Code != CodeNotTaken || we.Message != "not taken: <stopping>" || string(we.Data) != `{"a":1}` {
		t.Fatalf("error read as %#v", resp.Error)
	}
	res, err := ToolErrorResult("no rule names the tool", map[string]any{MetaRefused: "unlisted"})
	if err != nil {
		t.Fatal(err)
	}
	var ctr mcp.CallToolResult
	if err := json.Unmarshal(res, &ctr); err != nil {
		t.Fatal(err)
	}
	text, ok := ctr.Content[0].(*mcp.TextContent)
	if !ctr.IsError || len(ctr.Content) != 1 || !ok || text.Text != NotTakenPrefix+"no rule names the tool" || ctr.Meta[MetaRefused] != "unlisted" {
		t.Fatalf("tool error read as %+v", ctr)
	}
	msg, err = jsonrpc.DecodeMessage(ResultLine([]byte("3"), res))
	if r, ok := msg.(*jsonrpc.Response); err != nil || !ok || r.ID.Raw() != int64(3) || string(r.Result) != string(res) {
		t.Fatalf("result line read as %#v, %v", msg, err)
	}
}

func asWire(err error, we **jsonrpc.Error) bool {
	return errors.As(err, we)
}

// Complete puts resultType first in an object the executor wrote, and leaves anything else alone.
func TestComplete(t *testing.T) {
	cases := map[string]string{
		`{}`:                     `{"resultType":"complete"}`,
		`{ }`:                    `{"resultType":"complete"}`,
		`{"a":1}`:                `{"resultType":"complete","a":1}`,
		`{ "content":[],"x":{}}`: `{"resultType":"complete","content":[],"x":{}}`,
		`[]`:                     `[]`,
		`"x"`:                    `"x"`,
		``:                       ``,
	}
	for in, want := range cases {
		if got := string(Complete([]byte(in))); got != want {
			t.Errorf("Complete(%s) = %s, want %s", in, got, want)
		}
	}
	for _, rev := range []string{"2026-07-28", "2027-01-01"} {
		if !Modern(rev) {
			t.Errorf("%s is not modern", rev)
		}
	}
	for _, rev := range []string{"", "2025-11-25", "2025-06-18"} {
		if Modern(rev) {
			t.Errorf("%q is modern", rev)
		}
	}
}
