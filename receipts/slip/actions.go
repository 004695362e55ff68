package slip

import "strings"

// ReservedPrefix begins every action name reserved for the shared list.
const ReservedPrefix = "provared."

// sharedActions maps the 30 shared action names to their kind (format
// description, section 16).
var sharedActions = map[string]string{
	"provared.data.read": "reads", "provared.data.search": "reads", "provared.data.create": "changes",
	"provared.data.change": "changes", "provared.data.delete": "destroys", "provared.data.export": "sends",
	"provared.message.read": "reads", "provared.message.draft": "changes", "provared.message.send": "sends",
	"provared.post.publish": "sends", "provared.calendar.read": "reads", "provared.calendar.change": "changes",
	"provared.booking.make": "commits", "provared.booking.cancel": "commits", "provared.order.place": "commits",
	"provared.order.cancel": "commits", "provared.terms.accept": "commits", "provared.form.submit": "commits",
	"provared.account.create": "commits", "provared.account.sign-in": "enters", "provared.access.grant": "grants",
	"provared.access.remove": "changes", "provared.key.create": "grants", "provared.code.read": "reads",
	"provared.code.change": "changes", "provared.code.run": "runs", "provared.code.release": "runs",
	"provared.system.configure": "changes", "provared.web.read": "reads", "provared.agent.instruct": "sends",
}

// ActionKinds are the eight kinds of action a "never" list may forbid.
var ActionKinds = []string{"reads", "changes", "destroys", "sends", "commits", "grants", "runs", "enters"}

// ConductRules are the eight rules of conduct a "never" list may state; no
// check of a record can show that they were kept.
var ConductRules = []string{"impersonate", "bypass", "escalate", "conceal", "deceive", "harass", "disclose", "continue-after-stop"}

// ActionKind gives the kind of a shared action, and false for a name that
// is not on the shared list.
func ActionKind(name string) (string, bool) {
	k, ok := sharedActions[name]
	return k, ok
}

// IsUnknownReserved reports a name that begins "provared." and is not on
// the shared list.
func IsUnknownReserved(name string) bool {
	_, shared := sharedActions[name]
	return strings.HasPrefix(name, ReservedPrefix) && !shared
}

func isNeverName(name string) bool {
	for _, n := range ActionKinds {
		if n == name {
			return true
		}
	}
	for _, n := range ConductRules {
		if n == name {
			return true
		}
	}
	return false
}
