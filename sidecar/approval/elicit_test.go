package approval

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

func testRequest() *Request {
	t := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	return &Request{ID: "AAECAwQFBgcICQoLDA0ODw", Call: "c1", Tool: "write_file", Action: "files.write",
		Amount: &record.Amount{Unit: "files", Value: 1}, Slip: slipFP, Arguments: canon.Fingerprint([]byte(`{"path":"a"}`)),
		RequestedAt: t, ExpiresAt: t.Add(time.Minute), Shown: json.RawMessage(`{"path":"a","token":"[redacted]"}`)}
}

// TestElicitThroughSDK sends the executor's elicitation params from a
// go-sdk server to a go-sdk client (in memory: both ends are the SDK's own
// code) and reads the client's answer back.
func TestElicitThroughSDK(t *testing.T) {
	for _, c := range []struct {
		name   string
		handle func(*mcp.ElicitRequest) *mcp.ElicitResult
		want   bool
	}{
		{"accept yes", func(*mcp.ElicitRequest) *mcp.ElicitResult {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
		}, true},
		{"accept no", func(*mcp.ElicitRequest) *mcp.ElicitResult {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}
		}, false},
		{"decline", func(*mcp.ElicitRequest) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "decline"} }, false},
		{"cancel", func(*mcp.ElicitRequest) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "cancel"} }, false},
	} {
		for _, version := range []string{"2025-06-18", "2025-11-25"} {
			t.Run(c.name+" "+version, func(t *testing.T) {
				r := testRequest()
				raw, err := ElicitParams(r, version >= "2025-11-25")
				if err != nil {
					t.Fatal(err)
				}
				var params mcp.ElicitParams
				if err := json.Unmarshal(raw, &params); err != nil {
					t.Fatal(err)
				}
				var seen *mcp.ElicitParams
				client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						seen = req.Params
						return c.handle(req), nil
					}})
				server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
				ct, st := mcp.NewInMemoryTransports()
				ss, err := server.Connect(t.Context(), st, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer ss.Close()
				cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
				if err != nil {
					t.Fatal(err)
				}
				defer cs.Close()
				res, err := ss.Elicit(t.Context(), &params)
				if err != nil {
					t.Fatalf("the SDK client refused the params: %v", err)
				}
				if cs.InitializeResult().ProtocolVersion != version {
					t.Fatalf("negotiated %s", cs.InitializeResult().ProtocolVersion)
				}
				if strings.Contains(string(raw), `"mode"`) != (version >= "2025-11-25") || !strings.Contains(seen.Message, `"write_file"`) || !strings.Contains(seen.Message, "files.write") ||
					!strings.Contains(seen.Message, "1 files") || !strings.Contains(seen.Message, `"token":"[redacted]"`) {
					t.Fatalf("message %q", seen.Message)
				}
				out, _ := json.Marshal(res)
				got, err := ParseElicitResult(out)
				if err != nil || got != c.want {
					t.Fatalf("answer %s read as %v (%v)", out, got, err)
				}
			})
		}
	}
}

func TestElicitParams2025_06_18(t *testing.T) {
	raw, err := ElicitParams(testRequest(), false)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 2 || m["message"] == nil || m["requestedSchema"] == nil {
		t.Fatalf("params %s", raw)
	}
	want := `{"type":"object","properties":{"approve":{"type":"boolean","title":"Approve","description":"Yes lets this one call run once; no refuses it","default":false}},"required":["approve"]}`
	if string(m["requestedSchema"]) != want {
		t.Fatalf("schema %s", m["requestedSchema"])
	}
}

func TestParseElicitResult(t *testing.T) {
	for _, c := range []struct {
		result string
		want   bool
		err    bool
	}{
		{`{"action":"accept","content":{"approve":true}}`, true, false},
		{`{"action":"accept","content":{"approve": true },"_meta":{}}`, true, false},
		{`{"action":"accept","content":{"approve":"true"}}`, false, false},
		{`{"action":"accept","content":{"approve":1}}`, false, false},
		{`{"action":"accept","content":{}}`, false, true},
		{`{"action":"accept"}`, false, true},
		{`{"action":"ACCEPT","content":{"approve":true}}`, false, false},
		{`{"action":"decline","content":{"approve":true}}`, false, false},
		{`{"action":"cancel"}`, false, false},
		{`[]`, false, true},
		{`nonsense`, false, true},
	} {
		got, err := ParseElicitResult([]byte(c.result))
		if got != c.want || (err != nil) != c.err {
			t.Errorf("%s: got %v, %v", c.result, got, err)
		}
	}
}

func TestInputRequired(t *testing.T) {
	r := testRequest()
	raw, err := InputRequiredResult(r)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		ResultType    string `json:"resultType"`
		InputRequests map[string]struct {
			Method string           `json:"method"`
			Params mcp.ElicitParams `json:"params"`
		} `json:"inputRequests"`
		RequestState string `json:"requestState"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	q := res.InputRequests[InputKey]
	if res.ResultType != "input_required" || res.RequestState != r.ID || q.Method != "elicitation/create" || q.Params.Mode != "form" || len(res.InputRequests) != 1 {
		t.Fatalf("result %s", raw)
	}
	for _, c := range []struct {
		params          string
		id              string
		approved, found bool
		err             bool
	}{
		{`{"name":"w","arguments":{},"inputResponses":{"red.prova/approval":{"action":"accept","content":{"approve":true}}},"requestState":"` + r.ID + `"}`, r.ID, true, true, false},
		{`{"name":"w","inputResponses":{"red.prova/approval":{"action":"decline"}},"requestState":"` + r.ID + `"}`, r.ID, false, true, false},
		{`{"name":"w","inputResponses":{"red.prova/approval":{"action":"accept","content":{"approve":true}}}}`, "", false, true, true},
		{`{"name":"w","inputResponses":{"q1":{"action":"accept"}},"requestState":"s1"}`, "", false, false, false},
		{`{"name":"w"}`, "", false, false, false},
		{`[1]`, "", false, false, true},
	} {
		id, approved, found, err := InputAnswer([]byte(c.params))
		if id != c.id || approved != c.approved || found != c.found || (err != nil) != c.err {
			t.Errorf("%s: got %q %v %v %v", c.params, id, approved, found, err)
		}
	}
	if m := PendingMeta(r); m[MetaApproval] != r.ID || !strings.Contains(PendingText(r), r.ID) {
		t.Fatalf("pending %v", m)
	}
}

func FuzzParseElicitResult(f *testing.F) {
	f.Add([]byte(`{"action":"accept","content":{"approve":true}}`))
	f.Add([]byte(`{"action":"decline"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		yes, _ := ParseElicitResult(data)
		if yes {
			var res struct {
				Action  string         `json:"action"`
				Content map[string]any `json:"content"`
			}
			if json.Unmarshal(data, &res) != nil || res.Action != "accept" || res.Content["approve"] != true {
				t.Fatalf("read %q as yes", data)
			}
		}
	})
}

func FuzzInputAnswer(f *testing.F) {
	f.Add([]byte(`{"inputResponses":{"red.prova/approval":{"action":"accept","content":{"approve":true}}},"requestState":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, yes, found, err := InputAnswer(data)
		if yes && (!found || err != nil) {
			t.Fatalf("yes without an answer: %q", data)
		}
	})
}

// TestElicitationChannel holds calls whose client is a go-sdk client with an
// elicitation handler, asked through the go-sdk server's Elicit (in memory:
// both ends are the SDK's own code).
func TestElicitationChannel(t *testing.T) {
	for _, c := range []struct {
		name   string
		result *mcp.ElicitResult
		err    error
		want   Outcome
	}{
		{"accepts", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil, Approved},
		{"declines", &mcp.ElicitResult{Action: "decline"}, nil, Declined},
		{"says no", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}, nil, Declined},
		{"fails", nil, errors.New("the handler broke"), Declined},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return c.result, c.err }})
			server := mcp.NewServer(&mcp.Implementation{Name: "s", Version: "1"}, nil)
			ct, st := mcp.NewInMemoryTransports()
			ss, err := server.Connect(t.Context(), st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			ch := &Elicitation{WithMode: true, Send: func(ctx context.Context, params []byte) ([]byte, error) {
				var p mcp.ElicitParams
				if err := json.Unmarshal(params, &p); err != nil {
					return nil, err
				}
				res, err := ss.Elicit(ctx, &p)
				if err != nil {
					return nil, err
				}
				return json.Marshal(res)
			}}
			w := newWorld(t)
			h, _ := w.start(Options{}, true)
			call := call("c1", `{"path":"a"}`)
			call.Channels = []Channel{ch}
			r, err := h.Hold(t.Context(), call)
			if err != nil || r.Outcome != c.want || r.Answer.Channel != ChannelElicitation || r.Answer.Who != WhoClient {
				t.Fatalf("hold: %+v %v", r, err)
			}
		})
	}
}
