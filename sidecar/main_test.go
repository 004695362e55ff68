package sidecar_test

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test binary is also the tool server the executor starts (run again
// with testServerEnv set), so that a real go-sdk server runs as a real child
// process; and the executor itself is the real binary, built once here.
const (
	testServerEnv = "MCP_EXECUTOR_TEST_SERVER" // "sdk" or "raw"
	recordEnv     = "MCP_EXECUTOR_TEST_RECORD" // file the server copies every line it reads to
)

// executorBin is the built mcp-executor the sessions run in; "" when the
// sessions run in this process over pipes (MCP_EXECUTOR_TEST_INPROCESS).
// commandsBin is the built mcp-executor the other commands (verify,
// compare, approve, tools) run as, in both modes.
var executorBin, commandsBin string

func TestMain(m *testing.M) {
	switch os.Getenv(testServerEnv) {
	case "sdk":
		runSDKServer()
		return
	case "raw":
		runRawServer()
		return
	case "echo":
		runEchoServer()
		return
	case "relay":
		runRelay()
		return
	case "closeout", "orphan", "sleeper", "closein":
		runEndingServer(os.Getenv(testServerEnv))
		return
	}
	quietRaceExit()
	parallelFloor()
	dir, err := os.MkdirTemp("", "mcp-executor-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin := filepath.Join(dir, "mcp-executor")
	// Under -race the executor binary is built with the race detector too, so the engine's
	// goroutines are checked in every end-to-end test.
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "../cmd/mcp-executor")...)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "sidecar tests: building ./cmd/mcp-executor: %v\n%s\n", err, out)
		os.Exit(1)
	}
	commandsBin = bin
	if os.Getenv("MCP_EXECUTOR_TEST_INPROCESS") == "" {
		executorBin = bin
	} // else every session runs in this process (for -race over the session code)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// raceExitSleep is the GORACE the processes these tests start run under
// (the executor, its guard, the test servers, verify and compare), unless
// GORACE is set already. Without it every race-built process sleeps a
// second at exit (the race detector's default atexit_sleep_ms=1000, a grace
// for other threads to finish a report), several times per end-to-end test.
// The detector stays on in every process; a race found still fails the test.
const raceExitSleep = "atexit_sleep_ms=50"

// quietRaceExit sets GORACE for the child processes (this process read its
// own GORACE at start-up and keeps it).
func quietRaceExit() {
	if _, set := os.LookupEnv("GORACE"); set {
		return
	}
	if err := os.Setenv("GORACE", raceExitSleep); err != nil {
		fmt.Fprintln(os.Stderr, "sidecar tests: setting GORACE:", err)
		os.Exit(1)
	}
}

// minParallel is the fewest tests run side by side here unless -parallel
// says otherwise: the end-to-end tests mostly wait on their processes (the
// executor, its server, node), so more of them than cores fit at once.
const minParallel = 4

// parallelFloor raises -test.parallel to minParallel when it was not set
// on the command line.
func parallelFloor() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if set || runtime.GOMAXPROCS(0) >= minParallel {
		return
	}
	if err := flag.Set("test.parallel", strconv.Itoa(minParallel)); err != nil {
		fmt.Fprintln(os.Stderr, "sidecar tests: setting -test.parallel:", err)
		os.Exit(1)
	}
}

// recordingStdin copies every line the server reads to the record file.
func recordingStdin() io.ReadCloser {
	path := os.Getenv(recordEnv)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		os.Exit(2)
	}
	return io.NopCloser(io.TeeReader(os.Stdin, f))
}

// runSDKServer is a go-sdk MCP server on stdio with a few tools.
func runSDKServer() {
	if err := newSDKServer().Run(context.Background(), &mcp.IOTransport{Reader: recordingStdin(), Writer: nopWriteCloser{os.Stdout}}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
	}
}

// newSDKServer is the go-sdk test server's tools, on any transport.
func newSDKServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	for _, name := range []string{"echo", "order", "send", "notinslip", "unlisted_tool", "Bad_Case"} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a map[string]any
			_ = json.Unmarshal(req.Params.Arguments, &a)
			b, _ := json.Marshal(a)
			return text(req.Params.Name + " " + string(b)), nil
		})
	}
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct{ MS int }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
			return text("slept"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	// tracecontext answers with the traceparent it read in the call's _meta.
	s.AddTool(&mcp.Tool{Name: "tracecontext", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tp, _ := req.Params.Meta["traceparent"].(string)
		return text(tp), nil
	})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it failed"}}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "exit", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	return s
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// rawResult is what the raw server answers every tools/call with: odd
// spacing, large numbers and number spellings a re-encoder would change.
const rawResult = `{ "content" : [ {"type":"text", "text":"raw \u00e9\/ok"} ],"n":9007199254740991 , "f": 1.50, "e":2.0E3,"z":-0 }`

// runRawServer answers by hand, byte for byte: initialize, tools/list and
// tools/call (with rawResult after the id, written with odd spacing).
func runRawServer() {
	in := bufio.NewReader(recordingStdin())
	out := bufio.NewWriter(os.Stdout)
	var later []json.RawMessage // "later" requests, answered at "flush"
	for {
		line, err := in.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name           string          `json:"name"`
				InputResponses json.RawMessage `json:"inputResponses"`
				Cursor         string          `json:"cursor"`
				Arguments      struct {
					ClientID json.RawMessage `json:"clientId"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil {
			continue
		}
		switch m.Method {
		case "initialize":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}}`+"\n", m.ID)
		case "tools/list":
			if bad, ok := unreadableToolLists[m.Params.Cursor]; ok {
				fmt.Fprintf(out, bad+"\n", m.ID)
				break
			}
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"},"x":1.0},  {"name":"hidden","inputSchema":{"type":"object"}} ,{"name":"order","inputSchema":{"type":"object"}}],"nextCursor":"c 1"}}`+"\n", m.ID)
		case "tools/call":
			if m.Params.Name == "roots" {
				// Ask the client first, and answer the call once it has.
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":"srv-1","method":"roots/list"}`+"\n")
				flushOrExit(out)
				answer, _ := in.ReadBytes('\n')
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`+"\n", m.ID, strings.TrimSpace(string(answer)))
				break
			}
			if m.Params.Name == "spoof" {
				// Answers the client would take for the call, before the real one.
				for _, l := range spoofLines {
					fmt.Fprintf(out, "%s\n", strings.ReplaceAll(strings.ReplaceAll(l, "CLIENT", string(m.Params.Arguments.ClientID)), "OURS", string(m.ID)))
				}
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"real"}]}}`+"\n", m.ID)
				break
			}
			if m.Params.Name == "ask" {
				if m.Params.InputResponses == nil {
					fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"input_required","inputRequests":{"q1":{"method":"elicitation/create","params":{"message":"sure?","requestedSchema":{"type":"object"}}}},"requestState":"s1"}}`+"\n", m.ID)
				} else {
					fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"done"}]}}`+"\n", m.ID)
				}
				break
			}
			fmt.Fprintf(out, `{ "result" : %s , "jsonrpc":"2.0",  "id" :%s }`+"\n", rawResult, m.ID)
		case "later":
			later = append(later, m.ID)
		case "flush":
			for _, id := range later {
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"late":true}}`+"\n", id)
			}
			later = nil
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", m.ID)
		default:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", m.ID)
		}
		flushOrExit(out)
	}
}

// flushOrExit flushes a test server's output; when the executor has closed
// the pipe there is no one left to answer, and the server exits.
func flushOrExit(out *bufio.Writer) {
	if err := out.Flush(); err != nil {
		os.Exit(3)
	}
}

// receivedCalls lists the tool names of the tools/call requests the test
// server read, from its record file.
func receivedCalls(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.Method == "tools/call" {
			names = append(names, m.Params.Name)
		}
	}
	return names
}

// serverLines lists every line the test server read, decoded.
func serverLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, _ := os.ReadFile(path)
	var out []map[string]any
	for _, line := range strings.Split(string(data), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// runEchoServer writes back every line it reads: the benchmarks' measure of
// one round trip between two processes over pipes.
// runRelay is the least a process between client and server can do: it
// starts the go-sdk test server as its child and copies each line from its
// input to the server's, and each line from the server's output to its
// own, nothing read or written down (BenchmarkCallPath's relay figure).
func runRelay() {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), testServerEnv+"=sdk")
	cmd.Stderr = os.Stderr
	toServer, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	fromServer, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "relay:", err)
		os.Exit(1)
	}
	go func() {
		relayLines(toServer, os.Stdin)
		toServer.Close() // the server ends at the end of its input
	}()
	relayLines(os.Stdout, fromServer)
	_ = cmd.Wait() // it ended when its output did
}

// relayLines writes each line read from r to w, one write a line, until r
// ends or w fails.
func relayLines(w io.Writer, r io.Reader) {
	in := bufio.NewReader(r)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			if _, werr := w.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func runEchoServer() { relayLines(os.Stdout, os.Stdin) }
