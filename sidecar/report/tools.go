package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/boot"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/glob"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/quota"
	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/upstream"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// ToolRow is one tool of one server beside the executor's decision, as
// `mcp-executor tools` prints it.
type ToolRow struct {
	Server      string          `json:"server,omitempty"` // "" with the single "server" form
	Name        string          `json:"name"`             // as the client sees it
	Annotations json.RawMessage `json:"annotations"`      // the server's, null when it gives none
	// Decision is the rule's: "allow", "approve", "refuse" or "unlisted".
	Decision string `json:"decision"`
	// Slip is what the slip says of the rule's action, for a rule that
	// lets calls on (allow, approve): "allows" (with its limits), "needs
	// approval", "not in slip" (the call is refused, not-in-slip), "never"
	// (its kind is forbidden), "outside valid time", "no slip" or "slip not
	// sound" (see ToolsResult.Slip); "" for a rule that refuses and for an
	// unlisted tool (the slip is not asked).
	Slip    string        `json:"slip"`
	Rule    string        `json:"rule,omitempty"` // "exact" or "glob:<pattern>"
	Action  string        `json:"action,omitempty"`
	Amount  string        `json:"amount,omitempty"`
	Quota   *quota.Limits `json:"quota,omitempty"`
	Warning string        `json:"warning,omitempty"`
}

// ServerFailure is a server that could not be started or listed.
type ServerFailure struct {
	Server string `json:"server"`
	Error  string `json:"error"`
}

// ToolsResult is what `tools` finds.
type ToolsResult struct {
	// Slip says which slip the verdicts read: its fingerprint and signer,
	// that there is none yet, or why it is not sound.
	Slip     string          `json:"slip"`
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
	sv := readSlipForTools(set, time.Now())
	res := &ToolsResult{Slip: sv.summary, Tools: []ToolRow{}, Failures: []ServerFailure{}}
	for _, name := range names {
		tools, err := listServer(ctx, set, name, log)
		if err != nil {
			res.Failures = append(res.Failures, ServerFailure{Server: name, Error: err.Error()})
			continue
		}
		for _, t := range tools {
			row := decide(set, rules, name, t)
			if row.Decision == "allow" || row.Decision == "approve" {
				row.Slip = sv.verdict(row.Action)
			}
			if row.Warning != "" && sv.slip != nil && !strings.HasPrefix(row.Slip, "allows") {
				// The slip does not let it through, or asks the person each time.
				row.Warning = ""
			}
			res.Tools = append(res.Tools, row)
		}
	}
	return res, nil
}

// slipView is the slip as `tools` reads it: a sound slip's terms, or why
// there are none to read.
type slipView struct {
	slip    *slip.Slip // nil: every verdict is none
	none    string     // the verdict without a sound slip: "no slip", "slip not sound"
	summary string
	now     time.Time
}

// readSlipForTools reads the settings' slip as a start checks it (signed
// by a passkey agent.issuerKeys names).
func readSlipForTools(set *settings.Settings, now time.Time) slipView {
	v, err := boot.ReadSlipFile(set.Agent.Slip)
	if errors.Is(err, fs.ErrNotExist) {
		return slipView{none: "no slip", now: now, summary: "none at " + set.Agent.Slip + " yet, and the executor does not start without one: " +
			"have the person sign it on the page (mcp-executor page)"}
	}
	if err != nil {
		return slipView{none: "slip not sound", now: now, summary: err.Error()}
	}
	sl, res := slip.Check(v, slip.Options{IssuerKeys: orEmpty(set.Agent.IssuerKeys)})
	switch {
	case sl == nil || !res.Sound() && len(res.Problems) == 0:
		why := "its signature could not be checked here (" + res.Signature.State + ")"
		if len(res.Problems) > 0 {
			why = res.Problems[0].Code + ": " + res.Problems[0].Message
		}
		return slipView{none: "slip not sound", now: now, summary: "slip " + set.Agent.Slip + " does not check, so every call would be refused: " + why}
	case !res.Sound():
		p := res.Problems[0]
		why := p.Code + ": " + p.Message
		switch {
		case p.Code == "issuer-not-expected" && len(set.Agent.IssuerKeys) == 0:
			why = "it is signed by passkey " + res.IssuerKey + ", and agent.issuerKeys names no passkey yet: put that thumbprint there if it is the person's"
		case p.Code == "issuer-not-expected":
			why = "it is signed by passkey " + res.IssuerKey + ", which agent.issuerKeys does not name"
		}
		return slipView{none: "slip not sound", now: now, summary: "slip " + sl.Fingerprint + " does not check, so every call would be refused: " + why}
	}
	return slipView{slip: sl, now: now, summary: fmt.Sprintf("slip %s signed by trusted passkey %s, valid %s to %s", sl.Fingerprint, res.IssuerKey,
		canon.FormatTime(sl.ValidFrom), canon.FormatTime(sl.ValidUntil))}
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// verdict is what the slip says of a call with action, as the check
// before acting reads it (the counts in the book aside).
func (v slipView) verdict(action string) string {
	sl := v.slip
	switch {
	case sl == nil:
		return v.none
	case !sl.Allows(action):
		return "not in slip"
	case sl.Forbids(action):
		return "never"
	case !sl.ValidAt(v.now):
		return "outside valid time"
	}
	var parts []string
	for _, r := range sl.Requires {
		if r.Need == "approval" && (r.Action == "" || r.Action == action) {
			if r.Above != nil {
				parts = append(parts, fmt.Sprintf("needs approval above %d %s", *r.Above, r.Unit))
			} else {
				parts = append(parts, "needs approval")
			}
		}
	}
	for _, l := range sl.Limits {
		if l.Action != action {
			continue
		}
		text := fmt.Sprintf("%s %d", l.Kind, l.Value)
		if l.Unit != "" {
			text += " " + l.Unit
		}
		if l.Per > 0 {
			text += fmt.Sprintf(" per %ds", l.Per)
		}
		parts = append(parts, text)
	}
	if len(parts) == 0 {
		return "allows"
	}
	if !strings.HasPrefix(parts[0], "needs") {
		parts[0] = "allows, " + parts[0]
	}
	return strings.Join(parts, ", ")
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
	last := &lastBytes{limit: 4096}
	up, err := upstream.Start(ctx, set, name, last, log)
	if err != nil {
		return nil, err
	}
	defer func() { _ = up.Stop(context.WithoutCancel(ctx)) }()
	tools, err := listTools(ctx, up)
	if err != nil {
		// A server that ended (its output closes first): what it said
		// last says why (a module not found, a flag it does not know).
		select {
		case <-up.Done():
			code, _ := up.Wait()
			err = fmt.Errorf("%w: the server ended (exit code %d)%s", err, code, last.said())
		case <-time.After(2 * time.Second):
		}
	}
	return tools, err
}

// listTools initializes a started server and reads every page of its
// tools/list.
func listTools(ctx context.Context, up upstream.Server) ([]listedTool, error) {
	c := &rpc{up: up, answers: make(chan *wire.Message, 16)}
	go c.read(up.Output())
	if _, err := c.call(ctx, "initialize", `{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"mcp-executor tools","version":"1"}}`); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if err := c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
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
	up      upstream.Server
	next    int
	answers chan *wire.Message
}

// send hands the server one line of the client's own, with its reading.
func (c *rpc) send(line string) error {
	m, err := wire.Inspect([]byte(line))
	if err != nil {
		return err
	}
	return c.up.Send([]byte(line), m)
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
	if err := c.send(line); err != nil {
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
	fmt.Fprintf(&b, "slip: %s\n", r.Slip)
	fmt.Fprintf(&b, "%-32s %-9s %-18s %-20s %-22s %s\n", "tool", "rule", "slip", "decided by", "action", "amount, quota, the server's hints")
	for _, t := range r.Tools {
		q := ""
		if t.Quota != nil {
			q = quotaText(*t.Quota)
		}
		rest := strings.Join(nonEmpty(redact.Printable(t.Amount), q, hints(t.Annotations)), " ")
		fmt.Fprintf(&b, "%-32s %-9s %-18s %-20s %-22s %s\n", redact.Printable(t.Name), t.Decision, orDash(redact.Printable(t.Slip)),
			orDash(redact.Printable(t.Rule)), orDash(redact.Printable(t.Action)), rest)
	}
	for _, t := range r.Tools {
		if t.Warning != "" {
			fmt.Fprintf(&b, "warning: %s: %s\n", redact.Printable(t.Name), t.Warning)
		}
	}
	for _, f := range r.Failures {
		which := "the tool server"
		if f.Server != "" {
			which = "tool server " + redact.Printable(f.Server)
		}
		fmt.Fprintf(&b, "error: %s could not be listed: %s\n", which, redact.Printable(f.Error))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func nonEmpty(parts ...string) []string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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

var errorLineRE = regexp.MustCompile(`(?i)\berror\b|\bfatal\b|\bcannot\b|\bnot found\b`)

// lastBytes keeps the last limit bytes written to it: the end of a tool
// server's standard error.
type lastBytes struct {
	mu    sync.Mutex
	limit int
	b     []byte
}

func (l *lastBytes) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	if over := len(l.b) - l.limit; over > 0 {
		l.b = append(l.b[:0], l.b[over:]...)
	}
	return len(p), nil
}

// said is the last lines of what was written, on one line, cut to show.
func (l *lastBytes) said() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var lines, errLines []string
	for _, line := range strings.Split(string(l.b), "\n") {
		if line = strings.TrimSpace(strings.TrimPrefix(line, "[server]")); line != "" {
			lines = append(lines, line)
			if errorLineRE.MatchString(line) {
				errLines = append(errLines, line)
			}
		}
	}
	// The lines that say "error" say why; else the last two.
	if len(errLines) > 0 {
		lines = errLines[:min(len(errLines), 2)]
	} else if len(lines) > 2 {
		lines = lines[len(lines)-2:]
	}
	text := strings.Join(lines, " | ")
	if text == "" {
		return ", saying nothing on its standard error"
	}
	// A server's bytes: no control character reaches the terminal.
	text = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, strings.ToValidUTF8(text, "?"))
	return "; the end of its standard error: " + wire.Cut(text)
}
