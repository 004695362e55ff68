package approvalkube

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
)

func boundRequest() (*Channel, *approval.Request) {
	ch := &Channel{o: Options{Namespace: "agents", Executor: "test executor"}}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	return ch, &approval.Request{ID: "Tu6zL5gROYhDzR1jscvpMw", Call: "c1", Tool: "order", Action: "supplies.order",
		Amount: &record.Amount{Unit: "GBP", Value: 120}, Slip: "slipfp", Arguments: "argsfp",
		RequestedAt: at, ExpiresAt: at.Add(2 * time.Minute), Shown: []byte(`{"total":120}`)}
}

// throughJSON is obj as the API server gives it back: JSON decoded into
// an unstructured object (whole numbers int64).
func throughJSON(t testing.TB, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	data, err := json.Marshal(obj.Object)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	return u
}

// TestBoundSpec: an ApprovalRequest found under a request's name (made by a
// run before this one, or put there by anyone who may create them) is taken
// only when its spec is the request's; a restored request, which does not
// know its arguments, takes the arguments the object shows.
func TestBoundSpec(t *testing.T) {
	ch, r := boundRequest()
	name := ObjectName(r.ID)
	written := throughJSON(t, ch.object(name, r))
	restored := *r
	restored.Shown = nil
	if err := bound(written, ch.object(name, r), true); err != nil {
		t.Fatalf("the object as written: %v", err)
	}
	if err := bound(written, ch.object(name, &restored), false); err != nil {
		t.Fatalf("the object as written, to the restored request: %v", err)
	}
	if err := bound(throughJSON(t, ch.object(name, &restored)), ch.object(name, &restored), false); err != nil {
		t.Fatalf("an object written after a restart, to the restored request: %v", err)
	}
	for _, c := range []struct {
		name     string
		edit     func(spec map[string]any)
		restored bool
		want     string
	}{
		{"other tool", func(s map[string]any) { s["tool"] = "refund" }, false, "spec.tool"},
		{"other amount", func(s map[string]any) { s["amount"] = map[string]any{"unit": "GBP", "value": int64(1)} }, false, "spec.amount"},
		{"no amount", func(s map[string]any) { delete(s, "amount") }, true, "spec.amount"},
		{"other fingerprint", func(s map[string]any) { s["argumentsSha256"] = "other" }, true, "spec.argumentsSha256"},
		{"other expiry", func(s map[string]any) { s["expiresAt"] = "2027-01-01T00:00:00.000Z" }, true, "spec.expiresAt"},
		{"other executor", func(s map[string]any) { s["executor"] = "x" }, true, "spec.executor"},
		{"other arguments shown", func(s map[string]any) { s["arguments"] = `{"total":1}` }, false, "spec.arguments"},
		{"other sentence", func(s map[string]any) { s["sentence"] = "Allow a small read?" }, false, "spec.sentence"},
		{"restored, sentence of another tool", func(s map[string]any) {
			s["sentence"] = approval.Sentence("read", "supplies.order", r.Amount, r.Shown)
		}, true, "spec.sentence"},
		{"restored, sentence of another amount", func(s map[string]any) {
			s["sentence"] = approval.Sentence(r.Tool, r.Action, &record.Amount{Unit: "GBP", Value: 1}, r.Shown)
		}, true, "spec.sentence"},
	} {
		t.Run(c.name, func(t *testing.T) {
			have := throughJSON(t, ch.object(name, r))
			c.edit(have.Object["spec"].(map[string]any))
			want := ch.object(name, r)
			if c.restored {
				want = ch.object(name, &restored)
			}
			if err := bound(have, want, !c.restored); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestAnswerOfOtherRequest: an object under the name that holds another
// request id is no answer to this one.
func TestAnswerOfOtherRequest(t *testing.T) {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"requestId": "other"},
		"status": map[string]any{"answer": "approved", "answeredBy": "alice"}}}
	if a, ok := answerOf(u, "r"); ok {
		t.Fatalf("answer %+v", a)
	}
}

// FuzzApprovalRequest feeds any JSON the API server could hand back as an
// ApprovalRequest to the channel's readers: never a panic; an answer only
// for the request's own id, approved or declined exactly, naming who; and
// never bound to the request when a binding member differs.
func FuzzApprovalRequest(f *testing.F) {
	ch, r := boundRequest()
	good := throughJSON(f, ch.object(ObjectName(r.ID), r))
	good.Object["status"] = map[string]any{"answer": "approved", "answeredBy": "alice"}
	data, _ := json.Marshal(good.Object)
	f.Add(data)
	f.Add([]byte(`{"spec":{"requestId":"Tu6zL5gROYhDzR1jscvpMw"},"status":{"answer":"Approved","answeredBy":"a"}}`))
	f.Add([]byte(`{"spec":[],"status":"x"}`))
	want := ch.object(ObjectName(r.ID), r)
	f.Fuzz(func(t *testing.T, data []byte) {
		u := &unstructured.Unstructured{}
		if u.UnmarshalJSON(data) != nil {
			return
		}
		if a, ok := answerOf(u, r.ID); ok {
			ans, _, _ := unstructured.NestedString(u.Object, "status", "answer")
			id, _, _ := unstructured.NestedString(u.Object, "spec", "requestId")
			if id != r.ID || a.Request != r.ID || a.Who == "kubernetes user " || a.Approved != (ans == AnswerApproved) ||
				(ans != AnswerApproved && ans != AnswerDeclined) {
				t.Fatalf("answer %+v from %s", a, data)
			}
		}
		for _, known := range []bool{true, false} {
			if bound(u, want, known) != nil {
				continue
			}
			hs, _, _ := unstructured.NestedMap(u.Object, "spec")
			ws := want.Object["spec"].(map[string]any)
			for _, m := range boundMembers {
				a, _ := json.Marshal(hs[m])
				b, _ := json.Marshal(ws[m])
				if string(a) != string(b) {
					t.Fatalf("bound with spec.%s %s, want %s", m, a, b)
				}
			}
		}
	})
}
