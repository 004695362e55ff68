// Package pass reads and writes passes (format description, section 25):
// an agent's signed statement that it hands part of its permission to a
// helper agent. A pass names its slip, the pass its writer acts under
// ("from", absent for the slip's own agent), the helper ("to": a name and a
// key set), the actions and limits it hands on, and when it holds; it is
// signed by the key set of the agent that passes on.
//
// ValidateContent confirms a pass's content exactly as the reference's
// validatePassContent does (the vectors of pass-contents.json), in its
// order of checks and with its codes ("bad-field", "bad-key" for the
// helper's keys). Fields builds a pass's content and Sign writes it with
// the writer's key set (passes-written.json); Read reads a pass record
// handed over as JSON, strictly, as a book line's pass is read.
//
// What a pass shows in a book (pass-missing, pass-mismatch, pass-too-deep,
// pass-not-allowed, pass-wider, its times, a cancelled slip) is the book's
// checker's (receipts/book): it needs the slip and the passes above.
package pass
