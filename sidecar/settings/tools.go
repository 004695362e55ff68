package settings

import (
	"slices"
	"strconv"
	"strings"

	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

func (p *parser) tools(n *node) error {
	if _, err := asObject(n); err != nil {
		return err
	}
	p.s.Tools = make(map[string]Tool, len(n.obj))
	for _, m := range n.obj {
		if err := p.toolPattern(m.name, m.val.place); err != nil {
			return err
		}
		t, err := p.tool(m.val)
		if err != nil {
			return err
		}
		p.s.Tools[m.name] = t
		p.s.ToolOrder = append(p.s.ToolOrder, m.name)
	}
	return nil
}

func (p *parser) tool(n *node) (Tool, error) {
	o, err := asObject(n, "action", "amount", "refuse", "quota", "approve")
	if err != nil {
		return Tool{}, err
	}
	var t Tool
	if t.Refuse, err = p.boolOr(o, "refuse", false); err != nil {
		return t, err
	}
	if t.Refuse {
		for _, name := range []string{"amount", "quota"} {
			if v := o.get(name); v != nil {
				return t, &Error{Place: v.place, Reason: "a rule that refuses has no " + name + ": remove it, or remove \"refuse\""}
			}
		}
	}
	v := o.get("action")
	if v == nil && !t.Refuse {
		return t, &Error{Place: o.place("action"), Reason: `missing (or write "refuse": true to refuse the tool)`}
	}
	if v != nil {
		if t.Action, err = v.text(); err != nil {
			return t, err
		}
		if !actionRE.MatchString(t.Action) {
			return t, &Error{Place: v.place, Reason: "must be an action name: 1 to 64 of a-z, 0-9, '.', '_', '-', starting with a letter or digit"}
		}
		if record.IsUnknownReserved(t.Action) {
			return t, &Error{Place: v.place, Reason: UnknownSharedAction(t.Action)}
		}
	}
	if v := o.get("amount"); v != nil {
		if t.Amount, err = p.amount(v); err != nil {
			return t, err
		}
	}
	if v := o.get("quota"); v != nil {
		if t.Quota, err = p.quota(v); err != nil {
			return t, err
		}
	}
	if v := o.get("approve"); v != nil {
		if t.Approve, err = p.approve(v); err != nil {
			return t, err
		}
	}
	return t, nil
}

func (p *parser) amount(n *node) (*Amount, error) {
	o, err := asObject(n, "unit", "value", "pointer", "count")
	if err != nil {
		return nil, err
	}
	a := &Amount{}
	v, err := o.required("unit")
	if err != nil {
		return nil, err
	}
	if a.Unit, err = v.text(); err != nil {
		return nil, err
	}
	if !unitRE.MatchString(a.Unit) {
		return nil, &Error{Place: v.place, Reason: "must be a unit: 1 to 16 of letters, digits, '.', '_', '-', starting with a letter or digit"}
	}
	var which *node
	for _, k := range []AmountKind{AmountFixed, AmountPointer, AmountCount} {
		if x := o.get(string(k)); x != nil {
			if which != nil {
				return nil, &Error{Place: n.place, Reason: `must have exactly one of "value", "pointer" and "count"`}
			}
			which, a.Kind = x, k
		}
	}
	if which == nil {
		return nil, &Error{Place: n.place, Reason: `must have exactly one of "value", "pointer" and "count"`}
	}
	if a.Kind == AmountFixed {
		if a.Value, err = which.whole(0, wire.MaxSafeInt); err != nil {
			return nil, err
		}
		return a, nil
	}
	if a.Pointer, err = which.text(); err != nil {
		return nil, err
	}
	if a.Pointer == "" || wire.CheckPointer(a.Pointer) != nil {
		return nil, &Error{Place: which.place, Reason: `must be a JSON pointer (RFC 6901) into the arguments, such as "/total"`}
	}
	return a, nil
}

// UnknownSharedAction says why action, which begins "provared." but is not
// on the format's shared list, cannot be a rule's action: the names under
// that prefix are the format's own, so a slip cannot allow any other (its
// check refuses one), and every call would be refused as though the slip
// were at fault. It lists the shared names and how to name an action of
// one's own.
func UnknownSharedAction(action string) string {
	shared := record.SharedActions()
	slices.Sort(shared)
	own := "acme." + strings.TrimPrefix(action, record.ReservedPrefix)
	return "\"" + action + "\" is not one of the " + strconv.Itoa(len(shared)) + " shared actions of the receipt format, and names that begin \"" +
		record.ReservedPrefix + "\" are kept for those: use one of " + strings.Join(shared, ", ") +
		"; or, for an action of your own, a prefix of your own (such as \"" + own + "\")"
}
