package copylog_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed-6e06167c/mcp-executor/copylog"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// A call is sent and the executor stops before its receipt is written; the
// next start finds it unfinished, and compare against a book without its
// receipt says so.
func Example() {
	dir, _ := os.MkdirTemp("", "copylog-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "copy.jsonl")
	key := bytes.Repeat([]byte{7}, copylog.KeySize) // in use: 32 random bytes from the key source
	const name = "executor for the files server"

	log, err := copylog.Open(path, key, name)
	if err != nil {
		fmt.Println(err)
		return
	}
	call := "provared-1-x7Q"
	err = log.Append(
		copylog.Line{Kind: copylog.KindStart},
		copylog.Line{Kind: copylog.KindSent, Call: call, Tool: "read_file", Action: "provared.data.read",
			Slip: canon.Fingerprint([]byte("slip")), RequestID: call,
			Details: []record.Detail{{Name: "executor.call", SHA256: canon.Fingerprint([]byte(call))}}},
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	log.Close() // the executor stops here

	log, err = copylog.Open(path, key, name)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer log.Close()
	for _, u := range log.Unfinished() {
		fmt.Println("unfinished:", u.Sent.Call, "outcome known:", u.Outcome != nil)
	}
	lines, err := copylog.ReadFile(path, key, name) // compare reads the copy beside the executor
	if err != nil {
		fmt.Println(err)
		return
	}
	report := copylog.Compare(lines, copylog.BookView{Intact: true})
	fmt.Println(report.Summary())
	// Output:
	// unfinished: provared-1-x7Q outcome known: false
	// compare: FAIL 1 call, 0 match, 1 sent without receipt; copy ok; book intact
}
