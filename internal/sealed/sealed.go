// Package sealed writes and reads a small state record as one canonical
// JSON line (receipts/canon) tagged with HMAC-SHA256: the executor's
// checkpoints of its book and of its copy. Each kind of record is tagged
// under a key derived from the key given and the record's type, so two
// kinds, or a record and a copy line, are never tagged under the same key.
package sealed

import (
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"

	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// MinKey is the shortest key a record is sealed under.
const MinKey = 16

// derive is the key records of type typ are tagged under.
func derive(key []byte, typ string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(typ))
	return m.Sum(nil)
}

// Seal writes body with a "type" member typ and a "tag" member, in
// canonical form, then a line feed. body must not hold either member.
func Seal(typ string, key []byte, body map[string]any) ([]byte, error) {
	if len(key) < MinKey {
		return nil, fmt.Errorf("sealing %s: the key is shorter than %d bytes", typ, MinKey)
	}
	if _, ok := body["type"]; ok {
		return nil, fmt.Errorf("sealing %s: the body holds a type member", typ)
	}
	if _, ok := body["tag"]; ok {
		return nil, fmt.Errorf("sealing %s: the body holds a tag member", typ)
	}
	full := make(map[string]any, len(body)+2)
	for k, v := range body {
		full[k] = v
	}
	full["type"] = typ
	text, err := canon.Marshal(full)
	if err != nil {
		return nil, fmt.Errorf("sealing %s: %w", typ, err)
	}
	m := hmac.New(sha256.New, derive(key, typ))
	m.Write(text)
	full["tag"] = canon.B64(m.Sum(nil))
	out, err := canon.Marshal(full)
	if err != nil {
		return nil, fmt.Errorf("sealing %s: %w", typ, err)
	}
	return append(out, '\n'), nil
}

// Open reads a line Seal wrote for typ under key and returns its members
// other than type and tag. It fails, saying why, when the text is not one
// canonical JSON object, when its tag does not check under key (changed,
// or sealed under another key), or when its type is not typ.
func Open(typ string, key []byte, data []byte) (map[string]any, error) {
	if len(key) < MinKey {
		return nil, fmt.Errorf("the key is shorter than %d bytes", MinKey)
	}
	if n := len(data); n > 0 && data[n-1] == '\n' {
		data = data[:n-1]
	}
	v, err := canon.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("not one canonical JSON line (%w)", err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	tagText, _ := obj["tag"].(string)
	delete(obj, "tag")
	text, err := canon.Marshal(obj)
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, derive(key, typ))
	m.Write(text)
	tag, err := canon.UnB64(tagText)
	if err != nil || !hmac.Equal(tag, m.Sum(nil)) {
		return nil, errors.New("its tag does not check under the key (changed, or written under another key)")
	}
	if obj["type"] != typ {
		return nil, fmt.Errorf("its type is not %s", typ)
	}
	delete(obj, "type")
	return obj, nil
}
