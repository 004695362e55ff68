package sidecar_test

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runEndingServer is a test server that ends its side oddly at the first
// tools/call: "closeout" closes its output and goes on running until its
// input ends; "orphan" starts a process that holds its output open
// ("sleeper") and exits with code 4. Each gives up after a minute so that
// nothing is left behind when the executor fails to end it.
func runEndingServer(kind string) {
	if kind == "sleeper" {
		time.Sleep(time.Minute)
		return
	}
	if kind == "closein" {
		// After its first line it takes no more input, says so, and keeps
		// its output open.
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // a line or the end: either way no more is taken
		os.Stdin.Close()
		if _, err := os.Stdout.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"input closed"}}` + "\n"); err != nil {
			os.Exit(3)
		}
		time.Sleep(time.Minute)
		return
	}
	go func() {
		time.Sleep(time.Minute)
		os.Exit(9)
	}()
	in := bufio.NewReader(recordingStdin())
	for {
		line, err := in.ReadString('\n')
		if err != nil {
			os.Exit(0)
		}
		if !strings.Contains(line, `"tools/call"`) {
			continue
		}
		switch kind {
		case "closeout":
			os.Stdout.Close()
		case "orphan":
			self, err := os.Executable()
			if err != nil {
				os.Exit(2)
			}
			cmd := exec.Command(self)
			cmd.Env = append(os.Environ(), testServerEnv+"=sleeper")
			cmd.Stdout = os.Stdout
			if err := cmd.Start(); err != nil {
				os.Exit(2)
			}
			os.Exit(4)
		}
	}
}

// A tool server that ends its side at a call while the call is with it:
// the call gets its stub and error 1002, and the executor ends with the
// server, whether the server closed its output and still runs (it is
// stopped), or exited while a process it started holds its output open
// (what is left of its process group is ended).
func TestServerEndsItsSideMidCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		kind string
		code int // the executor's exit code; -1: any
	}{
		{"closeout", -1},
		{"orphan", 4},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			o := baseOptions()
			o.Settings = map[string]any{"timeout": 120000, "shutdownWait": 100}
			h := startWith(t, tc.kind, o)
			h.send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
			got := h.recv()
			if !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":7,"error":{"code":1002,"message":"no answer: the tool server ended"`) {
				t.Errorf("answer %s", got)
			}
			if code := h.exitCode(); tc.code >= 0 && code != tc.code {
				t.Errorf("the executor exited with %d, want %d", code, tc.code)
			}
			h.checkBook()
			stubs := entriesOf(readBook(t, h.env.BookPath), "stub")
			if len(stubs) != 1 {
				t.Fatalf("%d stubs", len(stubs))
			}
			if d := detailsOf(stubs[0].Content); d["provared.error"] != fp("no answer: the tool server ended") {
				t.Errorf("stub details %v", d)
			}
		})
	}
}
