package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-6e06167c/mcp-executor/internal/devsetup"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
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
			// Every message to the supplier waits for a person's yes or no.
			"email_supplier": {Action: "provared.message.send", Approve: map[string]any{"timeout": 60000}},
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
	// Answer, for a call held for approval: the demo answers its request
	// file in the queue folder (yes or no), as a person at a second terminal
	// running `mcp-executor approve` would.
	Answer *bool
}

// Script is the demo's session: two allowed calls, one over the slip's limit, one unlisted tool, and two
// calls held for a person's approval: one approved, one declined.
var Script = []Step{
	{Say: "read the catalogue (allowed)", Tool: "read_catalogue", Args: map[string]any{"section": "paper"}},
	{Say: "order paper for £30 (allowed: within the £50 limit)", Tool: "order_supplies", Args: map[string]any{"item": "paper", "total": 30}},
	{Say: "order envelopes for £40 (refused: £70 in all is over the £50 limit)", Tool: "order_supplies",
		Args: map[string]any{"item": "envelopes", "total": 40}, Refused: true, Reason: "over-limit"},
	{Say: "wipe the records (refused: no rule names this tool)", Tool: "wipe_records",
		Args: map[string]any{"confirm": true}, Refused: true, Reason: "unlisted"},
	{Say: "email the supplier to confirm the order (held for a person; approved through the queue)", Tool: "email_supplier",
		Args: map[string]any{"text": "Please confirm the paper order."}, Answer: &yes},
	{Say: "email the supplier to cancel everything (held for a person; declined through the queue)", Tool: "email_supplier",
		Args: map[string]any{"text": "Cancel every order."}, Answer: &no, Refused: true, Reason: "approval-declined"},
}

var yes, no = true, false

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

	queue := filepath.Join(filepath.Dir(settingsPath), "approvals")
	for i, st := range Script {
		answered := make(chan error, 1)
		if st.Answer != nil {
			go func() { answered <- answerLikeASecondTerminal(ctx, settingsPath, queue, *st.Answer, w) }()
		} else {
			answered <- nil
		}
		fmt.Fprintf(w, "%d. %s\n", i+1, st.Say)
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: st.Tool, Arguments: st.Args})
		if aerr := <-answered; aerr != nil {
			failures = append(failures, fmt.Sprintf("step %d (%s): %v", i+1, st.Tool, aerr))
		}
		if err != nil {
			failures = append(failures, fmt.Sprintf("step %d (%s): %v", i+1, st.Tool, err))
			fmt.Fprintf(w, "   error: %v\n", err)
			continue
		}
		text := resultText(res)
		fmt.Fprintf(w, "   -> %s\n", text)
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

// answerLikeASecondTerminal waits (at most a minute) for the one request
// file in the queue folder and answers it, saying so.
func answerLikeASecondTerminal(ctx context.Context, settingsPath, queue string, approve bool, w io.Writer) error {
	deadline := time.Now().Add(time.Minute)
	for {
		files, _, err := approval.Waiting(queue, time.Now())
		if err == nil && len(files) > 0 {
			f := files[0]
			flag := "--yes"
			if !approve {
				flag = "--no"
			}
			fmt.Fprintf(w, "   (the call waits for a person: request %s in %s.\n    The demo answers it as a second terminal would: mcp-executor approve --config %s --id %s %s)\n", f.ID, queue, settingsPath, f.ID, flag)
			if _, err := approval.AnswerFile(queue, f.ID, approve, time.Now()); err != nil {
				return fmt.Errorf("answering request %s: %w", f.ID, err)
			}
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return errors.New("no request for approval appeared in the queue folder " + queue)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
