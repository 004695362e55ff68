package wire

import (
	"errors"
	"fmt"
	"slices"
)

// Member is one params._meta member a request is sent with: Value is
// written as a JSON string.
type Member struct{ Key, Value string }

// quoteText is s as a JSON string, for an error message.
func quoteText(s string) string { return string(appendString(nil, s)) }

// edit replaces line[at:at+del] with ins.
type edit struct {
	at, del int
	ins     []byte
}

// SetMetas returns a new line in which params._meta holds every member of
// metas, in one pass over the line and one copy of it: the same bytes as
// SetMeta applied for each member in turn (a key given twice takes the
// later value), with the same errors.
func SetMetas(line []byte, params Span, metas []Member) ([]byte, error) {
	edits, _, err := metaEdits(line, params, metas)
	if err != nil {
		return nil, err
	}
	return applyEdits(line, edits), nil
}

// EditRequest returns a request line with its id replaced by newID (a JSON
// value; nil keeps the id) and metas set in params._meta as [SetMetas]
// sets them, together with its Message, read from the edits (the line is
// not read again). m is the Message Inspect gave for line.
func EditRequest(line []byte, m *Message, newID []byte, metas []Member) ([]byte, *Message, error) {
	if m.Kind != KindRequest {
		return nil, nil, errors.New("edit request: the message is not a request")
	}
	var edits []edit
	if newID != nil {
		edits = append(edits, edit{at: m.IDSpan.Start, del: m.IDSpan.End - m.IDSpan.Start, ins: newID})
	}
	params := m.ParamsSpan
	var newParams *edit // the edit that writes params where the line had none
	if len(metas) > 0 {
		mes, created, err := metaEdits(line, params, metas)
		if err != nil {
			return nil, nil, err
		}
		edits = append(edits, mes...)
		if created {
			np := edits[len(edits)-1]
			newParams = &np
		}
	}
	slices.SortStableFunc(edits, func(a, b edit) int { return a.at - b.at })
	out := applyEdits(line, edits)
	// An offset o of line is at shift(o) in out: every edit that ends at
	// or before o moves it by its change of length.
	shift := func(o int) int {
		n := o
		for _, e := range edits {
			if e.at+e.del <= o {
				n += len(e.ins) - e.del
			}
		}
		return n
	}
	nm := &Message{Kind: m.Kind, Method: m.Method, End: shift(m.End)}
	nm.IDSpan = Span{shift(m.IDSpan.Start), shift(m.IDSpan.End)}
	nm.ID = out[nm.IDSpan.Start:nm.IDSpan.End]
	switch {
	case newParams != nil:
		// `,"params":{...}` went in just before the closing brace.
		at := shift(newParams.at) - len(newParams.ins)
		nm.ParamsSpan = Span{at + len(`,"params":`), at + len(newParams.ins)}
	case params.Present():
		nm.ParamsSpan = Span{shift(params.Start), shift(params.End)}
	}
	if nm.ParamsSpan.Present() {
		nm.Params = out[nm.ParamsSpan.Start:nm.ParamsSpan.End]
	}
	return out, nm, nil
}

// metaSet is the members to set: each key once, in the order first given,
// with its last value.
type metaSet struct {
	keys   []string
	values map[string]string
}

func newMetaSet(metas []Member) metaSet {
	ms := metaSet{keys: make([]string, 0, len(metas)), values: make(map[string]string, len(metas))}
	for _, mm := range metas {
		if _, seen := ms.values[mm.Key]; !seen {
			ms.keys = append(ms.keys, mm.Key)
		}
		ms.values[mm.Key] = mm.Value
	}
	return ms
}

// members writes the members of ks as they go in at the front of _meta:
// the last one set first, as SetMeta one at a time puts them.
func (ms metaSet) members(ks []string) []byte {
	var b []byte
	for i := len(ks) - 1; i >= 0; i-- {
		b = append(appendString(b, ks[i]), ':')
		b = appendString(b, ms.values[ks[i]])
		if i > 0 {
			b = append(b, ',')
		}
	}
	return b
}

// metaEdits plans the edits that set metas in params._meta; created is true
// when the line has no params and the last edit writes them.
func metaEdits(line []byte, params Span, metas []Member) (edits []edit, created bool, err error) {
	ms := newMetaSet(metas)
	if k := foldClash(ms.keys, nil); k != "" {
		return nil, false, fmt.Errorf("set meta: two members to set, %s among them, have names equal under case folding", Cut(quoteText(k)))
	}
	if !params.Present() {
		end := len(line) - 1
		for end > 0 && isWS(line[end]) {
			end--
		}
		if end <= 0 || line[end] != '}' {
			return nil, false, errors.New("set meta: end is not the closing brace")
		}
		ins := append([]byte(`,"params":{"_meta":{`), ms.members(ms.keys)...)
		ins = append(ins, "}}"...)
		return []edit{{at: end, ins: ins}}, true, nil
	}
	if line[params.Start] != '{' {
		return nil, false, errors.New("set meta: params is not an object")
	}
	var meta Span
	_, err = eachMember(line[:params.End], params.Start, func(name []byte, _, vs, ve int) bool {
		if string(name) == "_meta" {
			meta = Span{vs, ve}
			return false
		}
		return true
	})
	if err != nil {
		return nil, false, fmt.Errorf("set meta: params: %w", err)
	}
	if !meta.Present() {
		ins := append([]byte(`"_meta":{`), ms.members(ms.keys)...)
		ins = append(ins, '}')
		if line[skipWS(line, params.Start+1)] != '}' {
			ins = append(ins, ',')
		}
		return []edit{{at: params.Start + 1, ins: ins}}, false, nil
	}
	edits, err = ms.inMeta(line, meta)
	return edits, false, err
}

// inMeta plans the edits of an existing params._meta at meta: a key there
// (its name written exactly so) gets its value replaced, the others go in
// at the front.
func (ms metaSet) inMeta(line []byte, meta Span) ([]edit, error) {
	if line[meta.Start] != '{' {
		return nil, errors.New("set meta: params._meta is not an object")
	}
	old := make(map[string]Span, len(ms.keys))
	names := map[string]bool{} // the folded names of _meta's members
	_, err := eachMember(line[:meta.End], meta.Start, func(name []byte, _, vs, ve int) bool {
		names[FoldKey(string(name))] = true
		if _, wanted := ms.values[string(name)]; wanted {
			if _, found := old[string(name)]; !found {
				old[string(name)] = Span{vs, ve}
			}
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("set meta: params._meta: %w", err)
	}
	var edits []edit
	var fresh []string
	for _, k := range ms.keys {
		if sp, found := old[k]; found {
			edits = append(edits, edit{at: sp.Start, del: sp.End - sp.Start, ins: appendString(nil, ms.values[k])})
		} else {
			fresh = append(fresh, k)
		}
	}
	if k := foldClash(fresh, names); k != "" {
		return nil, fmt.Errorf("set meta: params._meta holds a member whose name equals %s under case folding", Cut(quoteText(k)))
	}
	if len(fresh) > 0 {
		ins := ms.members(fresh)
		if line[skipWS(line, meta.Start+1)] != '}' {
			ins = append(ins, ',')
		}
		edits = append(edits, edit{at: meta.Start + 1, ins: ins})
	}
	slices.SortFunc(edits, func(a, b edit) int { return a.at - b.at })
	return edits, nil
}

// foldClash is the first key of fresh whose name, as written, equals under
// case folding another of fresh or a name in names; "" when none does. A
// line with two such names is one Inspect refuses.
func foldClash(fresh []string, names map[string]bool) string {
	seen := make(map[string]bool, len(names)+len(fresh))
	for n := range names {
		seen[n] = true
	}
	for _, k := range fresh {
		w := appendString(nil, k)
		f := FoldKey(string(decodeString(w[1 : len(w)-1])))
		if seen[f] {
			return k
		}
		seen[f] = true
	}
	return ""
}

// applyEdits makes the edited line in one copy; edits are sorted by at and
// do not overlap.
func applyEdits(line []byte, edits []edit) []byte {
	n := len(line)
	for _, e := range edits {
		n += len(e.ins) - e.del
	}
	out := make([]byte, 0, n)
	last := 0
	for _, e := range edits {
		out = append(out, line[last:e.at]...)
		out = append(out, e.ins...)
		last = e.at + e.del
	}
	return append(out, line[last:]...)
}
