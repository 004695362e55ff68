package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// node is one JSON value of the settings, with its place for messages.
type node struct {
	place string
	kind  byte // '{', '[', '"', 'n' (number), 'b' (bool), '0' (null)
	obj   []member
	arr   []*node
	str   string
	num   json.Number
	bool  bool
}

type member struct {
	name string
	val  *node
}

// decodeTree reads data as one JSON value, refusing a member named twice.
func decodeTree(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n, err := decodeValue(dec, "", 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &Error{Reason: "more after the settings object"}
	}
	return n, nil
}

var identRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func childPlace(parent, name string) string {
	if !identRE.MatchString(name) {
		b, _ := json.Marshal(name)
		return parent + "[" + string(b) + "]"
	}
	if parent == "" {
		return name
	}
	return parent + "." + name
}

func indexPlace(parent string, i int) string { return fmt.Sprintf("%s[%d]", parent, i) }

func syntaxErr(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &Error{Reason: fmt.Sprintf("not JSON: %v (byte %d)", se, se.Offset)}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &Error{Reason: "not JSON: unexpected end"}
	}
	return &Error{Reason: "not JSON: " + err.Error()}
}

func decodeValue(dec *json.Decoder, place string, depth int) (*node, error) {
	if depth > 64 {
		return nil, &Error{Place: place, Reason: "nested too deeply"}
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxErr(err)
	}
	n := &node{place: place}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			n.kind = '{'
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, syntaxErr(err)
				}
				name, ok := kt.(string)
				if !ok {
					return nil, &Error{Place: place, Reason: "not JSON: expected a member name"}
				}
				cp := childPlace(place, name)
				if seen[name] {
					return nil, &Error{Place: cp, Reason: "member given twice"}
				}
				seen[name] = true
				v, err := decodeValue(dec, cp, depth+1)
				if err != nil {
					return nil, err
				}
				n.obj = append(n.obj, member{name, v})
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxErr(err)
			}
		case '[':
			n.kind = '['
			for i := 0; dec.More(); i++ {
				v, err := decodeValue(dec, indexPlace(place, i), depth+1)
				if err != nil {
					return nil, err
				}
				n.arr = append(n.arr, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxErr(err)
			}
		default:
			return nil, &Error{Place: place, Reason: "not JSON"}
		}
	case string:
		n.kind, n.str = '"', t
	case json.Number:
		n.kind, n.num = 'n', t
	case bool:
		n.kind, n.bool = 'b', t
	case nil:
		n.kind = '0'
	}
	return n, nil
}

func kindName(k byte) string {
	switch k {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case '"':
		return "text"
	case 'n':
		return "a number"
	case 'b':
		return "true or false"
	}
	return "null"
}

// object reads an object node, refusing members not in allowed.
type object struct {
	n    *node
	seen map[string]*node
}

func asObject(n *node, allowed ...string) (*object, error) {
	if n.kind != '{' {
		return nil, &Error{Place: n.place, Reason: "must be an object, not " + kindName(n.kind)}
	}
	o := &object{n: n, seen: map[string]*node{}}
	for _, m := range n.obj {
		ok := allowed == nil
		for _, a := range allowed {
			if a == m.name {
				ok = true
				break
			}
		}
		if !ok {
			return nil, &Error{Place: m.val.place, Reason: "not a known member (known: " + strings.Join(allowed, ", ") + ")"}
		}
		o.seen[m.name] = m.val
	}
	return o, nil
}

func (o *object) get(name string) *node { return o.seen[name] }

func (o *object) place(name string) string { return childPlace(o.n.place, name) }

func (o *object) required(name string) (*node, error) {
	v := o.seen[name]
	if v == nil {
		return nil, &Error{Place: o.place(name), Reason: "missing"}
	}
	return v, nil
}

func (n *node) text() (string, error) {
	if n.kind != '"' {
		return "", &Error{Place: n.place, Reason: "must be text, not " + kindName(n.kind)}
	}
	return n.str, nil
}

func (n *node) nonEmptyText() (string, error) {
	s, err := n.text()
	if err == nil && s == "" {
		err = &Error{Place: n.place, Reason: "must not be empty"}
	}
	return s, err
}

func (n *node) boolean() (bool, error) {
	if n.kind != 'b' {
		return false, &Error{Place: n.place, Reason: "must be true or false, not " + kindName(n.kind)}
	}
	return n.bool, nil
}

var digitsRE = regexp.MustCompile(`^(0|[1-9][0-9]{0,17})$`)

// whole reads a whole number written as plain digits, from lo to hi.
func (n *node) whole(lo, hi int64) (int64, error) {
	if n.kind != 'n' {
		return 0, &Error{Place: n.place, Reason: "must be a whole number, not " + kindName(n.kind)}
	}
	s := n.num.String()
	if !digitsRE.MatchString(s) {
		return 0, &Error{Place: n.place, Reason: fmt.Sprintf("must be a whole number from %d to %d", lo, hi)}
	}
	v, err := n.num.Int64()
	if err != nil || v < lo || v > hi {
		return 0, &Error{Place: n.place, Reason: fmt.Sprintf("must be a whole number from %d to %d", lo, hi)}
	}
	return v, nil
}

func (n *node) texts() ([]string, error) {
	if n.kind != '[' {
		return nil, &Error{Place: n.place, Reason: "must be a list, not " + kindName(n.kind)}
	}
	out := make([]string, 0, len(n.arr))
	for _, e := range n.arr {
		s, err := e.text()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// Place names the member name of the object at parent as a settings error
// does: parent.name, or parent["name"] where the name is no identifier
// (tools["fs.read_*"]).
func Place(parent, name string) string { return childPlace(parent, name) }
