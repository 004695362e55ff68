package approvalkube

import (
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// boundMembers are the members of the spec that bind an ApprovalRequest to
// its request: what the executor wrote must be what a person answers.
var boundMembers = []string{"requestId", "executor", "call", "tool", "action", "argumentsSha256", "slip",
	"requestedAt", "expiresAt", "amount"}

// bound reports why have, an ApprovalRequest found under the name of the
// request whose object is want, is not that request's (nil when it is).
// Anyone who may create and delete ApprovalRequests could have put it there
// while the executor was down, showing a person another call. A request
// restored at a start does not know its arguments: then, as for the queue
// file, the arguments and the arguments' part of the sentence are taken as
// the object shows them.
func bound(have, want *unstructured.Unstructured, argumentsKnown bool) error {
	hs, _, _ := unstructured.NestedMap(have.Object, "spec")
	ws, _, _ := unstructured.NestedMap(want.Object, "spec")
	for _, m := range boundMembers {
		if !reflect.DeepEqual(hs[m], ws[m]) {
			return fmt.Errorf("its spec.%s is not the request's", m)
		}
	}
	sentence, _ := hs["sentence"].(string)
	if argumentsKnown {
		if !reflect.DeepEqual(hs["arguments"], ws["arguments"]) || hs["sentence"] != ws["sentence"] {
			return fmt.Errorf("its spec.arguments or spec.sentence is not the request's")
		}
		return nil
	}
	// The sentence of a request whose arguments are not known ends in
	// "arguments not known?"; the one written first names them.
	written, _ := ws["sentence"].(string)
	prefix := strings.TrimSuffix(written, "arguments not known?")
	if !strings.HasPrefix(sentence, prefix+"arguments ") || !strings.HasSuffix(sentence, "?") {
		return fmt.Errorf("its spec.sentence names another tool, action or amount than the request")
	}
	return nil
}
