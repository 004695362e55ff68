package record

import "strings"

// ReservedPrefix begins every action name reserved for the shared list.
const ReservedPrefix = "provared."

// sharedActions are the 30 shared actions and their kinds (§16).
var sharedActions = map[string]string{
	"provared.data.read":        "reads",
	"provared.data.search":      "reads",
	"provared.data.create":      "changes",
	"provared.data.change":      "changes",
	"provared.data.delete":      "destroys",
	"provared.data.export":      "sends",
	"provared.message.read":     "reads",
	"provared.message.draft":    "changes",
	"provared.message.send":     "sends",
	"provared.post.publish":     "sends",
	"provared.calendar.read":    "reads",
	"provared.calendar.change":  "changes",
	"provared.booking.make":     "commits",
	"provared.booking.cancel":   "commits",
	"provared.order.place":      "commits",
	"provared.order.cancel":     "commits",
	"provared.terms.accept":     "commits",
	"provared.form.submit":      "commits",
	"provared.account.create":   "commits",
	"provared.account.sign-in":  "enters",
	"provared.access.grant":     "grants",
	"provared.access.remove":    "changes",
	"provared.key.create":       "grants",
	"provared.code.read":        "reads",
	"provared.code.change":      "changes",
	"provared.code.run":         "runs",
	"provared.code.release":     "runs",
	"provared.system.configure": "changes",
	"provared.web.read":         "reads",
	"provared.agent.instruct":   "sends",
}

// ActionKinds are the eight kinds of action a slip's "never" may forbid.
var ActionKinds = []string{"reads", "changes", "destroys", "sends", "commits", "grants", "runs", "enters"}

// ConductRules are the eight rules of conduct a slip's "never" may state.
var ConductRules = []string{"impersonate", "bypass", "escalate", "conceal", "deceive", "harass", "disclose", "continue-after-stop"}

// SharedActionKind returns the kind of a shared provared.* action; ok is
// false for a name that is not on the shared list.
func SharedActionKind(action string) (kind string, ok bool) {
	kind, ok = sharedActions[action]
	return kind, ok
}

// SharedActions returns the names of the 30 shared actions.
func SharedActions() []string {
	out := make([]string, 0, len(sharedActions))
	for name := range sharedActions {
		out = append(out, name)
	}
	return out
}

// IsUnknownReserved reports whether an action name begins "provared." and
// is not on the shared list.
func IsUnknownReserved(name string) bool {
	_, shared := sharedActions[name]
	return strings.HasPrefix(name, ReservedPrefix) && !shared
}
