// Package demo holds the self-contained demonstration: a small built-in tool server and a scripted
// session through the executor, set up with development keys and a slip signed by the development
// passkey. Its records prove nothing about anyone.
package demo

import (
	"context"
	"fmt"
	"io"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OrderArgs are the arguments of the demo's order_supplies tool.
type OrderArgs struct {
	Item  string `json:"item" jsonschema:"what to order"`
	Total int64  `json:"total" jsonschema:"the order's total, in whole pounds"`
}

// ReadArgs are the arguments of the demo's read_catalogue tool.
type ReadArgs struct {
	Section string `json:"section,omitempty" jsonschema:"the catalogue section to read"`
}

// EmailArgs are the arguments of the demo's email_supplier tool, which waits for a person's approval.
type EmailArgs struct {
	Text string `json:"text" jsonschema:"the message"`
}

// WipeArgs are the arguments of the demo's wipe_records tool, which the demo's rules leave unlisted.
type WipeArgs struct {
	Confirm bool `json:"confirm" jsonschema:"must be true"`
}

// NewToolServer returns the demo's tool server: an invented stationery supplier with four tools.
func NewToolServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcp-executor-demo-supplier", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "read_catalogue", Description: "Read the supplier's catalogue (invented)."},
		func(_ context.Context, _ *mcp.CallToolRequest, a ReadArgs) (*mcp.CallToolResult, any, error) {
			section := a.Section
			if section == "" {
				section = "paper"
			}
			return text(fmt.Sprintf("catalogue %s: A4 paper £4 a ream; envelopes £2 a box", section)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "order_supplies", Description: "Place an order with the supplier (invented)."},
		func(_ context.Context, _ *mcp.CallToolRequest, a OrderArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprintf("ordered %s for £%d (nothing was really ordered)", a.Item, a.Total)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "email_supplier", Description: "Email the supplier (invented)."},
		func(_ context.Context, _ *mcp.CallToolRequest, a EmailArgs) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprintf("emailed the supplier %d characters (nothing was really sent)", len(a.Text))), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "wipe_records", Description: "Delete every record (the demo's rules never allow it)."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ WipeArgs) (*mcp.CallToolResult, any, error) {
			return text("records wiped (this must never be reached in the demo)"), nil, nil
		})
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// ServeTools runs the demo tool server over in and out until the client closes its side.
func ServeTools(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	if err := NewToolServer().Run(ctx, &mcp.IOTransport{Reader: in, Writer: out}); err != nil {
		return fmt.Errorf("demo tool server: %w", err)
	}
	return nil
}
