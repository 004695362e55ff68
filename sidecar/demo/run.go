package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
)

// Disclaimer is printed by the demo and names why its records count for nothing.
const Disclaimer = "These records prove nothing about anyone: the slip was signed by a development passkey " +
	"(a software stand-in made for this run), not by a person."

// Setup builds the demo's working folder in dir: development key sets, the copy key, a slip signed by the
// development passkey that allows reading the catalogue and ordering supplies up to £50 in all (with a
// countersignature required), and settings that start the built-in tool server as `exe demo-server`.
// wipe_records has no rule, so it is unlisted.
func Setup(dir, exe string) (*devsetup.Env, error) {
	env, err := devsetup.Build(devsetup.Options{
		Dir:     dir,
		Command: exe,
		Args:    []string{"demo-server"},
		Name:    "demo executor",
		// Invented names: the development passkey stands in for no one.
		Person:    "Demo Person (invented)",
		AgentName: "demo agent",
		Purpose:   "demonstrating mcp-executor with development keys; proves nothing about anyone",
		Tools: map[string]devsetup.Tool{
			"read_catalogue": {Action: "provared.data.read"},
			"order_supplies": {Action: "supplies.order", Amount: map[string]any{"unit": "GBP", "pointer": "/total"}},
		},
		Limits: []map[string]any{{"action": "supplies.order", "max": int64(50), "unit": "GBP"}},
	})
	if err != nil {
		return nil, fmt.Errorf("setting up the demo in %s: %w", dir, err)
	}
	return env, nil
}

// Step is one scripted call and what must come of it.
type Step struct {
	Say     string         // what the step shows
	Tool    string         // the tool called
	Args    map[string]any // its arguments
	Refused bool           // whether the executor must refuse it
	Reason  string         // for a refusal: the red.prova/refused reason expected in _meta
}

// Script is the demo's session: two allowed calls, one over the slip's limit, one unlisted tool.
var Script = []Step{
	{Say: "read the catalogue (allowed)", Tool: "read_catalogue", Args: map[string]any{"section": "paper"}},
	{Say: "order paper for £30 (allowed: within the £50 limit)", Tool: "order_supplies", Args: map[string]any{"item": "paper", "total": 30}},
	{Say: "order envelopes for £40 (refused: £70 in all is over the £50 limit)", Tool: "order_supplies",
		Args: map[string]any{"item": "envelopes", "total": 40}, Refused: true, Reason: "over-limit"},
	{Say: "wipe the records (refused: no rule names this tool)", Tool: "wipe_records",
		Args: map[string]any{"confirm": true}, Refused: true, Reason: "unlisted"},
}

// RunSession starts `exe stdio --config settings` as a real child process, speaks to it with the MCP Go
// SDK's client and plays Script, writing what happens to w. It returns an error naming every expectation
// that failed.
func RunSession(ctx context.Context, exe, settingsPath string, stderr io.Writer, w io.Writer) (err error) {
	cmd := exec.Command(exe, "stdio", "--config", settingsPath)
	cmd.Stderr = stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-executor-demo-agent", Version: "1"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return fmt.Errorf("starting the executor: %w", err)
	}
	// Closing ends the executor's input and waits for it to exit: a failure there is the demo's too.
	defer func() {
		if cerr := session.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("closing the session with the executor: %w", cerr)
		}
	}()

	var failures []string
	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("listing tools through the executor: %w", err)
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	fmt.Fprintf(w, "tools the agent sees: %s\n", strings.Join(names, ", "))
	if slices.Contains(names, "wipe_records") {
		failures = append(failures, "tools/list still shows the unlisted wipe_records")
	}

	for i, st := range Script {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: st.Tool, Arguments: st.Args})
		if err != nil {
			failures = append(failures, fmt.Sprintf("step %d (%s): %v", i+1, st.Tool, err))
			fmt.Fprintf(w, "%d. %s\n   error: %v\n", i+1, st.Say, err)
			continue
		}
		text := resultText(res)
		fmt.Fprintf(w, "%d. %s\n   -> %s\n", i+1, st.Say, text)
		switch {
		case st.Refused && !res.IsError:
			failures = append(failures, fmt.Sprintf("step %d (%s): expected a refusal, the call went through", i+1, st.Tool))
		case st.Refused && !strings.HasPrefix(text, "Not taken by the executor:"):
			failures = append(failures, fmt.Sprintf("step %d (%s): refusal text %q", i+1, st.Tool, text))
		case st.Refused && !strings.Contains(fmt.Sprint(res.Meta["red.prova/refused"]), st.Reason):
			failures = append(failures, fmt.Sprintf("step %d (%s): refused for %v, expected %s", i+1, st.Tool, res.Meta["red.prova/refused"], st.Reason))
		case !st.Refused && res.IsError:
			failures = append(failures, fmt.Sprintf("step %d (%s): expected the call to go through, got %q", i+1, st.Tool, text))
		}
	}
	if err := session.Close(); err != nil && !errors.Is(err, context.Canceled) {
		failures = append(failures, fmt.Sprintf("closing the session: %v", err))
	}
	if len(failures) > 0 {
		return fmt.Errorf("the demo's expectations failed:\n  %s", strings.Join(failures, "\n  "))
	}
	return nil
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}
