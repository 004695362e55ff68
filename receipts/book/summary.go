package book

// facts is what one entry adds to the summary (the reference's summarise).
func (r *reader) facts(e *Entry) (problemFound, skipped bool, missing []string, uncompared bool) {
	problemFound = len(e.Problems) > 0
	note := func(sigs []SigState) {
		if len(sigs) == 0 {
			skipped = true
		}
		for _, s := range sigs {
			if s.State == stateUnavailable {
				missing = append(missing, s.Method)
			}
		}
	}
	switch e.Kind {
	case KindSlip:
		switch e.passkeyState {
		case stateUnavailable:
			missing = append(missing, e.passkeyAlg)
		case stateUnchecked:
			skipped = true
		}
	case KindStub:
		note(e.signatures)
		if e.counterState != stateAbsent {
			note(e.counterSigs)
		}
		if e.approvalState == stateUnavailable {
			missing = append(missing, e.approvalAlg)
		}
		uncompared = !e.Compared
	case KindRefusal, KindAcknowledgement:
		note(e.signatures)
	case KindPass:
		note(e.signatures)
		uncompared = !e.Compared
	case KindSeal:
		note(e.signatures)
		if e.Seal != nil {
			missing = append(missing, e.Seal.missing...)
		}
	case KindCancellation:
		switch e.passkeyState {
		case stateUnchecked:
			skipped = true
		case stateUnavailable:
			missing = append(missing, e.passkeyAlg)
		}
	default:
		// Unreadable, and kinds this checker does not read: never checked.
		skipped = true
		uncompared = e.Kind == KindUnreadable
	}
	return problemFound, skipped, missing, uncompared
}

func countEntry(c *Counts, e *Entry) {
	switch e.Kind {
	case KindSlip:
		c.Slips++
	case KindStub:
		c.Stubs++
		switch e.counterState {
		case stateAbsent:
			c.OneSided++
		case stateValid:
			c.Countersigned++
		}
		if e.approvalState == stateValid {
			c.Approved++
		}
	case KindRefusal:
		c.Refusals++
	case "terms":
		c.Terms++
	case "seal":
		c.Seals++
	case KindCancellation:
		c.Cancellations++
	case KindAcknowledgement:
		c.Acknowledgements++
	case "vouching":
		c.Vouchings++
	case KindPass:
		c.Passes++
	}
}

// note adds one entry to the running summary.
func (r *reader) note(e *Entry) {
	p, skipped, missing, uncompared := r.facts(e)
	if p {
		r.running.problemEntries++
		if r.running.firstProblem == nil {
			r.running.firstProblem = &LineFinding{Line: e.Index + 1, Code: e.Problems[0].Code, Message: e.Problems[0].Message}
		}
	}
	if skipped {
		r.running.skipped = true
	}
	for _, m := range missing {
		r.running.missing[m] = true
	}
	if uncompared {
		r.running.uncompared++
	}
	countEntry(&r.running.counts, e)
}
