package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Settings may also be written in YAML: a file whose name ends in ".yaml"
// or ".yml" is turned into JSON text and read by the same strict reader, so
// a member named twice or not known is refused as in JSON, at the same
// place. What JSON cannot say the same way is refused: anchors and aliases,
// "<<" merges, tags other than the core ones, member names that are not
// text, more than one document, numbers JSON has not (.inf, .nan), whole
// numbers YAML 1.1 and 1.2 read differently (017, 1_000, 0b1), and a %YAML
// directive. A float is never taken where a whole number is asked (1.0).

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
	if err := yamlVersion(data); err != nil {
		return nil, err
	}
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

// yamlVersion refuses a %YAML directive: the reader here follows YAML 1.2
// (on, yes and 017 are text and 17) but takes only "%YAML 1.1" (and
// refuses 1.2), and a file that says 1.1 would be read by a 1.1 reader
// as true and 15.
func yamlVersion(data []byte) error {
	for line := range bytes.Lines(data) {
		line = bytes.TrimRight(bytes.TrimPrefix(line, []byte("\uFEFF")), " \t\r\n")
		if bytes.HasPrefix(line, []byte("%YAML")) {
			return &Error{Reason: fmt.Sprintf("%q: leave the directive out: the settings are read as YAML 1.2", line)}
		}
		if bytes.HasPrefix(line, []byte("---")) || (len(line) > 0 && line[0] != '%' && line[0] != '#') {
			return nil // directives come only before the document
		}
	}
	return nil
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
		if !yamlIntRE.MatchString(n.Value) {
			return yamlErr(n, "%q is read differently by YAML 1.1 and 1.2 readers: write plain digits (or 0x…, 0o…)", n.Value)
		}
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
		// Kept a fraction: 1.0 and 1e3 are not whole numbers in JSON, and
		// are not read as such here either.
		text := strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(text, ".e") {
			text += ".0"
		}
		out.WriteString(text)
	default:
		return yamlErr(n, "the tag %s is not allowed: write the value as text", tag)
	}
	return nil
}

// yamlIntRE is the whole numbers every YAML reader reads alike: decimal
// without a leading zero (YAML 1.1 reads 017 as octal 15, 1.2 as 17),
// 0x hexadecimal and 0o octal; no "_" (1.1 drops it, 1.2 reads text) and
// no 0b (1.1 only).
var yamlIntRE = regexp.MustCompile(`^[-+]?(0|[1-9][0-9]*|0x[0-9a-fA-F]+|0o[0-7]+)$`)

func writeJSONString(out *bytes.Buffer, s string) {
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)           // a string always encodes, and a bytes.Buffer takes every write
	out.Truncate(out.Len() - 1) // the encoder's newline
}
