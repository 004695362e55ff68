package settings

import (
	"errors"
	"strings"
	"testing"
)

func TestApprovalsKubernetesRead(t *testing.T) {
	text := edit(`"name": "t",`, `"name": "t", "approvals": {"kubernetes": {"namespace": "approvals-1"}},`)
	s, _, err := Parse("/etc/mcp/x.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if k := s.Approvals.Kubernetes; k == nil || k.Namespace != "approvals-1" {
		t.Fatalf("approvals.kubernetes: %+v", k)
	}
	if s, _, err = Parse("/etc/mcp/x.json", []byte(base)); err != nil || s.Approvals.Kubernetes != nil {
		t.Fatalf("no block: %v %+v", err, s.Approvals.Kubernetes)
	}
}

func TestApprovalsKubernetesFaults(t *testing.T) {
	block := func(b string) string {
		return edit(`"name": "t",`, `"name": "t", "approvals": {"kubernetes": `+b+`},`)
	}
	cases := []struct{ name, text, place, reason string }{
		{"not an object", block(`"agents"`), "approvals.kubernetes", "must be an object"},
		{"no namespace", block(`{}`), "approvals.kubernetes.namespace", ""},
		{"unknown member", block(`{"namespace": "a", "kubeconfig": "/k"}`), "approvals.kubernetes.kubeconfig", "not a known member"},
		{"namespace type", block(`{"namespace": 1}`), "approvals.kubernetes.namespace", "must be text"},
		{"namespace empty", block(`{"namespace": ""}`), "approvals.kubernetes.namespace", "namespace name"},
		{"namespace upper", block(`{"namespace": "Agents"}`), "approvals.kubernetes.namespace", "namespace name"},
		{"namespace dash end", block(`{"namespace": "agents-"}`), "approvals.kubernetes.namespace", "namespace name"},
		{"namespace long", block(`{"namespace": "` + strings.Repeat("a", 64) + `"}`), "approvals.kubernetes.namespace", "namespace name"},
		{"twice", block(`{"namespace": "a", "namespace": "b"}`), "approvals.kubernetes.namespace", "member given twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Parse("/work/x.json", []byte(c.text))
			var se *Error
			if !errors.As(err, &se) || !strings.HasPrefix(se.Place, c.place) || !strings.Contains(se.Reason, c.reason) {
				t.Fatalf("got %v, want place %q and %q", err, c.place, c.reason)
			}
		})
	}
}
