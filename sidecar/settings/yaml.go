package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Settings may also be written in YAML: a file whose name ends in ".yaml"
// or ".yml" is turned into JSON text and read by the same strict reader, so
// a member named twice or not known is refused as in JSON, at the same
// place. What JSON cannot say the same way is refused: anchors and aliases,
// "<<" merges, tags other than the core ones, member names that are not
// text, more than one document, and numbers JSON has not (.inf, .nan).

// IsYAML reports whether file is read as YAML (by its name).
func IsYAML(file string) bool {
	ext := strings.ToLower(filepath.Ext(file))
	return ext == ".yaml" || ext == ".yml"
}

func yamlErr(n *yaml.Node, format string, args ...any) error {
	return &Error{Reason: fmt.Sprintf("YAML line %d column %d: ", n.Line, n.Column) + fmt.Sprintf(format, args...)}
}

// yamlToJSON converts one YAML document to JSON text, member order kept
// and members named twice kept (for the JSON reader to refuse by place).
func yamlToJSON(data []byte) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &Error{Reason: "empty: the YAML holds no document"}
		}
		return nil, &Error{Reason: "not YAML: " + err.Error()}
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, &Error{Reason: "not YAML: " + err.Error()}
		}
		return nil, yamlErr(&more, "a second document: the settings are one document")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, &Error{Reason: "not YAML: no document"}
	}
	var out bytes.Buffer
	if err := yamlValue(&out, doc.Content[0], 0); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func yamlValue(out *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > 64 {
		return yamlErr(n, "nested too deeply")
	}
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return yamlErr(n, "anchors and aliases (&, *) are not allowed: write the value out")
	}
	switch n.Kind {
	case yaml.MappingNode:
		if n.Tag != "" && n.Tag != "!!map" && n.Tag != "!" {
			return yamlErr(n, "the tag %s is not allowed", n.Tag)
		}
		out.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind != yaml.ScalarNode || k.ShortTag() != "!!str" {
				if k.ShortTag() == "!!merge" {
					return yamlErr(k, `"<<" merges are not allowed: write the members out`)
				}
				return yamlErr(k, "a member name must be text: write it in quotes")
			}
			if k.Anchor != "" {
				return yamlErr(k, "anchors and aliases (&, *) are not allowed: write the value out")
			}
			if i > 0 {
				out.WriteByte(',')
			}
			writeJSONString(out, k.Value)
			out.WriteByte(':')
			if err := yamlValue(out, v, depth+1); err != nil {
				return err
			}
		}
		out.WriteByte('}')
	case yaml.SequenceNode:
		if n.Tag != "" && n.Tag != "!!seq" && n.Tag != "!" {
			return yamlErr(n, "the tag %s is not allowed", n.Tag)
		}
		out.WriteByte('[')
		for i, e := range n.Content {
			if i > 0 {
				out.WriteByte(',')
			}
			if err := yamlValue(out, e, depth+1); err != nil {
				return err
			}
		}
		out.WriteByte(']')
	case yaml.ScalarNode:
		return yamlScalar(out, n)
	default:
		return yamlErr(n, "not a value")
	}
	return nil
}

func yamlScalar(out *bytes.Buffer, n *yaml.Node) error {
	switch tag := n.ShortTag(); tag {
	case "!!str":
		writeJSONString(out, n.Value)
	case "!!null":
		out.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return yamlErr(n, "not true or false")
		}
		out.WriteString(strconv.FormatBool(b))
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			return yamlErr(n, "a whole number out of range")
		}
		out.WriteString(strconv.FormatInt(i, 10))
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return yamlErr(n, "%q is not a number JSON can hold", n.Value)
		}
		out.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	default:
		return yamlErr(n, "the tag %s is not allowed: write the value as text", tag)
	}
	return nil
}

func writeJSONString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes, and a bytes.Buffer takes every write
	out.Truncate(out.Len() - 1) // the encoder's newline
}
