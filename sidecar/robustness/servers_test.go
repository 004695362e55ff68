package robustness_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recordingStdin copies every line the server reads to the record file
// before the server acts on it: the record is what the server received.
func recordingStdin() io.Reader {
	f, err := os.OpenFile(os.Getenv(recordEnv), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
		os.Exit(2)
	}
	return io.TeeReader(os.Stdin, f)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// runSDKServer is a well-behaved go-sdk MCP server: echo, slow (sleeps
// arguments.ms), order and notinslip answer with their arguments.
func runSDKServer() {
	s := mcp.NewServer(&mcp.Implementation{Name: "robustness-sdk", Version: "1"}, nil)
	obj := map[string]any{"type": "object"}
	echo := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Params.Name + " " + string(req.Params.Arguments)}}}, nil
	}
	for _, name := range []string{"echo", "order", "notinslip"} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: obj}, echo)
	}
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct{ MS int }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		select {
		case <-time.After(time.Duration(a.MS) * time.Millisecond):
			return echo(ctx, req)
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	in := io.NopCloser(recordingStdin())
	if err := s.Run(context.Background(), &mcp.IOTransport{Reader: in, Writer: nopWriteCloser{os.Stdout}}); err != nil {
		fmt.Fprintln(os.Stderr, "test server:", err)
	}
}

// Hostile server behaviours, chosen by the tool's name in tools/call.
// answerTemplate lines hold ID where the request's id goes.
const (
	bigLine       = 16<<20 + 1 // one byte over the executor's line cap
	floodLines    = 8 << 10    // stderr lines of 1 KiB in a flood
	hostileExitAt = 7          // the code the "exit" tool exits with
)

// hostileAnswers are the exact lines the hostile server writes for the
// tools that answer with one fixed line (ID stands for the request's id).
var hostileAnswers = map[string]string{
	"echo":      `{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"echo"}],"big":9007199254740991,"f":1.50}}`,
	"bignum":    `{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"n"}],"n":9007199254740993}}`,
	"dupmember": `{"jsonrpc":"2.0","id":ID,"result":{"content":[],"a":1,"a":2}}`,
	"surrogate": `{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"\ud800"}]}}`,
	"badutf8":   "{\"jsonrpc\":\"2.0\",\"id\":ID,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\xff\xfe\"}]}}",
	"twice":     `{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"first"}]}}`,
	"twice2":    `{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"second"}]}}`,
	"flood":     `{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"after the flood"}]}}`,
	"huge":      `{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"after the huge line"}]}}`,
	"rpcerror":  `{"jsonrpc":"2.0","id":ID,"error":{"code":-32000,"message":"it broke","data":{"n":1.50,"big":9007199254740991}}}`,
}

// hostileNonMessages are the lines the "nonobject", "dupid" and "garbage"
// tools write instead of an answer: none is a message, so each is handed on
// to the client as it is and the call ends by its timeout.
var hostileNonMessages = map[string][]string{
	"nonobject": {`[{"jsonrpc":"2.0","id":ID,"result":{"content":[]}}]`, `"just a string"`, `42`},
	"dupid":     {`{"jsonrpc":"2.0","id":ID,"id":ID,"result":{"content":[]}}`},
	"garbage":   {`this is not json`, `{"jsonrpc":"2.0",`},
}

func fill(template string, id []byte) []byte {
	return bytes.ReplaceAll([]byte(template), []byte("ID"), id)
}

// runHostileServer answers by hand, byte for byte: initialize, tools/list,
// ping and other requests with {}, and tools/call as hostileAnswers,
// hostileNonMessages and the special tools (silent, slow, huge, twice, exit,
// flood) say.
// mustWrite ends the hostile server when a write to the executor fails:
// the executor has closed the pipe, and nothing more can be seen (on
// stdout the SIGPIPE would end it anyway).
func mustWrite(err error) {
	if err != nil {
		os.Exit(3)
	}
}

func runHostileServer() {
	in := bufio.NewReaderSize(recordingStdin(), 1<<20)
	var mu sync.Mutex
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	write := func(lines ...[]byte) {
		mu.Lock()
		defer mu.Unlock()
		for _, l := range lines {
			_, err := out.Write(l)
			mustWrite(err)
			mustWrite(out.WriteByte('\n'))
		}
		mustWrite(out.Flush())
	}
	var inFlight sync.WaitGroup
	for {
		line, err := in.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			inFlight.Wait() // answer what it holds before it exits, as a server may
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name      string          `json:"name"`
				Arguments json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(line, &m) != nil || m.ID == nil || m.Method == "" {
			continue
		}
		switch m.Method {
		case "initialize":
			write(fill(`{"jsonrpc":"2.0","id":ID,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}}`, m.ID))
		case "tools/list":
			write(fill(`{"jsonrpc":"2.0","id":ID,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"hidden","inputSchema":{"type":"object"}}]}}`, m.ID))
		case "tools/call":
			inFlight.Add(1)
			go func() {
				defer inFlight.Done()
				hostileCall(m.Params.Name, m.ID, m.Params.Arguments, write)
			}()
		default:
			write(fill(`{"jsonrpc":"2.0","id":ID,"result":{}}`, m.ID))
		}
	}
}

func hostileCall(name string, id, args json.RawMessage, write func(...[]byte)) {
	switch name {
	case "silent":
		return
	case "slow":
		var a struct{ MS int }
		_ = json.Unmarshal(args, &a)
		time.Sleep(time.Duration(a.MS) * time.Millisecond)
		write(fill(hostileAnswers["echo"], id))
	case "exit":
		os.Exit(hostileExitAt)
	case "huge":
		// A well-formed answer to this very call, one byte over the cap: it
		// must be dropped, and the next answer taken.
		head := fill(`{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"`, id)
		tail := []byte(`"}]}}`)
		huge := make([]byte, 0, bigLine)
		huge = append(huge, head...)
		huge = append(huge, bytes.Repeat([]byte("x"), bigLine-len(head)-len(tail))...)
		huge = append(huge, tail...)
		write(huge, fill(hostileAnswers["huge"], id))
	case "twice":
		write(fill(hostileAnswers["twice"], id), fill(hostileAnswers["twice2"], id))
	case "flood":
		w := bufio.NewWriterSize(os.Stderr, 1<<16)
		kib := strings.Repeat("e", 1023) + "\n"
		for i := 0; i < floodLines; i++ {
			_, err := w.WriteString(kib)
			mustWrite(err)
		}
		_, err := w.Write(bytes.Repeat([]byte("E"), bigLine)) // one stderr line of 16 MiB + 1
		mustWrite(err)
		_, err = w.WriteString("\n")
		mustWrite(err)
		mustWrite(w.Flush())
		write(fill(hostileAnswers["flood"], id))
	default:
		if lines, ok := hostileNonMessages[name]; ok {
			for _, l := range lines {
				write(fill(l, id))
			}
			return
		}
		t, ok := hostileAnswers[name]
		if !ok {
			t = hostileAnswers["echo"]
		}
		write(fill(t, id))
	}
}
