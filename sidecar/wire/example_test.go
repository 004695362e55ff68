package wire_test

import (
	"fmt"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// A client's request goes to the server under the executor's own id, with
// the call id added to _meta; every other byte is kept.
func Example() {
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"order","arguments":{"total":12.0}}}`)
	m, err := wire.Inspect(line)
	if err != nil {
		fmt.Println(err)
		return
	}
	total, _, _ := wire.Pointer(m.Params, "/arguments/total")
	n, _ := wire.WholeNumber(total)
	fmt.Println(m.Kind, m.Method, string(m.ID), n)

	out := wire.SpliceID(line, m.IDSpan, []byte(`"provared-1-x"`))
	m2, _ := wire.Inspect(out)
	out, _ = wire.SetMeta(out, m2.ParamsSpan, wire.MetaCallID, "provared-1-x")
	fmt.Println(string(out))
	// Output:
	// request tools/call 7 12
	// {"jsonrpc":"2.0","id":"provared-1-x","method":"tools/call","params":{"_meta":{"red.prova/call-id":"provared-1-x"},"name":"order","arguments":{"total":12.0}}}
}
