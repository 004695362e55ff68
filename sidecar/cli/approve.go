package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"strings"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

func init() {
	extraCommands["approve"] = command{
		summary: "answer the calls waiting for a person's approval in the queue folder",
		run:     runApprove,
	}
}

// approveItem is one waiting request as `approve --json` prints it.
type approveItem struct {
	approval.File
	Sentence string `json:"sentence"`
}

// approveOutcome is what `approve --id … --json` prints.
type approveOutcome struct {
	ID       string `json:"id"`
	Approved bool   `json:"approved"`
	Tool     string `json:"tool"`
	Action   string `json:"action"`
}

// runApprove is `mcp-executor approve --config FILE [--once] [--id ID --yes|--no] [--json]`: it lists
// the requests waiting in the queue folder (settings approvals.queue) and asks y/n for each on standard
// input; --once answers one and exits; --id answers one without asking; --json prints JSON (the list,
// answering nothing, or the answer given with --id).
func runApprove(ctx context.Context, env Env, args []string) int {
	if wantsKubernetes(args) {
		return runApproveKubernetes(ctx, env, args)
	}
	fs := newFlags(env, "approve", "--config FILE [--once] [--id ID --yes|--no] [--json]")
	config := fs.String("config", "", "the executor's settings `file` (JSON); its approvals.queue is the folder read")
	once := fs.Bool("once", false, "answer one waiting request, then exit")
	id := fs.String("id", "", "answer the request with this `id` without asking (with --yes or --no)")
	yes := fs.Bool("yes", false, "with --id: approve")
	no := fs.Bool("no", false, "with --id: decline")
	asJSON := fs.Bool("json", false, "print JSON: the waiting requests (answering none), or the answer given with --id")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	if usage := approveUsageFault(*config, *id, *yes, *no, *once, fs.NArg()); usage != "" {
		fmt.Fprintln(env.Stderr, "mcp-executor approve: "+usage)
		if *config == "" || fs.NArg() != 0 {
			fs.Usage()
		}
		return ExitUsage
	}
	s, _, err := settings.Load(*config)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor approve: %v\n", err)
		return ExitFinding
	}
	dir := s.Approvals.Queue
	if *id != "" {
		return approveByID(env, dir, *id, *yes, *asJSON)
	}

	files, skipped, err := approval.Waiting(dir, time.Now())
	if errors.Is(err, iofs.ErrNotExist) {
		// No executor has started with these settings yet: it makes the
		// folder. Nothing waits.
		files, skipped, err = nil, nil, nil
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor approve: %v\n", err)
		return ExitFinding
	}
	for _, name := range skipped {
		fmt.Fprintf(env.Stderr, "mcp-executor approve: %s in %s is not a request file; left alone\n", shown(name), dir)
	}
	if *asJSON {
		items := make([]approveItem, 0, len(files))
		for _, f := range files {
			items = append(items, approveItem{File: f, Sentence: approval.Sentence(f.Tool, f.Action, f.Amount, f.Arguments)})
		}
		if err := writeShownJSON(env.Stdout, map[string]any{"queue": dir, "waiting": items}); err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor approve: %v\n", err)
			return ExitFinding
		}
		return ExitOK
	}
	if len(files) == 0 {
		fmt.Fprintf(env.Stdout, "nothing waits for approval in %s\n", dir)
		return ExitOK
	}
	return askEach(env, dir, files, *once)
}

// approveUsageFault names what is wrong with approve's flags, or returns "".
func approveUsageFault(config, id string, yes, no, once bool, nargs int) string {
	if config == "" || nargs != 0 {
		return "--config FILE is required"
	}
	return answerFlagsFault(id, yes, no, once)
}

// answerFlagsFault names what is wrong with how approve's --id, --yes, --no
// and --once are given together (queue folder or Kubernetes), or returns "".
func answerFlagsFault(id string, yes, no, once bool) string {
	switch {
	case id == "" && (yes || no):
		return "--yes and --no answer the request named by --id"
	case id != "" && yes == no:
		return "--id needs exactly one of --yes and --no"
	case id != "" && once:
		return "--once asks about the first waiting request; --id names one"
	}
	return ""
}

// approveByID answers the request id without asking (approve --id).
func approveByID(env Env, dir, id string, yes, asJSON bool) int {
	f, err := approval.AnswerFile(dir, id, yes, time.Now())
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor approve: %s\n", shown(err.Error()))
		return ExitFinding
	}
	if !asJSON {
		fmt.Fprintf(env.Stdout, "%s request %s (tool %s)\n", answered(yes), shown(f.ID), shown(fmt.Sprintf("%q", f.Tool)))
		return ExitOK
	}
	if err := writeShownJSON(env.Stdout, approveOutcome{ID: f.ID, Approved: yes, Tool: f.Tool, Action: f.Action}); err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor approve: %v\n", err)
		return ExitFinding
	}
	return ExitOK
}

// answerStep is what one line of standard input says of a request.
type answerStep int

const (
	inputEnded  answerStep = iota // no more answers: the rest still wait
	notAnswered                   // neither y nor n: the request still waits
	saidYes
	saidNo
)

// readAnswer reads one y/n line from in for request id, and says on
// standard output when there is no answer.
func readAnswer(env Env, in *bufio.Reader, id string) answerStep {
	line, err := in.ReadString('\n')
	if err != nil && (!errors.Is(err, io.EOF) || line == "") {
		fmt.Fprintln(env.Stdout)
		fmt.Fprintln(env.Stdout, "no more answers on standard input; the rest still wait")
		return inputEnded
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return saidYes
	case "n", "no":
		return saidNo
	default:
		fmt.Fprintf(env.Stdout, "not answered (type y or n): request %s still waits\n", shown(id))
		return notAnswered
	}
}

// askEach asks y/n on standard input for each waiting request in files,
// answering it in the queue folder dir; with once it stops after the first.
func askEach(env Env, dir string, files []approval.File, once bool) int {
	return askInTurn(env, len(files), once, func(i int) string {
		f := files[i]
		fmt.Fprintf(env.Stdout, "request %s, expires %s\n  %s\napprove? [y/n] ", shown(f.ID), shown(f.ExpiresAt),
			shown(approval.Sentence(f.Tool, f.Action, f.Amount, f.Arguments)))
		return f.ID
	}, func(i int, approved bool) bool {
		if _, err := approval.AnswerFile(dir, files[i].ID, approved, time.Now()); err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor approve: %s\n", shown(err.Error()))
			return false
		}
		fmt.Fprintf(env.Stdout, "%s request %s\n", answered(approved), shown(files[i].ID))
		return true
	})
}

// askInTurn asks y/n on standard input for n requests in turn: ask writes
// the question about request i and returns its id, answer gives the answer
// (false: it failed, and said so on standard error). With once it stops
// after the first.
func askInTurn(env Env, n int, once bool, ask func(i int) string, answer func(i int, approved bool) bool) int {
	in := bufio.NewReader(env.Stdin)
	for i := range n {
		step := readAnswer(env, in, ask(i))
		if step == inputEnded {
			return ExitOK
		}
		if step != notAnswered && !answer(i, step == saidYes) {
			return ExitFinding
		}
		if once {
			return ExitOK
		}
	}
	return ExitOK
}

func answered(yes bool) string {
	if yes {
		return "approved"
	}
	return "declined"
}
