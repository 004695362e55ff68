package boot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/slip"
	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
)

// LoadSlip reads the slip file and checks it: signed by a trusted passkey,
// for the agent keys held, naming the executor's keys under its service id.
func LoadSlip(set *settings.Settings, agentKeys, execKeys jwk.KeySet) (*slip.Slip, error) {
	v, err := ReadSlipFile(set.Agent.Slip)
	if err != nil {
		return nil, err
	}
	sl, res := slip.Check(v, slip.Options{IssuerKeys: set.Agent.IssuerKeys})
	if !res.Sound() || sl == nil {
		if len(res.Problems) > 0 {
			return nil, fmt.Errorf("slip %s does not check: %w", set.Agent.Slip, res.Problems[0])
		}
		return nil, fmt.Errorf("slip %s: its signature could not be checked (%s)", set.Agent.Slip, res.Signature.State)
	}
	if !sl.Agent.Keys.Equal(agentKeys) {
		return nil, fmt.Errorf("slip %s is for other agent keys than the ones the settings name (agent.keys)", set.Agent.Slip)
	}
	svc, ok := sl.Service(set.Service)
	if !ok {
		return nil, fmt.Errorf("slip %s names no service %q in its with; the executor's service id must be there", set.Agent.Slip, set.Service)
	}
	if svc.Keys == nil || !svc.Keys.Equal(execKeys) {
		return nil, fmt.Errorf("slip %s: the service %q in its with does not hold the executor's keys (executor.keys)", set.Agent.Slip, set.Service)
	}
	return sl, nil
}

// ReadSlipFile reads a slip file as a canonical value (a slip's JSON as
// signed, however it is spaced).
func ReadSlipFile(path string) (any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading slip %s: %w", path, err)
	}
	v, err := decodeEnvelope(data)
	if err != nil {
		return nil, fmt.Errorf("reading slip %s: %w", path, err)
	}
	return v, nil
}

// decodeEnvelope reads a record's JSON as a canonical value (objects,
// lists, strings, whole numbers), however it is spaced.
func decodeEnvelope(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("text after the record")
	}
	return canonicalValue(v)
}

func canonicalValue(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			c, err := canonicalValue(x)
			if err != nil {
				return nil, err
			}
			t[k] = c
		}
		return t, nil
	case []any:
		for i, x := range t {
			c, err := canonicalValue(x)
			if err != nil {
				return nil, err
			}
			t[i] = c
		}
		return t, nil
	case string:
		return t, nil
	case json.Number:
		n, err := t.Int64()
		if err != nil || n < 0 {
			return nil, fmt.Errorf("the number %s is not a whole number a record may hold", t)
		}
		return n, nil
	}
	return nil, fmt.Errorf("a value of type %T is not one a record may hold", v)
}
