package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// jnode is one value of a JSON document being redacted.
type jnode struct {
	kind  byte   // '{', '[', '"' (a string) or 'v' (a number, true, false or null)
	raw   []byte // the value as the document has it
	text  string // '"': the string
	shown string // '"': what is written for it
	done  bool   // '"': shown is final (a whole-value token): no split check
	names []string
	kids  []*jnode
	// secret: the value is under a secret name and written whole as a
	// token (or as it is: null, "", a token).
	secret bool
}

// JSON returns a redacted copy of the JSON document doc (any JSON value; in
// practice a call's arguments). doc is not modified. An error means doc is
// not one JSON value.
func (r *Redactor) JSON(doc []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	p := &jparser{dec: dec, doc: doc}
	root, err := p.value()
	if err != nil {
		return nil, fmt.Errorf("redact arguments: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("redact arguments: more after the JSON value")
	}
	call := r.redactTree(root, p)
	var out bytes.Buffer
	if err := r.write(&out, root, &call); err != nil {
		return nil, fmt.Errorf("redact arguments: %w", err)
	}
	return out.Bytes(), nil
}

// jparser reads a document into jnodes, with each value's own bytes.
type jparser struct {
	dec    *json.Decoder
	doc    []byte
	leaves []*jnode // string values in document order
	names  []string // every member name
}

func (p *jparser) value() (*jnode, error) {
	from := p.dec.InputOffset()
	tok, err := p.dec.Token()
	if err != nil {
		return nil, err
	}
	n := &jnode{}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n.kind = '{'
			if err := p.object(n); err != nil {
				return nil, err
			}
		case '[':
			n.kind = '['
			for p.dec.More() {
				k, err := p.value()
				if err != nil {
					return nil, err
				}
				n.kids = append(n.kids, k)
			}
			if _, err := p.dec.Token(); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unexpected %q", t)
		}
	case string:
		n.kind, n.text = '"', t
		p.leaves = append(p.leaves, n)
	default:
		n.kind = 'v'
	}
	n.raw = bytes.TrimLeft(p.doc[from:p.dec.InputOffset()], " \t\r\n:,")
	return n, nil
}

// object reads the members of an object whose '{' was read, and its '}'.
func (p *jparser) object(n *jnode) error {
	for p.dec.More() {
		kt, err := p.dec.Token()
		if err != nil {
			return err
		}
		name, ok := kt.(string)
		if !ok {
			return errors.New("a member name that is not text")
		}
		k, err := p.value()
		if err != nil {
			return err
		}
		n.names = append(n.names, name)
		n.kids = append(n.kids, k)
		p.names = append(p.names, name)
	}
	_, err := p.dec.Token()
	return err
}

// redactTree decides what is shown for every string and secret value of
// the tree p read: values under secret names whole, every other string by
// the detectors in the call's context, then the split check. It returns
// the call's context, in which member names are shown.
func (r *Redactor) redactTree(root *jnode, p *jparser) scan {
	r.markSecrets(root)
	call := scan{}
	for _, s := range p.names {
		call.awsKeyID = call.awsKeyID || hasAWSKeyID(s)
	}
	var open []*jnode
	for _, l := range p.leaves {
		if l.secret || l.done {
			continue
		}
		call.awsKeyID = call.awsKeyID || hasAWSKeyID(l.text)
		open = append(open, l)
	}
	for _, l := range open {
		l.shown = r.text(l.text, &call)
	}
	// A key id the decoders found (URL-encoded, say) is context too.
	if !call.awsKeyID {
		for _, l := range open {
			if hasAWSKeyID(l.shown) {
				call.awsKeyID = true
				break
			}
		}
		if call.awsKeyID {
			for _, l := range open {
				l.shown = r.text(l.shown, &call)
			}
		}
	}
	r.splits(open, &call)
	return call
}

// markSecrets marks the values under secret names, and under the names of
// userPartners in an object that names a user.
func (r *Redactor) markSecrets(n *jnode) {
	if n.kind == '{' {
		user := false
		for _, name := range n.names {
			if namesUser(FoldName(name)) && !isToken(name) {
				user = true
				break
			}
		}
		for i, name := range n.names {
			k := n.kids[i]
			if r.IsKey(name) || r.builtin && user && !isToken(name) && isUserPartner(FoldName(name)) {
				k.secret = true
			}
		}
	}
	for _, k := range n.kids {
		if k.secret {
			markDone(k)
			continue
		}
		r.markSecrets(k)
	}
}

// markDone marks every string under a secret value as decided (it is not
// written on its own).
func markDone(n *jnode) {
	if n.kind == '"' {
		n.done = true
	}
	for _, k := range n.kids {
		markDone(k)
	}
}

// splitWindow is how much of a member's text beside the join the split
// check reads; splitMiddle is the longest middle member of three joined.
const (
	splitWindow = 256
	splitMiddle = 64
)

// splits is the split check: consecutive string values (two, or three
// with a middle one of at most splitMiddle bytes) joined. A secret the detectors find in the
// joined text that they do not find in its pieces alone is a split: each
// value the secret's bytes stand in becomes a split token of its own text.
func (r *Redactor) splits(leaves []*jnode, call *scan) {
	if len(leaves) < 2 {
		return
	}
	sc := *call
	sc.joined = true
	for i := 0; i+1 < len(leaves); i++ {
		for k := 2; k <= 3 && i+k <= len(leaves); k++ {
			group := leaves[i : i+k]
			if k == 3 && len(group[1].shown) > splitMiddle {
				break
			}
			for _, j := range splitIn(r, group, &sc) {
				l := group[j]
				l.shown, l.done = r.token(KindSplit, l.text), true
			}
		}
	}
}

// splitIn is which values of the group hold part of a secret found only in
// their joined text.
func splitIn(r *Redactor, group []*jnode, sc *scan) []int {
	pieces := make([]string, len(group))
	for j, l := range group {
		if l.done || l.shown == "" || isToken(l.shown) {
			return nil
		}
		switch j {
		case 0:
			pieces[j] = tailOf(l.shown, splitWindow)
		case len(group) - 1:
			pieces[j] = headOf(l.shown, splitWindow)
		default:
			pieces[j] = l.shown
		}
	}
	var b strings.Builder
	from := make([]int, len(pieces)+1)
	for j, p := range pieces {
		from[j] = b.Len()
		b.WriteString(p)
	}
	from[len(pieces)] = b.Len()
	// A value is shown as the detectors leave it, so a whole one gives
	// nothing alone; only a piece cut from a longer one may.
	alone := make([][]Found, len(pieces))
	for j, p := range pieces {
		if len(p) < len(group[j].shown) {
			alone[j] = r.find(p, sc, false)
		}
	}
	var marked []int
	for _, f := range r.find(b.String(), sc, false) {
		if foundAlone(f, from, alone) || f.Kind == KindPassword && !loneName(f, from, pieces) {
			continue
		}
		for j := range pieces {
			if f.Start < from[j+1] && from[j] < f.End && !slices.Contains(marked, j) {
				marked = append(marked, j)
			}
		}
	}
	return marked
}

// lonePairName is a value that is only a pair's name and separator.
var lonePairName = regexp.MustCompile(`^\s*[\pL\pN_.-]+["']?\s*[:=]\s*$`)

// loneName reports whether the pair f found across a join has its name
// alone in the piece before the one its value begins: {"k": "password=",
// "v": "hunter2"}, not {"title": "Reset password:", "body": "Click here"}.
func loneName(f Found, from []int, pieces []string) bool {
	for j := 1; j < len(pieces); j++ {
		if f.Start >= from[j] && f.Start < from[j+1] {
			return strings.TrimSpace(pieces[j][:f.Start-from[j]]) == "" && lonePairName.MatchString(pieces[j-1])
		}
	}
	return false
}

// foundAlone reports whether f, found in the joined pieces, lies in one
// piece that gives the same find alone.
func foundAlone(f Found, from []int, alone [][]Found) bool {
	for j := range alone {
		if f.Start < from[j] || f.End > from[j+1] {
			continue
		}
		for _, g := range alone[j] {
			if g.Kind == f.Kind && g.Start+from[j] == f.Start && g.End+from[j] == f.End {
				return true
			}
		}
	}
	return false
}

// tailOf is about the last n bytes of s, never starting inside a token.
func tailOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := len(s) - n
	for _, g := range gaps(s) {
		if g[0] <= cut && cut < g[1] {
			return s[cut:]
		}
		if g[0] > cut {
			return s[g[0]:]
		}
	}
	return ""
}

// headOf is about the first n bytes of s, never ending inside a token.
func headOf(s string, n int) string {
	if len(s) <= n {
		return s
	}
	end := 0
	for _, g := range gaps(s) {
		if g[0] >= n {
			break
		}
		if g[1] >= n {
			return s[:n]
		}
		end = g[1]
	}
	return s[:end]
}

func writeString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes, and a bytes.Buffer takes every write
	out.Truncate(out.Len() - 1) // the encoder's newline
}

// write writes the redacted tree.
func (r *Redactor) write(out *bytes.Buffer, n *jnode, call *scan) error {
	if n.secret {
		return r.writeSecret(out, n)
	}
	switch n.kind {
	case '{':
		out.WriteByte('{')
		for i, name := range n.names {
			if i > 0 {
				out.WriteByte(',')
			}
			writeString(out, r.name(name, call))
			out.WriteByte(':')
			if err := r.write(out, n.kids[i], call); err != nil {
				return err
			}
		}
		out.WriteByte('}')
	case '[':
		out.WriteByte('[')
		for i, k := range n.kids {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := r.write(out, k, call); err != nil {
				return err
			}
		}
		out.WriteByte(']')
	case '"':
		writeString(out, n.shown)
	default:
		out.Write(n.raw)
	}
	return nil
}

// writeSecret writes a value under a secret name, redacted whole (null, ""
// and a token stay as they are).
func (r *Redactor) writeSecret(out *bytes.Buffer, n *jnode) error {
	if n.kind == 'v' && string(n.raw) == "null" {
		out.WriteString("null")
		return nil
	}
	s, err := secretOfJSON(n.raw)
	if err != nil {
		return err
	}
	if n.kind == '"' && (s == "" || isToken(s)) {
		writeString(out, s)
		return nil
	}
	writeString(out, r.token(KindKey, s))
	return nil
}
