// Package approval holds tool calls for a person's yes or no.
//
// A call whose tool rule says "approve" is held after the amount, the
// content rules and the check before acting, and before the copy's sent
// line. [Hub.Hold] makes a [Request] bound to that exact call — the tool,
// the action, the RFC 8785 fingerprint of its arguments, the amount and the
// slip — with an id and an expiry, records it in the copy, and asks every
// [Channel] at once: the queue folder ([Queue]), the agent's client
// (elicitation, built by the engine from [ElicitParams]), and later the
// person's page and Kubernetes ApprovalRequests. The first answer wins; a
// later one is recorded as too late. No answer by the expiry is a refusal.
//
// An approval is used at most once, and never lets through a call with
// other arguments: a call that names a pending request's id in
// _meta["red.prova/approval"] with other arguments burns the request, and
// both are refused. With pendingAfter, a call still waiting after that long
// is answered "waiting" ([Pending]); a later identical call attaches to the
// same request.
//
// Every request, answer, use and end is a copy line (package copylog's
// approval kinds), and the hub is rebuilt from those lines at a start
// ([NewHub]), so an answer given while the executor was down is used by the
// identical call afterwards, and never twice.
package approval
