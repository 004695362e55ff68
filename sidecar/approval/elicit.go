package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
)

// Channel names of answers through the agent's client.
const (
	ChannelElicitation = "elicitation" // elicitation/create (2025-06-18, 2025-11-25)
	ChannelInput       = "input"       // input_required, answered in the retried call's inputResponses (2026-07-28)
)

// WhoClient is who answered through the agent's client: the client says no
// more than that someone pressed a button there.
const WhoClient = "the agent's client"

// ApproveField is the boolean the form asks for.
const ApproveField = "approve"

// InputKey is the key of the executor's question among a 2026-07-28
// result's inputRequests and the retried call's inputResponses.
const InputKey = "red.prova/approval"

// elicitParams are the params of elicitation/create in form mode.
type elicitParams struct {
	Mode            string          `json:"mode,omitempty"`
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema"`
}

// requestedSchema is a flat object with one boolean, as the 2025-06-18 and
// 2025-11-25 schemas allow (primitive properties only).
var requestedSchema = json.RawMessage(`{"type":"object","properties":{"approve":{"type":"boolean","title":"Approve","description":"Yes lets this one call run once; no refuses it","default":false}},"required":["approve"]}`)

// ElicitParams is the params object of the elicitation/create request that
// asks a client about r. withMode adds "mode": "form" (2025-11-25 and later;
// 2025-06-18 knows no mode).
func ElicitParams(r *Request, withMode bool) ([]byte, error) {
	p := elicitParams{Message: Sentence(r.Tool, r.Action, r.Amount, r.Shown) + " (request " + r.ID + ")", RequestedSchema: requestedSchema}
	if withMode {
		p.Mode = "form"
	}
	return marshal(p)
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("approval: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// ParseElicitResult reads the client's answer to elicitation/create (the
// response's result): "accept" with content {"approve": true} is yes;
// any other action, content or shape is no. An error says why a yes was not
// read (for the log); the answer is then no.
func ParseElicitResult(result []byte) (approved bool, err error) {
	var res struct {
		Action  string                     `json:"action"`
		Content map[string]json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(result, &res); err != nil {
		return false, errors.New("approval: the client's elicitation result is not an object of action and content")
	}
	if res.Action != "accept" {
		return false, nil
	}
	v, ok := res.Content[ApproveField]
	if !ok {
		return false, errors.New("approval: the client accepted without an approve value")
	}
	return string(bytes.TrimSpace(v)) == "true", nil
}

// InputRequiredResult is the tools/call result that asks a 2026-07-28
// client about r: resultType "input_required" with one input request
// (elicitation/create in form mode) under [InputKey], and requestState the
// request's id, which the retry echoes.
func InputRequiredResult(r *Request) ([]byte, error) {
	params, err := ElicitParams(r, true)
	if err != nil {
		return nil, err
	}
	return marshal(map[string]any{
		"resultType":    "input_required",
		"inputRequests": map[string]any{InputKey: map[string]any{"method": "elicitation/create", "params": json.RawMessage(params)}},
		"requestState":  r.ID,
	})
}

// InputAnswer reads the executor's answer from a retried tools/call's
// params: found is false when the params carry no inputResponses under
// [InputKey] (the call is then held as usual). When found, id is the
// requestState (the request asked about) and approved follows
// [ParseElicitResult]. The engine passes the answer to [Hub.Answer] with
// channel [ChannelInput] and then holds the call naming id, and strips
// inputResponses[InputKey] and requestState before the call goes to the
// server.
func InputAnswer(params []byte) (id string, approved, found bool, err error) {
	var p struct {
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
		RequestState   *string                    `json:"requestState"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return "", false, false, errors.New("approval: tools/call params are not an object")
	}
	resp, ok := p.InputResponses[InputKey]
	if !ok {
		return "", false, false, nil
	}
	if p.RequestState == nil {
		return "", false, true, errors.New("approval: an answer in inputResponses without the requestState naming the request")
	}
	approved, err = ParseElicitResult(resp)
	return *p.RequestState, approved, true, err
}

// PendingMeta is the _meta of the "waiting for a person" tool result
// (isError true) a call gets when pendingAfter passes: the request's id
// under [MetaApproval].
func PendingMeta(r *Request) map[string]any { return map[string]any{MetaApproval: r.ID} }

// PendingText is the text of that result.
func PendingText(r *Request) string {
	return "waiting for a person to approve this call (request " + r.ID + "); call again with the same arguments, naming the request in _meta[\"" + MetaApproval + "\"], to get the answer"
}

// Elicitation is the channel of the agent's client for 2025-06-18 and
// 2025-11-25 clients that declared the elicitation capability. The engine
// gives it Send, which sends elicitation/create with the params under an id
// of the executor's own and returns the client's result. Give a call this
// channel only where the client declared the capability: a client without
// it is never asked.
type Elicitation struct {
	// Send sends the request and waits for the client's response. It
	// returns the result, or an error: the client's JSON-RPC error, no
	// response, or ctx ending (the request is over: Send should then send
	// notifications/cancelled and return).
	Send     func(ctx context.Context, params []byte) (result []byte, err error)
	WithMode bool         // "mode": "form" (2025-11-25 and later)
	Logger   *slog.Logger // nil = discard
}

// Name is the channel's name.
func (e *Elicitation) Name() string { return ChannelElicitation }

// Ask sends the question and answers when the client does: accept with
// approve true is yes; any other result, and any error from Send while the
// request is still open (a refusal from the client, a lost session), is no.
func (e *Elicitation) Ask(ctx context.Context, r *Request, answer func(Answer)) error {
	params, err := ElicitParams(r, e.WithMode)
	if err != nil {
		return err
	}
	go func() {
		res, err := e.Send(ctx, params)
		if ctx.Err() != nil {
			return // over, or the executor stops: no answer
		}
		yes := false
		if err == nil {
			yes, err = ParseElicitResult(res)
		}
		if err != nil && e.Logger != nil {
			e.Logger.Info("approval: the client's elicitation gave no yes", slog.String("request", r.ID), slog.String("error", err.Error()))
		}
		answer(Answer{Request: r.ID, Approved: yes, Channel: ChannelElicitation, Who: WhoClient})
	}()
	return nil
}
