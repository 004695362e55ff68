package held

import (
	"encoding/json"

	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// StripInput takes inputResponses[red.prova/approval] (and inputResponses
// when nothing else is left in it) and a requestState naming the request id
// out of a tools/call line.
func StripInput(line []byte, m *wire.Message, id string) ([]byte, error) {
	var p map[string]json.RawMessage
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return nil, err
	}
	var ir map[string]json.RawMessage
	if err := json.Unmarshal(p["inputResponses"], &ir); err != nil {
		return nil, err
	}
	delete(ir, approval.InputKey)
	if len(ir) == 0 {
		delete(p, "inputResponses")
	} else {
		b, err := json.Marshal(ir)
		if err != nil {
			return nil, err
		}
		p["inputResponses"] = b
	}
	if rs, ok := p["requestState"]; ok {
		if v, _ := wire.Unquote(rs); v == id {
			delete(p, "requestState")
		}
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	return wire.SpliceID(line, m.ParamsSpan, b), nil
}
