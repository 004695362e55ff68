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
	meta, err := findMeta(line, params)
	if err != nil {
		return nil, err
	}
	edits, _, err := metaEdits(line, params, meta, metas)
	if err != nil {
		return nil, err
	}
	return applyEdits(line, edits), nil
}

// EditRequest returns a request line with its id replaced by newID (a JSON
// value; nil keeps the id) and metas set in params._meta as [SetMetas]
// sets them, together with its Message, made from the edits and m (the
// line is not read again; only params._meta is walked, where metas go).
// m is the Message Inspect gave for line.
func EditRequest(line []byte, m *Message, newID []byte, metas []Member) ([]byte, *Message, error) {
	if m.Kind != KindRequest {
		return nil, nil, errors.New("edit request: the message is not a request")
	}
	var edits []edit
	if newID != nil {
		edits = append(edits, edit{at: m.IDSpan.Start, del: m.IDSpan.End - m.IDSpan.Start, ins: newID})
	}
	var made madeMeta // where a _meta (and params) written afresh stands in its edit
	madeAt := 0       // and that edit's offset in line
	if len(metas) > 0 {
		mes, mm, err := metaEdits(line, m.ParamsSpan, m.MetaSpan, metas)
		if err != nil {
			return nil, nil, err
		}
		edits = append(edits, mes...)
		if made = mm; made.made() {
			madeAt = edits[len(edits)-1].at
		}
	}
	slices.SortStableFunc(edits, func(a, b edit) int { return a.at - b.at })
	out := applyEdits(line, edits)
	nm := m.moved(edits)
	if made.made() {
		// The text went in at madeAt, an insertion: it begins where the
		// offset lands less its own length.
		at := shiftedBy(edits, madeAt) - made.insLen
		if made.params.Present() {
			nm.ParamsSpan = Span{at + made.params.Start, at + made.params.End}
		}
		nm.MetaSpan = Span{at + made.meta.Start, at + made.meta.End}
	}
	nm.slice(out)
	return out, nm, nil
}

// shiftedBy is where offset o of a line is in the line edits (sorted, not
// overlapping) make of it: every edit that ends at or before o moves it by
// its change of length.
func shiftedBy(edits []edit, o int) int {
	n := o
	for _, e := range edits {
		if e.at+e.del <= o {
			n += len(e.ins) - e.del
		}
	}
	return n
}

// moved is m with its spans moved as edits move their bytes; its slices
// are set by slice once the new line is made.
func (m *Message) moved(edits []edit) *Message {
	mv := func(s Span) Span {
		if !s.Present() {
			return Span{}
		}
		return Span{shiftedBy(edits, s.Start), shiftedBy(edits, s.End)}
	}
	return &Message{Kind: m.Kind, Method: m.Method, End: shiftedBy(edits, m.End),
		IDSpan: mv(m.IDSpan), ParamsSpan: mv(m.ParamsSpan), ResultSpan: mv(m.ResultSpan), ErrorSpan: mv(m.ErrorSpan),
		NameSpan: mv(m.NameSpan), ArgumentsSpan: mv(m.ArgumentsSpan), MetaSpan: mv(m.MetaSpan)}
}

// slice sets m's byte slices from its spans in line.
func (m *Message) slice(line []byte) {
	part := func(s Span) []byte {
		if !s.Present() {
			return nil
		}
		return line[s.Start:s.End]
	}
	m.ID, m.Params, m.Result, m.Error = part(m.IDSpan), part(m.ParamsSpan), part(m.ResultSpan), part(m.ErrorSpan)
}

// madeMeta says where, in the text of the one edit that writes a _meta the
// line did not have (and params with it when it had none), the values of
// _meta and params stand; zero when no _meta is written afresh.
type madeMeta struct {
	insLen       int  // the edit's length
	params, meta Span // offsets within its text; params zero when params was there
}

func (mm madeMeta) made() bool { return mm.meta.Present() }

// findMeta finds params._meta in line; the zero Span when params names none.
func findMeta(line []byte, params Span) (Span, error) {
	if !params.Present() || line[params.Start] != '{' {
		return Span{}, nil
	}
	var meta Span
	_, err := eachMember(line[:params.End], params.Start, func(name []byte, _, vs, ve int) bool {
		if string(name) == "_meta" {
			meta = Span{vs, ve}
			return false
		}
		return true
	})
	if err != nil {
		return Span{}, fmt.Errorf("set meta: params: %w", err)
	}
	return meta, nil
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

// metaEdits plans the edits that set metas in params._meta, meta being
// where params._meta is (the zero Span when params names none); made says
// where a _meta the line did not have goes, in the last edit.
func metaEdits(line []byte, params, meta Span, metas []Member) (edits []edit, made madeMeta, err error) {
	ms := newMetaSet(metas)
	if k := foldClash(ms.keys, nil); k != "" {
		return nil, madeMeta{}, fmt.Errorf("set meta: two members to set, %s among them, have names equal under case folding", Cut(quoteText(k)))
	}
	if !params.Present() {
		end := len(line) - 1
		for end > 0 && isWS(line[end]) {
			end--
		}
		if end <= 0 || line[end] != '}' {
			return nil, madeMeta{}, errors.New("set meta: end is not the closing brace")
		}
		const head = `,"params":{"_meta":`
		members := ms.members(ms.keys)
		ins := append(append(append([]byte(head), '{'), members...), "}}"...)
		made = madeMeta{insLen: len(ins), params: Span{len(`,"params":`), len(ins)},
			meta: Span{len(head), len(head) + len(members) + 2}}
		return []edit{{at: end, ins: ins}}, made, nil
	}
	if line[params.Start] != '{' {
		return nil, madeMeta{}, errors.New("set meta: params is not an object")
	}
	if !meta.Present() {
		const head = `"_meta":`
		members := ms.members(ms.keys)
		ins := append(append(append([]byte(head), '{'), members...), '}')
		made = madeMeta{meta: Span{len(head), len(ins)}}
		if line[skipWS(line, params.Start+1)] != '}' {
			ins = append(ins, ',')
		}
		made.insLen = len(ins)
		return []edit{{at: params.Start + 1, ins: ins}}, made, nil
	}
	edits, err = ms.inMeta(line, meta)
	return edits, madeMeta{}, err
}

// inMeta plans the edits of an existing params._meta at meta: a key there
// (its name written exactly so) gets its value replaced, the others go in
// at the front.
func (ms metaSet) inMeta(line []byte, meta Span) ([]edit, error) {
	if line[meta.Start] != '{' {
		return nil, errors.New("set meta: params._meta is not an object")
	}
	noteRead(ReadMeta, line[meta.Start:meta.End])
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
