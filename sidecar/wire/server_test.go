package wire

import (
	"errors"
	"testing"
)

func TestReadServerLine(t *testing.T) {
	good := []struct {
		line   string
		kind   Kind
		id     string
		isText bool
	}{
		{`{"jsonrpc":"2.0","id":"provared-1-7","result":{}}`, KindResponse, "provared-1-7", true},
		{`{"jsonrpc":"2.0","id":"a\u002fb","error":{"code":-1,"message":"x"}}`, KindResponse, "a/b", true},
		{`{"jsonrpc":"2.0","id":7,"result":{}}`, KindResponse, "7", false},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, KindResponse, "null", false},
		{`{"jsonrpc":"2.0","id":3,"method":"roots/list"}`, KindRequest, "3", false},
		{`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, KindNotification, "", false},
	}
	for _, c := range good {
		sl, err := ReadServerLine([]byte(c.line))
		if err != nil {
			t.Errorf("%s: %v", c.line, err)
			continue
		}
		if sl.Kind != c.kind || sl.ID != c.id || sl.IDIsString != c.isText {
			t.Errorf("%s: read as %v %q %v", c.line, sl.Kind, sl.ID, sl.IDIsString)
		}
	}
	bad := []struct {
		line  string
		fault Fault
	}{
		{`not json`, FaultNotJSON},
		{`{"jsonrpc":"2.0","id":"provared-1-7","result":{"content":[`, FaultNotJSON},
		{`[{"jsonrpc":"2.0","id":"provared-1-7","result":{}}]`, FaultBatch},
		{"{\"jsonrpc\":\"2.0\",\"id\":\"provared-1-7\",\"result\":{\"t\":\"\xff\"}}", FaultNotUTF8},
		{`{"jsonrpc":"2.0","id":"provared-1-7","result":{},"RESULT":{}}`, FaultDuplicate},
		{`{"jsonrpc":"2.0","id":"provared-1-7","result":{"a":1,"A":2}}`, FaultDuplicate},
		{`{"jsonrpc":"2.0","id":"provared-1-7","result":{},"error":{}}`, FaultNotMessage},
		{`{"jsonrpc":"2.0","id":"provared-1-7"}`, FaultNotMessage},
		{`{"jsonrpc":"2.0","id":"provared-1-7","result":{},"extra":1}`, FaultUnknownMember},
		{`"provared-1-7"`, FaultNotObject},
	}
	for _, c := range bad {
		_, err := ReadServerLine([]byte(c.line))
		var e *Error
		if !errors.As(err, &e) || e.Fault != c.fault {
			t.Errorf("%q: %v, want fault %d", c.line, err, c.fault)
		}
	}
}
