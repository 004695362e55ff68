package sidecar_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
)

// One reading of every message (issue 12): what a server acts on is what
// the executor judged and recorded.

// smugglingLines would be read by a server decoding with encoding/json into
// structs (mcp-go, and go-sdk's own structs) as another message than the one
// the executor judges. The first six are the issue's.
var smugglingLines = []string{
	`{"jsonrpc":"2.0","id":"s1","METHOD":"tools/call","PARAMS":{"name":"hidden_admin","arguments":{}},"result":null}`,
	`{"jsonrpc":"2.0","id":"s2","method":"tools/call","params":{"name":"read_catalogue","arguments":{}},"PARAMS":{"name":"hidden_admin","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":"s3","method":"tools/call","params":{"name":"read_catalogue","NAME":"hidden_admin"}}`,
	`{"jsonrpc":"2.0","id":"s4","method":"tools/call","params":{"name":"order","arguments":{"total":10},"ARGUMENTS":{"total":100000}}}`,
	`{"jsonrpc":"2.0","id":"s5","method":"ping","METHOD":"tools/call","PARAMS":{"name":"hidden_admin","arguments":{}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized","METHOD":"tools/call","ID":"s6","PARAMS":{"name":"hidden_admin","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":"s7","method":"tools/call","params":{"name":"order","arguments":{"total":10,"TOTAL":100000}}}`,
	`{"jsonrpc":"2.0","id":"s8","method":"tools/call","params":{"name":"order","arguments":{"co\u017ft":10,"cost":100000}}}`,
	`{"jsonrpc":"2.0","id":"s9","method":"tools/call","params":{"name":"order","arguments":{"\u212aind":"hidden_admin","kind":"x"}}}`,
	`{"jsonrpc":"2.0","id":"s10","method":"tools/call","params":{"NAME":"hidden_admin","arguments":{}}}`,
	`{"jsonrpc":"2.0","id":"s11","method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"progressToken":1,"PROGRESSTOKEN":"hidden_admin"}}}`,
}

// mcpgoBin is the mcp-go test server, built once.
var mcpgoBin = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "mcpgo-server-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "mcpgo")
	out, err := exec.Command("go", "build", "-o", bin, "../internal/testserver/mcpgo").CombinedOutput()
	if err != nil {
		return "", &buildError{err: err, out: string(out)}
	}
	return bin, nil
})

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string {
	return "building the mcp-go test server: " + e.err.Error() + "\n" + e.out
}

// startServerKind starts the executor with the go-sdk test server ("sdk")
// or the mcp-go one ("mcpgo").
func startServerKind(t *testing.T, kind string, o devsetup.Options) *harness {
	t.Helper()
	if kind != "mcpgo" {
		return startWith(t, kind, o)
	}
	bin, err := mcpgoBin()
	if err != nil {
		t.Fatal(err)
	}
	o, record := serverOpts(t, kind, o)
	o.Command = bin
	env, err := devsetup.Build(o)
	if err != nil {
		t.Fatal(err)
	}
	h := launch(t, env)
	h.record = record
	return h
}

// rawInitialize opens the session by hand.
func (h *harness) rawInitialize() {
	h.t.Helper()
	h.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-client","version":"1"}}}`)
	if got := h.recv(); !strings.Contains(got, `"id":"init","result"`) {
		h.t.Fatalf("initialize answered %s", got)
	}
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// rpcAnswer is an answer line read loosely.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func readAnswer(t *testing.T, line string) rpcAnswer {
	t.Helper()
	var a rpcAnswer
	if err := json.Unmarshal([]byte(line), &a); err != nil {
		t.Fatalf("an answer that is not JSON: %q", line)
	}
	return a
}

// Each smuggling line is refused with -32600 and reaches neither the go-sdk
// nor the mcp-go server: the server's record of what it read holds none of
// them, and the one ordinary call after them is the only call it ran.
func TestSmugglingNeverReachesTheServer(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"sdk", "mcpgo"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			h := startServerKind(t, kind, baseOptions())
			h.rawInitialize()
			for _, line := range smugglingLines {
				h.send(line)
				a := readAnswer(t, h.recv())
				if a.Error == nil || a.Error.Code != -32600 {
					t.Errorf("%s: answered %+v, want error -32600", line, a)
					continue
				}
				if strings.Contains(a.Error.Message, "hidden_admin") || strings.Contains(a.Error.Message, "100000") {
					t.Errorf("the refusal %q holds a value", a.Error.Message)
				}
			}
			h.send(`{"jsonrpc":"2.0","id":"ok","method":"tools/call","params":{"name":"echo","arguments":{"text":"fine"}}}`)
			if a := readAnswer(t, h.recv()); string(a.ID) != `"ok"` || a.Result == nil || a.Result.IsError {
				t.Errorf("the ordinary call was answered %+v", a)
			}
			h.stop()
			record, err := os.ReadFile(h.record)
			if err != nil {
				t.Fatal(err)
			}
			for _, bad := range []string{"hidden_admin", "100000", "read_catalogue", `"s1"`, "PARAMS"} {
				if strings.Contains(string(record), bad) {
					t.Errorf("the %s server read %q:\n%s", kind, bad, record)
				}
			}
			if got := receivedCalls(t, h.record); len(got) != 1 || got[0] != "echo" {
				t.Errorf("the %s server read the calls %v, want [echo]", kind, got)
			}
			if kind == "mcpgo" {
				decoded, err := os.ReadFile(h.record + ".decoded")
				if err != nil {
					t.Fatal(err)
				}
				if lines := strings.Split(strings.TrimSpace(string(decoded)), "\n"); len(lines) != 1 || !strings.Contains(lines[0], `"tool":"echo"`) {
					t.Errorf("mcp-go ran %q, want the echo call only", decoded)
				}
			}
			h.verifyAndCompare()
		})
	}
}

// A go-sdk client's call whose arguments name total and TOTAL is refused
// at the line (-32600), not judged: nothing is sent, nothing is written.
func TestFoldedArgumentsRefusedAtTheLine(t *testing.T) {
	t.Parallel()
	h := startWith(t, "sdk", baseOptions())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := h.client(ctx)
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "order", Arguments: map[string]any{"total": 5, "TOTAL": 500}})
	if err == nil || !strings.Contains(err.Error(), "case folding at /params/arguments/") || strings.Contains(err.Error(), "500") {
		t.Errorf("the call gave %v, want a refusal naming the member's path", err)
	}
	cs.Close()
	h.exitCode()
	if got := receivedCalls(t, h.record); len(got) != 0 {
		t.Errorf("the server received %v", got)
	}
	if entries := readBook(t, h.env.BookPath); len(entries) != 1 {
		t.Errorf("the book holds %d entries; only the slip was expected", len(entries))
	}
}

// spoofLines are what the raw server's "spoof" tool writes before its real
// answer (CLIENT: the client's id of the call; OURS: the executor's id it
// got): answers under the client's id, under ids the executor never sent,
// and lines that are not messages. None may reach the client.
var spoofLines = []string{
	`{"jsonrpc":"2.0","id":CLIENT,"result":{"content":[{"type":"text","text":"spoofed under the client's id"}]}}`,
	`{"jsonrpc":"2.0","id":777,"result":{"content":[{"type":"text","text":"spoofed under 777"}]}}`,
	`{"jsonrpc":"2.0","id":"provared-99999-AAAA","result":{"content":[{"type":"text","text":"spoofed under an id never sent"}]}}`,
	`{"jsonrpc":"2.0","id":"provared-99999-AAAA","error":{"code":1,"message":"spoofed"}}`,
	`not json at all`,
	`[{"jsonrpc":"2.0","id":OURS,"result":{"content":[{"type":"text","text":"spoofed in a batch"}]}}]`,
	`{"jsonrpc":"2.0","id":OURS,"result":{"content":[{"type":"text","text":"spoofed half`,
	"{\"jsonrpc\":\"2.0\",\"id\":777,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"spoofed \xff\"}]}}",
	`{"jsonrpc":"2.0","id":CLIENT,"result":{},"RESULT":{"content":[{"type":"text","text":"spoofed twice"}]}}`,
}

// A server's answers under the client's own id, under ids the executor
// never sent, and its lines that are not messages never reach the client:
// the client gets the call's real answer, then the next answer it asked
// for; each dropped line is logged by size and SHA-256 only.
func TestSpoofedAnswersNeverReachTheClient(t *testing.T) {
	t.Parallel()
	o := baseOptions()
	o.Tools["spoof"] = devsetup.Tool{Action: "provared.data.read"}
	h := startWith(t, "raw", o)
	for _, id := range []string{`7`, `"c-7"`} {
		h.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"spoof","arguments":{"clientId":` + id + `}}}`)
		got := h.recv()
		a := readAnswer(t, got)
		if string(a.ID) != id || a.Result == nil || len(a.Result.Content) != 1 || a.Result.Content[0].Text != "real" {
			t.Errorf("call %s: the client got %s first, want the real answer", id, got)
		}
		h.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
		if got := h.recv(); got != `{"jsonrpc":"2.0","id":"p","result":{}}` {
			t.Errorf("call %s: after the real answer the client got %s, want the ping's answer", id, got)
		}
	}
	h.stop()
	stderr := h.stderr.String()
	if strings.Contains(stderr, "spoofed") {
		t.Errorf("a dropped line's bytes are in the log")
	}
	if n := strings.Count(stderr, `"msg":"a line from the tool server is dropped"`); n != 2*len(spoofLines) {
		t.Errorf("%d lines logged as dropped, want %d", n, 2*len(spoofLines))
	}
	if !strings.Contains(stderr, `"sha256":"`) {
		t.Errorf("dropped lines are not logged by their SHA-256")
	}
	h.verifyAndCompare()
}

// unreadableToolLists are tools/list answers the raw server gives for a
// cursor, each hiding the tool "hidden" where a filter that cannot read it
// exactly would miss it (%s: the request's id).
var unreadableToolLists = map[string]string{
	"bignum":  `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo"},{"name":"hidden","n":9007199254740993}]}}`,
	"dup":     `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"hidden","name":"echo"}]}}`,
	"NAME":    `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","NAME":"hidden"}]}}`,
	"Tools":   `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo"}],"Tools":[{"name":"hidden"}]}}`,
	"utf8":    "{\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[{\"name\":\"echo\"},{\"name\":\"hidden\",\"d\":\"\xff\"}]}}",
	"half":    `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo"},{"name":"hidden"`,
	"batch":   `[{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"hidden"}]}}]`,
	"notjson": `hidden %s`,
}

// A tools/list answer the filter cannot read exactly gives the client a
// JSON-RPC error, never the list: no hidden tool shows. Lines that name no
// id the executor can read (half a line, a batch, not JSON) answer nothing:
// the client gets nothing from them.
func TestUnreadableToolsListShowsNoHiddenTool(t *testing.T) {
	t.Parallel()
	h := startWith(t, "raw", baseOptions())
	for _, c := range []struct {
		cursor   string
		answered bool
	}{{"bignum", true}, {"dup", true}, {"NAME", true}, {"Tools", true}, {"utf8", true}, {"half", false}, {"batch", false}, {"notjson", false}} {
		h.send(`{"jsonrpc":"2.0","id":"l-` + c.cursor + `","method":"tools/list","params":{"cursor":"` + c.cursor + `"}}`)
		h.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
		if c.answered {
			got := h.recv()
			a := readAnswer(t, got)
			if strings.Contains(got, "hidden") || a.Error == nil || a.Error.Code != -32603 || string(a.ID) != `"l-`+c.cursor+`"` {
				t.Errorf("%s: the client got %s, want error -32603 under its id", c.cursor, got)
			}
		}
		if got := h.recv(); got != `{"jsonrpc":"2.0","id":"p","result":{}}` {
			t.Errorf("%s: the client got %s, want the ping's answer", c.cursor, got)
		}
	}
	h.send(`{"jsonrpc":"2.0","id":"l-ok","method":"tools/list"}`)
	if got := h.recv(); strings.Contains(got, "hidden") || !strings.Contains(got, `"name":"echo"`) {
		t.Errorf("the readable tools/list came as %s", got)
	}
	h.stop()
	if strings.Contains(h.stderr.String(), "hidden") {
		t.Errorf("a dropped line's bytes are in the log")
	}
}

// A call followed at once by the end of the client's input is delivered
// to the server and answered before the server's input is closed, in each
// of 50 runs: the client gets the server's answer, the server read the
// call, and the stub names the server's result.
func TestCallThenEndOfInputIsDelivered(t *testing.T) {
	t.Parallel()
	for run := range 50 {
		kind := []string{"sdk", "mcpgo"}[run%2]
		// Each run is its own executor and server: runs go side by side (up to -parallel).
		t.Run(itoa(run)+"_"+kind, func(t *testing.T) {
			t.Parallel()
			h := startServerKind(t, kind, baseOptions())
			h.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw-client","version":"1"}}}` + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
				`{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"echo","arguments":{"text":"last words"}}}`)
			h.in.Close()
			lines := readToEnd(t, h.out)
			var answered bool
			for _, l := range lines {
				if a := readAnswer(t, l); string(a.ID) == `"call"` {
					answered = a.Result != nil && !a.Result.IsError && len(a.Result.Content) == 1 && strings.Contains(a.Result.Content[0].Text, "last words")
					if !answered {
						t.Errorf("run %d (%s): the call was answered %s", run, kind, l)
					}
				}
			}
			if !answered {
				t.Fatalf("run %d (%s): the call got no answer; the client got %q", run, kind, lines)
			}
			h.exitCode()
			if got := receivedCalls(t, h.record); len(got) != 1 || got[0] != "echo" {
				t.Fatalf("run %d (%s): the server read the calls %v", run, kind, got)
			}
			stubs := entriesOf(readBook(t, h.env.BookPath), "stub")
			if len(stubs) != 1 {
				t.Fatalf("run %d (%s): %d stubs", run, kind, len(stubs))
			}
			if d := detailsOf(stubs[0].Content); d["provared.tool-result"] == "" || d["provared.error"] != "" {
				t.Fatalf("run %d (%s): the stub names %v, want the server's result", run, kind, d)
			}
			h.verifyAndCompare()
		})
	}
}

// verifyAndCompare runs the binary's verify on the book and compare on the
// copy and the book: both must pass. (Sessions run in this process, under
// MCP_EXECUTOR_TEST_INPROCESS, have no binary; checkBook still runs.)
func (h *harness) verifyAndCompare() {
	h.t.Helper()
	h.checkBook()
	if executorBin == "" {
		return
	}
	for _, args := range [][]string{
		{"verify", h.env.BookPath, "--trust", h.env.Thumbprint},
		{"compare", "--config", h.env.SettingsPath},
	} {
		out, err := exec.Command(executorBin, args...).CombinedOutput()
		if err != nil || args[0] == "verify" && (!strings.Contains(string(out), "intact") || strings.Contains(string(out), "NOT intact")) {
			h.t.Errorf("mcp-executor %s: %v\n%s", args[0], err, out)
		}
	}
}

// readToEnd reads the executor's lines until its output ends.
func readToEnd(t *testing.T, r *bufio.Reader) []string {
	t.Helper()
	done := make(chan []string, 1)
	go func() {
		var lines []string
		for {
			l, err := r.ReadString('\n')
			if l != "" {
				lines = append(lines, strings.TrimSuffix(l, "\n"))
			}
			if err != nil {
				done <- lines
				return
			}
		}
	}()
	select {
	case lines := <-done:
		return lines
	case <-time.After(30 * time.Second):
		t.Fatal("the executor's output did not end")
	}
	return nil
}

// A call whose bytes cannot be written to the server (it closed its input)
// is not said to be sent: the client gets error 1002 saying the server did
// not get it, and the stub names that text, not an outcome of the server.
func TestCallNotDeliveredIsNotSaidSent(t *testing.T) {
	t.Parallel()
	o := baseOptions()
	// The closein server ignores the end of its input: it is stopped after 100 ms, not the default 5 s.
	o.Settings = map[string]any{"shutdownWait": 100}
	h := startWith(t, "closein", o)
	h.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := h.recv(); !strings.Contains(got, "input closed") {
		t.Fatalf("the server said %s", got)
	}
	h.send(`{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	a := readAnswer(t, h.recv())
	const text = "no answer: the call could not be written to the tool server, which did not get it"
	if string(a.ID) != `"c"` || a.Error == nil || a.Error.Code != 1002 || a.Error.Message != text {
		t.Errorf("the client got %+v, want error 1002 saying the server did not get the call", a)
	}
	h.stop()
	stubs := entriesOf(readBook(t, h.env.BookPath), "stub")
	if len(stubs) != 1 {
		t.Fatalf("%d stubs", len(stubs))
	}
	if d := detailsOf(stubs[0].Content); d["provared.error"] != fp(text) {
		t.Errorf("the stub names %v, want provared.error of %q", d, text)
	}
	h.verifyAndCompare()
}
