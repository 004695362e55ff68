// Package toolserver starts and stops the MCP tool server the executor
// stands in front of.
//
// The server runs in its own process group, with an environment of exactly
// the variables it is given (its credentials) and the pass-through variables
// present in the executor's environment: nothing else the agent's client put
// into the executor's environment reaches it. Its stdin and stdout are pipes
// the session uses; its stderr is copied line by line, each line prefixed and
// cut at a bound, to a writer of the caller's choice, or, given a
// [StderrLog], logged one record per line, redacted, escaped and bounded,
// never stalling the server on a stalled log. [Process.Stop] closes
// its input, waits, then sends SIGTERM to its group and finally kills
// everything; [Process.Close] also closes the executor's ends of the pipes.
//
// On Linux the server is started through a guard (see guard_linux.go): the
// executor's own binary run again, a child subreaper that holds a lifeline
// pipe from the executor. When the executor is gone, by Stop or by SIGKILL or
// the OOM killer, the guard kills the server's group and every descendant,
// grandchildren that called setsid included, reaps them and exits. Every
// binary that links this package runs the guard from its init when started
// as one, so test binaries need no hook.
//
// Limits: the guard itself can be killed with SIGKILL (only the backstop of
// Stop does that, after the guard did not end the tree within its wait); the
// server then still gets its Pdeathsig, but its descendants do not. Outside
// Linux there is no guard, and a grandchild outlives a killed executor until
// its pipes close.
package toolserver
