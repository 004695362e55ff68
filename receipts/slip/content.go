package slip

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/passkey"
)

// The members of a slip's content, in the reference's list.
var slipMembers = []string{"actions", "agent", "id", "issuer", "limits", "never", "purpose", "requires", "type", "validFrom", "validUntil", "with"}

// PasskeyMethods are the signing methods an issuer's passkey may use.
var PasskeyMethods = []string{"ES256", "RS256", "Ed25519"}

// MaxPeriodSeconds is the longest period a limit may name: 366 days.
const MaxPeriodSeconds = 366 * 86400

var limitKinds = []string{"count", "each", "max"}

var withPath = regexp.MustCompile(`^with\[[0-9]+\]$`)

// ValidateContent confirms every member of a slip's content (format
// description, section 4.1), with no field covered. Faults are
// *problem.Error with code "bad-field" (or "bad-key" for a key).
func ValidateContent(c map[string]any) error {
	_, err := readContent(c, nil, false)
	return err
}

// Parse validates a slip's content (with no field covered) and returns it
// read into a Slip without a record.
func Parse(c map[string]any) (*Slip, error) {
	return readContent(c, nil, false)
}

// readContent is the reference's validateSlipContent: c is the content with
// every revealed field back in place; places says where the signed content
// held covered fields, named whether it named its fingerprint method.
func readContent(c any, places map[string]*place, named bool) (*Slip, error) {
	s := &Slip{}
	if err := checkPlaces(places, named); err != nil {
		return nil, err
	}
	mayLack := coverTracker(s, places)
	without := func(list []string, name string, lacks bool) []string {
		if !lacks {
			return list
		}
		return slices.DeleteFunc(slices.Clone(list), func(m string) bool { return m == name })
	}

	lacksPurpose, err := mayLack(c, "", "purpose")
	if err != nil {
		return nil, err
	}
	m, err := members(c, without(slipMembers, "purpose", lacksPurpose), []string{"passes"}, "slip")
	if err != nil {
		return nil, err
	}
	s.Content = m
	if s.ID, err = idField(m["id"], "id"); err != nil {
		return nil, err
	}
	if v, ok := m["passes"]; ok {
		if s.Passes, err = wholeNumber(v, "passes"); err != nil {
			return nil, err
		}
		if s.Passes < 1 || s.Passes > 10 {
			return nil, fail("passes", "must be from 1 to 10; leave it out if the permission may not be passed on")
		}
	}

	if err := readIssuer(s, m["issuer"], mayLack); err != nil {
		return nil, err
	}
	if err := readAgent(s, m["agent"], mayLack); err != nil {
		return nil, err
	}

	if err := readActions(s, m["actions"]); err != nil {
		return nil, err
	}

	oneUnit, limits, err := ValidateLimits(s.Actions, m["limits"])
	if err != nil {
		return nil, err
	}
	s.Limits = limits
	if err := readRequires(s, m["requires"], oneUnit); err != nil {
		return nil, err
	}
	if err := readNever(s, m["never"]); err != nil {
		return nil, err
	}
	if err := readWith(s, m["with"], mayLack); err != nil {
		return nil, err
	}

	if err := readValidity(s, m); err != nil {
		return nil, err
	}
	if !lacksPurpose {
		if s.Purpose, err = text(m["purpose"], 1, 1000, "purpose"); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// checkPlaces confirms where the signed content held covered fields: only a name or the purpose, each
// place one fingerprint, and "_sd_alg" given exactly when something is covered.
func checkPlaces(places map[string]*place, named bool) error {
	for path, p := range places {
		name := ""
		switch {
		case path == "":
			name = "purpose"
		case path == "issuer" || path == "agent" || withPath.MatchString(path):
			name = "name"
		}
		if name == "" || slices.ContainsFunc(p.revealed, func(r string) bool { return r != name }) {
			return fail(orSlip(path), "only a name or the purpose of a slip may be covered")
		}
		if p.covered+len(p.revealed) != 1 {
			return fail(orSlip(path), "a list of covered fields in a slip holds exactly one fingerprint")
		}
	}
	if (len(places) > 0) != named {
		return fail("slip", `"_sd_alg" is given where a field is covered, and only there`)
	}
	return nil
}

// coverTracker returns the lackFunc of a slip: whether the field name of the object at path stands
// covered (and then it is noted in s.Covered).
func coverTracker(s *Slip, places map[string]*place) lackFunc {
	return func(obj any, path, name string) (bool, error) {
		p := places[path]
		if p == nil || p.covered != 1 {
			return false, nil
		}
		if m, ok := obj.(map[string]any); ok {
			if _, has := m[name]; has {
				return false, fail(orSlip(path), "holds a field and, as well, a fingerprint that stands in for it")
			}
		}
		if path == "" {
			s.Covered = append(s.Covered, name)
		} else {
			s.Covered = append(s.Covered, path+"."+name)
		}
		return true, nil
	}
}

// readActions reads the slip's "actions": 1 to 64 action names, none repeated.
func readActions(s *Slip, v any) error {
	actions, err := list(v, 1, 64, "actions")
	if err != nil {
		return err
	}
	for i, a := range actions {
		name, err := actionName(a, fmt.Sprintf("actions[%d]", i))
		if err != nil {
			return err
		}
		s.Actions = append(s.Actions, name)
	}
	if hasRepeat(s.Actions) {
		return fail("actions", "an action name is repeated")
	}
	return nil
}

// readValidity reads "validFrom" and "validUntil"; the second must be the later.
func readValidity(s *Slip, m map[string]any) error {
	var err error
	if s.ValidFrom, err = timeField(m["validFrom"], "validFrom"); err != nil {
		return err
	}
	if s.ValidUntil, err = timeField(m["validUntil"], "validUntil"); err != nil {
		return err
	}
	if !s.ValidFrom.Before(s.ValidUntil) {
		return fail("validUntil", "must be later than validFrom")
	}
	return nil
}

type lackFunc func(obj any, path, name string) (bool, error)

func orSlip(path string) string {
	if path == "" {
		return "slip"
	}
	return path
}

func hasRepeat(names []string) bool {
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			return true
		}
		seen[n] = true
	}
	return false
}

func readIssuer(s *Slip, v any, mayLack lackFunc) error {
	lacksName, err := mayLack(v, "issuer", "name")
	if err != nil {
		return err
	}
	req := []string{"key", "name", "origin", "rpId"}
	if lacksName {
		req = []string{"key", "origin", "rpId"}
	}
	m, err := members(v, req, nil, "issuer")
	if err != nil {
		return err
	}
	if !lacksName {
		if s.Issuer.Name, err = label(m["name"], "issuer.name"); err != nil {
			return err
		}
	}
	if s.Issuer.Key, err = jwk.CheckKeyAt(m["key"], "issuer.key", PasskeyMethods...); err != nil {
		return err
	}
	origin, _ := m["origin"].(string)
	rpID, _ := m["rpId"].(string)
	if err := checkOriginValues(m["origin"], m["rpId"]); err != nil {
		return err
	}
	s.Issuer.Origin, s.Issuer.RPID = origin, rpID
	return nil
}

func readAgent(s *Slip, v any, mayLack lackFunc) error {
	lacksName, err := mayLack(v, "agent", "name")
	if err != nil {
		return err
	}
	req := []string{"keys", "name"}
	if lacksName {
		req = []string{"keys"}
	}
	m, err := members(v, req, []string{"software"}, "agent")
	if err != nil {
		return err
	}
	if !lacksName {
		if s.Agent.Name, err = label(m["name"], "agent.name"); err != nil {
			return err
		}
	}
	if s.Agent.Keys, err = jwk.CheckKeySetAt(m["keys"], "agent.keys"); err != nil {
		return err
	}
	if sw, ok := m["software"]; ok {
		items, err := list(sw, 1, 16, "agent.software")
		if err != nil {
			return err
		}
		for i, item := range items {
			p := fmt.Sprintf("agent.software[%d]", i)
			im, err := members(item, []string{"name", "sha256"}, nil, p)
			if err != nil {
				return err
			}
			name, err := label(im["name"], p+".name")
			if err != nil {
				return err
			}
			sum, err := fingerprintText(im["sha256"], p+".sha256")
			if err != nil {
				return err
			}
			s.Agent.Software = append(s.Agent.Software, Software{Name: name, SHA256: sum})
		}
	}
	return nil
}

// UnitCheck confirms that every amount named for one action, in a limit or
// a condition, is in one unit.
type UnitCheck func(action string, unitValue any, path string) (string, error)

// ValidateLimits confirms a list of limits against the actions it may name
// (format description, section 4.1); a slip and a pass share it. It returns
// the unit check to use on what follows, and the limits read.
func ValidateLimits(actions []string, v any) (UnitCheck, []Limit, error) {
	units := map[string]string{}
	oneUnit := func(action string, uv any, path string) (string, error) {
		u, err := unit(uv, path)
		if err != nil {
			return "", err
		}
		if prev, ok := units[action]; ok && prev != u {
			return "", fail(path, "every amount for one action must be in the same unit")
		}
		units[action] = u
		return u, nil
	}
	items, err := list(v, 0, 64, "limits")
	if err != nil {
		return nil, nil, err
	}
	var out []Limit
	seen := map[string]bool{}
	for i, item := range items {
		p := fmt.Sprintf("limits[%d]", i)
		m, err := members(item, []string{"action"}, []string{"count", "each", "max", "per", "unit"}, p)
		if err != nil {
			return nil, nil, err
		}
		action, _ := m["action"].(string)
		if _, isString := m["action"].(string); !isString || !slices.Contains(actions, action) {
			return nil, nil, fail(p+".action", "must be one of the slip's actions")
		}
		var kinds []string
		for _, k := range limitKinds {
			if _, ok := m[k]; ok {
				kinds = append(kinds, k)
			}
		}
		if len(kinds) != 1 {
			return nil, nil, fail(p, `must hold exactly one of "max", "each" and "count"`)
		}
		l := Limit{Action: action, Kind: kinds[0]}
		if l.Value, err = wholeNumber(m[l.Kind], p+"."+l.Kind); err != nil {
			return nil, nil, err
		}
		_, hasUnit := m["unit"]
		if l.Kind == "count" {
			if hasUnit {
				return nil, nil, fail(p+".unit", "a count of actions has no unit")
			}
			if l.Value < 1 {
				return nil, nil, fail(p+".count", "must be 1 or more")
			}
		} else {
			if !hasUnit {
				return nil, nil, fail(p, `"unit" is missing`)
			}
			if l.Unit, err = oneUnit(action, m["unit"], p+".unit"); err != nil {
				return nil, nil, err
			}
		}
		perKey := ""
		if pv, ok := m["per"]; ok {
			if l.Kind == "each" {
				return nil, nil, fail(p+".per", "a limit on each action has no period")
			}
			if l.Per, err = wholeNumber(pv, p+".per"); err != nil {
				return nil, nil, err
			}
			if l.Per < 1 || l.Per > MaxPeriodSeconds {
				return nil, nil, fail(p+".per", "must be from 1 second to 366 days, in seconds")
			}
			perKey = fmt.Sprint(l.Per)
		}
		key := action + " " + l.Kind + " " + perKey
		if seen[key] {
			return nil, nil, fail(p, "the same kind of limit is given twice for one action")
		}
		seen[key] = true
		out = append(out, l)
	}
	return oneUnit, out, nil
}

func readRequires(s *Slip, v any, oneUnit UnitCheck) error {
	items, err := list(v, 0, 64, "requires")
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, item := range items {
		p := fmt.Sprintf("requires[%d]", i)
		m, err := members(item, []string{"need"}, []string{"above", "action", "unit"}, p)
		if err != nil {
			return err
		}
		need, _ := m["need"].(string)
		if need != "approval" && need != "countersignature" {
			return fail(p+".need", `must be "approval" or "countersignature"`)
		}
		c := Condition{Need: need}
		av, hasAction := m["action"]
		if hasAction {
			a, isString := av.(string)
			if !isString || !slices.Contains(s.Actions, a) {
				return fail(p+".action", "must be one of the slip's actions")
			}
			c.Action = a
		}
		_, hasAbove := m["above"]
		_, hasUnit := m["unit"]
		if hasAbove != hasUnit {
			return fail(p, `"above" and "unit" come together`)
		}
		if hasAbove {
			if !hasAction {
				return fail(p, `"above" needs an "action"`)
			}
			above, err := wholeNumber(m["above"], p+".above")
			if err != nil {
				return err
			}
			c.Above = &above
			if c.Unit, err = oneUnit(c.Action, m["unit"], p+".unit"); err != nil {
				return err
			}
		}
		key := need + " " + c.Action
		if seen[key] {
			return fail(p, "the same condition is given twice")
		}
		seen[key] = true
		s.Requires = append(s.Requires, c)
	}
	return nil
}

func readNever(s *Slip, v any) error {
	items, err := list(v, 0, 16, "never")
	if err != nil {
		return err
	}
	for i, item := range items {
		n, ok := item.(string)
		if !ok || !isNeverName(n) {
			return fail(fmt.Sprintf("never[%d]", i), "must be a listed kind of action or a listed rule of conduct")
		}
		s.Never = append(s.Never, n)
	}
	if hasRepeat(s.Never) {
		return fail("never", "a name is repeated")
	}
	for _, a := range s.Actions {
		if kind, ok := ActionKind(a); ok && slices.Contains(s.Never, kind) {
			return fail("never", "forbids a kind of action that the slip also allows")
		}
	}
	return nil
}

func readWith(s *Slip, v any, mayLack lackFunc) error {
	items, err := list(v, 0, 64, "with")
	if err != nil {
		return err
	}
	ids := map[string]bool{}
	for i, item := range items {
		p := fmt.Sprintf("with[%d]", i)
		lacksName, err := mayLack(item, p, "name")
		if err != nil {
			return err
		}
		req := []string{"id", "name"}
		if lacksName {
			req = []string{"id"}
		}
		m, err := members(item, req, []string{"keys"}, p)
		if err != nil {
			return err
		}
		var svc Service
		if svc.ID, err = shortName(m["id"], p+".id"); err != nil {
			return err
		}
		if ids[svc.ID] {
			return fail(p+".id", "a service id is repeated")
		}
		ids[svc.ID] = true
		if !lacksName {
			if svc.Name, err = label(m["name"], p+".name"); err != nil {
				return err
			}
		}
		if kv, ok := m["keys"]; ok {
			ks, err := jwk.CheckKeySetAt(kv, p+".keys")
			if err != nil {
				return err
			}
			svc.Keys = &ks
		}
		s.With = append(s.With, svc)
	}
	return nil
}

// checkOriginValues applies passkey.CheckOrigin to the raw members, in the
// reference's order: the origin's text first, then the rpId.
func checkOriginValues(origin, rpID any) error {
	o, ok := origin.(string)
	if !ok {
		return fail("issuer.origin", "must be text of 1 to 300 characters")
	}
	r, ok := rpID.(string)
	if !ok {
		return fail("issuer.rpId", "must be a website name in lower case, such as example.org")
	}
	return passkey.CheckOrigin(o, r)
}
