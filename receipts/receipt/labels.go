package receipt

import "github.com/seed-6e06167c/mcp-executor/receipts/record"

// Labels of the documents a stub names in its details (each the SHA-256,
// base64url, of the document). They are the executor's own labels; the
// README documents them.
const (
	LabelArguments   = "provared.arguments"    // the arguments in RFC 8785 form ({} where none)
	LabelToolName    = "provared.tool-name"    // the tool's name as UTF-8 text
	LabelCall        = "executor.call"         // the executor's own call id
	LabelRequestID   = "provared.request-id"   // the JSON-RPC id sent to the server
	LabelTraceID     = "provared.trace-id"     // the trace id of a well-formed traceparent in _meta
	LabelRules       = "executor.rules"        // the content-rules file in RFC 8785 form
	LabelToolResult  = "provared.tool-result"  // the server's whole result, RFC 8785
	LabelError       = "provared.error"        // otherwise: the error text or the server's error
	LabelWrittenLate = "executor.written-late" // a fixed text: written at a restart
	LabelServer      = "executor.server"       // the tool server's name, when the settings name several
	LabelApproval    = "executor.approval"     // the answer that let a held call through, as the copy holds it
)

// Fixed texts whose fingerprints stand for what the executor cannot bind.
const (
	// TextStoppedWhileSent is the provared.error document of a call the
	// executor was sending when it stopped.
	TextStoppedWhileSent = "The executor stopped after recording this call as sent; whether the tool server got it, and its outcome, are not known."
	// TextWrittenLate is the executor.written-late document.
	TextWrittenLate = "This receipt was written by the executor at a restart, from its own copy of the call."
	// TextResultNotCanonical is the provared.error document of a result that
	// cannot be written in RFC 8785 form.
	TextResultNotCanonical = "The tool server's result cannot be written in the one form of RFC 8785, so it is not bound."
	// TextAnswerUnreadable is the provared.error document of an answer the
	// executor could not read as a message.
	TextAnswerUnreadable = "The tool server's answer could not be read as a message, so it is not bound."
)

// WrittenLate is the executor.written-late detail of a receipt written at
// a restart.
func WrittenLate() record.Detail { return record.TextDetail(LabelWrittenLate, TextWrittenLate) }

// RulesSoftwarePrefix begins the agent.software name of a slip that states
// the rules on content the person approved.
const RulesSoftwarePrefix = "Content rules of "

// RulesSoftwareName is the agent.software name under which a slip states
// the rules on content of the executor named name.
func RulesSoftwareName(name string) string { return RulesSoftwarePrefix + name }
