package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/glob"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/quota"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// ToolRow is one tool of one server beside the executor's decision, as
// `mcp-executor tools` prints it.
type ToolRow struct {
	Server      string          `json:"server,omitempty"` // "" with the single "server" form
	Name        string          `json:"name"`             // as the client sees it
	Annotations json.RawMessage `json:"annotations"`      // the server's, null when it gives none
	// Decision is "allow", "approve", "refuse" or "unlisted".
	Decision string        `json:"decision"`
	Rule     string        `json:"rule,omitempty"` // "exact" or "glob:<pattern>"
	Action   string        `json:"action,omitempty"`
	Amount   string        `json:"amount,omitempty"`
	Quota    *quota.Limits `json:"quota,omitempty"`
	Warning  string        `json:"warning,omitempty"`
}

// ServerFailure is a server that could not be started or listed.
type ServerFailure struct {
	Server string `json:"server"`
	Error  string `json:"error"`
}

// ToolsResult is what `tools` finds.
type ToolsResult struct {
	Tools    []ToolRow       `json:"tools"`
	Failures []ServerFailure `json:"failures"`
}

// listTimeout bounds the start and listing of one server.
const listTimeout = 60 * time.Second

// Tools starts every tool server of the settings, lists its tools (every
// page) and puts the executor's decision beside each.
func Tools(ctx context.Context, configPath string, log *slog.Logger) (*ToolsResult, error) {
	set, _, err := settings.Load(configPath)
	if err != nil {
		return nil, err
	}
	rules, err := glob.NewRules(set.ToolOrder)
	if err != nil {
		return nil, fmt.Errorf("settings: tools: %w", err)
	}
	names := set.ServerOrder
	if set.Servers == nil {
		names = []string{""}
	}
	res := &ToolsResult{Tools: []ToolRow{}, Failures: []ServerFailure{}}
	for _, name := range names {
		tools, err := listServer(ctx, set, name, log)
		if err != nil {
			res.Failures = append(res.Failures, ServerFailure{Server: name, Error: err.Error()})
			continue
		}
		for _, t := range tools {
			res.Tools = append(res.Tools, decide(set, rules, name, t))
		}
	}
	return res, nil
}

type listedTool struct {
	Name        string          `json:"name"`
	Annotations json.RawMessage `json:"annotations"`
}

func decide(set *settings.Settings, rules *glob.Rules, server string, t listedTool) ToolRow {
	row := ToolRow{Server: server, Name: set.Qualified(server, t.Name), Annotations: t.Annotations, Decision: "unlisted"}
	if len(row.Annotations) == 0 {
		row.Annotations = json.RawMessage("null")
	}
	d, ok := rules.Resolve(row.Name)
	if !ok {
		return row
	}
	rule := set.Tools[d.Pattern]
	row.Rule, row.Action, row.Quota = d.Label(), rule.Action, rule.Quota
	if rule.Amount != nil {
		row.Amount = amountText(rule.Amount)
	}
	switch {
	case rule.Refuse:
		row.Decision = "refuse"
	case rule.Approve != nil:
		row.Decision = "approve"
	default:
		row.Decision = "allow"
		if destructive(t.Annotations) {
			row.Warning = "a destructive tool allowed without a person's approval"
		}
	}
	return row
}

func amountText(a *settings.Amount) string {
	switch a.Kind {
	case settings.AmountFixed:
		return fmt.Sprintf("%d %s", a.Value, a.Unit)
	default:
		return fmt.Sprintf("%s of %s (%s)", a.Kind, a.Pointer, a.Unit)
	}
}

// destructive reads the MCP annotations: destructiveHint, whose default is
// true for a tool that is not readOnlyHint.
func destructive(ann json.RawMessage) bool {
	var a struct {
		ReadOnly    *bool `json:"readOnlyHint"`
		Destructive *bool `json:"destructiveHint"`
	}
	_ = json.Unmarshal(ann, &a)
	if a.ReadOnly != nil && *a.ReadOnly {
		return false
	}
	return a.Destructive == nil || *a.Destructive
}

// listServer starts one server, initializes it and reads every page of its
// tools/list.
func listServer(ctx context.Context, set *settings.Settings, name string, log *slog.Logger) ([]listedTool, error) {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	up, err := sidecar.StartUpstream(ctx, set, name, io.Discard, log)
	if err != nil {
		return nil, err
	}
	defer func() { _ = up.Stop(context.WithoutCancel(ctx)) }()
	c := &rpc{w: wire.NewWriter(up.Input()), answers: make(chan *wire.Message, 16)}
	go c.read(up.Output())
	if _, err := c.call(ctx, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcp-executor tools","version":"1"}}`); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.w.WriteLine([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		return nil, err
	}
	var all []listedTool
	cursor := ""
	for page := 0; page < 100; page++ {
		params := `{}`
		if cursor != "" {
			b, _ := json.Marshal(map[string]string{"cursor": cursor})
			params = string(b)
		}
		result, err := c.call(ctx, "tools/list", params)
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		var r struct {
			Tools      []listedTool `json:"tools"`
			NextCursor string       `json:"nextCursor"`
		}
		if err := json.Unmarshal(result, &r); err != nil {
			return nil, fmt.Errorf("tools/list: the result cannot be read: %w", err)
		}
		all = append(all, r.Tools...)
		if r.NextCursor == "" {
			return all, nil
		}
		cursor = r.NextCursor
	}
	return all, nil
}

// rpc is a small JSON-RPC client over a server's lines, one call at a time.
type rpc struct {
	w       *wire.Writer
	next    int
	answers chan *wire.Message
}

func (c *rpc) read(r io.Reader) {
	defer close(c.answers)
	rd := wire.NewReader(r)
	for {
		line, err := rd.ReadLine()
		if err != nil {
			return
		}
		m, err := wire.Inspect(line)
		if err == nil && m.Kind == wire.KindResponse {
			c.answers <- m
		}
	}
}

func (c *rpc) call(ctx context.Context, method, params string) ([]byte, error) {
	c.next++
	id := fmt.Sprintf(`"tools-%d"`, c.next)
	line := `{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`
	if err := c.w.WriteLine([]byte(line)); err != nil {
		return nil, err
	}
	for {
		select {
		case m, ok := <-c.answers:
			if !ok {
				return nil, errors.New("the server's output ended")
			}
			if string(m.ID) != id {
				continue
			}
			if m.Error != nil {
				return nil, fmt.Errorf("the server answered an error: %s", wire.Cut(string(m.Error)))
			}
			return m.Result, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("no answer within %s", listTimeout)
		}
	}
}

// WriteText prints the tools as a table for people, warnings after. What
// a server or the settings name is printed with its control characters
// escaped ([redact.Printable]): a server's name or error cannot move the
// cursor, ring the bell or turn the text around.
func (r *ToolsResult) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, t := range r.Tools {
		q := ""
		if t.Quota != nil {
			q = quotaText(*t.Quota)
		}
		fmt.Fprintf(&b, "%-40s %-9s %-28s %-24s %s %s %s\n", redact.Printable(t.Name), t.Decision, redact.Printable(t.Rule),
			redact.Printable(t.Action), redact.Printable(t.Amount), q, hints(t.Annotations))
	}
	for _, t := range r.Tools {
		if t.Warning != "" {
			fmt.Fprintf(&b, "warning: %s: %s\n", redact.Printable(t.Name), t.Warning)
		}
	}
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "error: tool server %s could not be listed: %s\n", redact.Printable(f.Server), redact.Printable(f.Error))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func quotaText(l quota.Limits) string {
	var parts []string
	for _, p := range []struct {
		n   int
		per string
	}{{l.PerRun, "run"}, {l.PerMinute, "minute"}, {l.PerHour, "hour"}, {l.PerDay, "day"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d/%s", p.n, p.per))
		}
	}
	return "quota " + strings.Join(parts, ",")
}

func hints(ann json.RawMessage) string {
	var a map[string]any
	_ = json.Unmarshal(ann, &a)
	var out []string
	for _, k := range []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
		if v, ok := a[k].(bool); ok {
			out = append(out, fmt.Sprintf("%s=%v", strings.TrimSuffix(k, "Hint"), v))
		}
	}
	return strings.Join(out, " ")
}
