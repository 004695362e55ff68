package cli

import (
	"context"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/seed-6e06167c/mcp-executor/sidecar/approvalkube"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// wantsKubernetes reports whether approve's arguments hold --kubernetes (the ApprovalRequests in a
// cluster rather than the queue folder).
func wantsKubernetes(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--kubernetes" || a == "-kubernetes" || a == "--kubernetes=true" || a == "-kubernetes=true" {
			return true
		}
	}
	return false
}

// runApproveKubernetes is `mcp-executor approve --kubernetes [--namespace NS | --config FILE]
// [--kubeconfig FILE] [--once] [--id ID --yes|--no] [--reason TEXT] [--json]`: it lists the
// ApprovalRequests nobody has answered and asks y/n for each, or answers the one --id names, as the
// user of the kubeconfig (KUBECONFIG or ~/.kube/config by default), whose name the answer carries.
func runApproveKubernetes(ctx context.Context, env Env, args []string) int {
	fs := newFlags(env, "approve", "--kubernetes [--namespace NS | --config FILE] [--kubeconfig FILE] [--once] [--id ID --yes|--no] [--reason TEXT] [--json]")
	fs.Bool("kubernetes", true, "answer the ApprovalRequests in a Kubernetes namespace instead of the queue folder")
	namespace := fs.String("namespace", "", "the `namespace` of the ApprovalRequests (default: the settings' approvals.kubernetes.namespace)")
	config := fs.String("config", "", "the executor's settings `file`, for its approvals.kubernetes.namespace")
	kubeconfig := fs.String("kubeconfig", "", "the approver's kubeconfig `file` (default: KUBECONFIG, else ~/.kube/config)")
	once := fs.Bool("once", false, "answer one waiting request, then exit")
	id := fs.String("id", "", "answer the request with this `id` (request id or object name) without asking (with --yes or --no)")
	yes := fs.Bool("yes", false, "with --id: approve")
	no := fs.Bool("no", false, "with --id: decline")
	reason := fs.String("reason", "", "a `text` the answer carries (status.reason)")
	asJSON := fs.Bool("json", false, "print JSON: the waiting requests (answering none), or the answer given with --id")
	if code, done := parseFlags(fs, args); done {
		return code
	}
	switch {
	case fs.NArg() != 0:
		fs.Usage()
		return ExitUsage
	case (*namespace == "") == (*config == ""):
		fmt.Fprintln(env.Stderr, "mcp-executor approve --kubernetes: give exactly one of --namespace NS and --config FILE")
		return ExitUsage
	}
	if usage := answerFlagsFault(*id, *yes, *no, *once); usage != "" {
		fmt.Fprintln(env.Stderr, "mcp-executor approve: "+usage)
		return ExitUsage
	}
	ns := *namespace
	if *config != "" {
		s, _, err := settings.Load(*config)
		if err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor approve: %v\n", err)
			return ExitFinding
		}
		if s.Approvals.Kubernetes == nil {
			fmt.Fprintf(env.Stderr, "mcp-executor approve: %s has no approvals.kubernetes block; give --namespace\n", *config)
			return ExitUsage
		}
		ns = s.Approvals.Kubernetes.Namespace
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if *kubeconfig != "" {
		rules.ExplicitPath = *kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor approve: reading the kubeconfig: %v\n", err)
		return ExitFinding
	}
	a, err := approvalkube.NewApprover(cfg, ns)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor approve: %v\n", err)
		return ExitFinding
	}

	if *id != "" {
		it, err := a.Answer(ctx, *id, *yes, *reason)
		if err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor approve: %v\n", err)
			return ExitFinding
		}
		if *asJSON {
			if err := writeShownJSON(env.Stdout, it); err != nil {
				fmt.Fprintf(env.Stderr, "mcp-executor approve: %v\n", err)
				return ExitFinding
			}
		} else {
			fmt.Fprintf(env.Stdout, "%s request %s (tool %s) as %s\n", answered(*yes), shown(it.RequestID), shown(fmt.Sprintf("%q", it.Tool)), shown(it.AnsweredBy))
		}
		return ExitOK
	}
	return askKubernetes(ctx, env, a, ns, *reason, *once, *asJSON)
}

// askKubernetes lists the waiting ApprovalRequests (--json: prints them) and asks y/n for each on
// standard input, answering as the approver.
func askKubernetes(ctx context.Context, env Env, a *approvalkube.Approver, ns, reason string, once, asJSON bool) int {
	items, err := a.Waiting(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "mcp-executor approve: %v\n", err)
		return ExitFinding
	}
	if asJSON {
		if items == nil {
			items = []approvalkube.Item{}
		}
		if err := writeShownJSON(env.Stdout, map[string]any{"namespace": ns, "waiting": items}); err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor approve: %v\n", err)
			return ExitFinding
		}
		return ExitOK
	}
	if len(items) == 0 {
		fmt.Fprintf(env.Stdout, "nothing waits for approval in namespace %s\n", ns)
		return ExitOK
	}
	return askInTurn(env, len(items), once, func(i int) string {
		it := items[i]
		fmt.Fprintf(env.Stdout, "request %s (%s), expires %s\n  %s\napprove? [y/n] ", shown(it.RequestID), shown(it.Name), shown(it.ExpiresAt), shown(it.Sentence))
		return it.RequestID
	}, func(i int, approved bool) bool {
		done, err := a.Answer(ctx, items[i].Name, approved, reason)
		if err != nil {
			fmt.Fprintf(env.Stderr, "mcp-executor approve: %v\n", err)
			return false
		}
		fmt.Fprintf(env.Stdout, "%s request %s as %s\n", answered(approved), shown(items[i].RequestID), shown(done.AnsweredBy))
		return true
	})
}
