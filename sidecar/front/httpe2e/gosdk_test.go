package httpe2e

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// approver is an elicitation handler that approves.
func approver(asked *atomic.Int64) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
	}
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// go-sdk's streamable client through the binary, in both eras (2025-11-25 with initialize; its default,
// 2026-07-28 with server/discover): list, an allowed call, a refused call, a held call approved
// (elicitation; input_required answered by a retry) and a cancelled call.
func TestGoSDKClient(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			env := testEnv(t, nil)
			s := serveHTTP(t, env)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var asked atomic.Int64
			c := mcp.NewClient(&mcp.Implementation{Name: "httpe2e-gosdk", Version: "1"}, &mcp.ClientOptions{ElicitationHandler: approver(&asked)})
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.url, DisableStandaloneSSE: version != "2025-11-25"},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			if got := cs.InitializeResult().ProtocolVersion; got != version {
				t.Fatalf("the session speaks %s, want %s", got, version)
			}
			tools, err := cs.ListTools(ctx, nil)
			if err != nil || len(tools.Tools) < 3 {
				t.Fatalf("tools/list: %v %+v", err, tools)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
			if err != nil || res.IsError || resultText(res) != "hi" {
				t.Fatalf("echo: %v %+v", err, res)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "forbidden", Arguments: map[string]any{}})
			if err != nil || !res.IsError || !strings.HasPrefix(resultText(res), "Not taken by the executor: ") {
				t.Fatalf("forbidden: %v %+v", err, res)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "held", Arguments: map[string]any{"text": "go"}})
			if err != nil || res.IsError || resultText(res) != "held call ran: go" || asked.Load() != 1 {
				t.Fatalf("held: %v %+v, asked %d", err, res, asked.Load())
			}
			callCtx, stopCall := context.WithTimeout(ctx, 500*time.Millisecond)
			start := time.Now()
			_, err = cs.CallTool(callCtx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 20000}})
			stopCall()
			if err == nil || time.Since(start) > 10*time.Second {
				t.Fatalf("the cancelled call: %v after %s", err, time.Since(start))
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}})
			if err != nil || resultText(res) != "after" {
				t.Fatalf("after the cancel: %v %+v", err, res)
			}
			_ = cs.Close()
			s.stop()
			waitLogged(t, s, `"why":"no answer: the call was cancelled"`)
			rep := verifyBook(t, env)
			if rep.Counts.Stubs != 4 || rep.Counts.Refusals != 1 {
				t.Fatalf("the book holds %+v; want 4 stubs and 1 refusal", rep.Counts)
			}
		})
	}
}

// waitLogged fails unless serve's log says s.
func waitLogged(t *testing.T, sv *served, s string) {
	t.Helper()
	if !strings.Contains(sv.log.String(), s) {
		t.Fatalf("serve's log does not say %s", s)
	}
}

// A client whose event stream breaks in the middle of a call reconnects with Last-Event-ID and gets the
// answer exactly once: a proxy between go-sdk's client and the binary cuts the call's POST stream after
// its priming event; the client resumes with a GET, and the answer passes the proxy once.
func TestReconnectInTheMiddleOfACall(t *testing.T) {
	env := testEnv(t, nil)
	s := serveHTTP(t, env)
	target, err := url.Parse(s.url)
	if err != nil {
		t.Fatal(err)
	}
	var cut atomic.Bool
	var answers, resumed atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, err := http.NewRequestWithContext(r.Context(), r.Method, s.url, bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		req.Host = target.Host
		if r.Header.Get("Last-Event-Id") != "" {
			resumed.Add(1)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		cutThis := r.Method == http.MethodPost && bytes.Contains(body, []byte(`"name":"slow"`)) && cut.CompareAndSwap(false, true)
		br := bufio.NewReader(resp.Body)
		sawID := false
		for {
			line, err := br.ReadString('\n')
			_, _ = io.WriteString(w, line)
			w.(http.Flusher).Flush()
			if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"slept"`) {
				answers.Add(1)
			}
			if strings.HasPrefix(line, "id: ") {
				sawID = true
			}
			if cutThis && sawID && line == "\n" {
				// The priming event went through: the connection breaks here.
				panic(http.ErrAbortHandler)
			}
			if err != nil {
				return
			}
		}
	}))
	defer proxy.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "httpe2e-resume", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: proxy.URL + target.Path, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 1500}})
	if err != nil || resultText(res) != "slept" {
		t.Fatalf("the call: %v %+v", err, res)
	}
	if !cut.Load() || resumed.Load() < 1 || answers.Load() != 1 {
		t.Fatalf("cut %v, resumed %d times, the answer passed %d times", cut.Load(), resumed.Load(), answers.Load())
	}
	// The session goes on: one more call, one more answer.
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "again"}}); err != nil || resultText(res) != "again" {
		t.Fatalf("after the resumption: %v", err)
	}
	_ = cs.Close()
	s.stop()
	if rep := verifyBook(t, env); rep.Counts.Stubs != 2 {
		t.Fatalf("the book holds %d stubs, want 2", rep.Counts.Stubs)
	}
}
