package held

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/seed-6e06167c/mcp-executor/sidecar/approval"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// Client is one session's agent client as a channel to ask a person
// through: what its initialize declared (its protocol revision, whether it
// shows forms), and the executor's own elicitation/create requests waiting
// for its answer.
type Client struct {
	send     func(line, related []byte) // writes one line to the client
	idPrefix string                     // begins the ids of the executor's own requests
	unique   func() string              // a fresh unguessable part for each id
	log      *slog.Logger

	mu      sync.Mutex
	version string // the protocolVersion the client asked for in initialize
	elicit  bool   // it declared form elicitation
	asks    map[string]chan reply
	n       int
	gone    bool // the client's input ended: it can answer nothing more
}

type reply struct {
	result []byte
	err    error
}

// NewClient is the client a session writes to with send (related: the id
// of the client's call a line is about). The executor's own requests go
// under ids that begin with idPrefix and end with unique().
func NewClient(send func(line, related []byte), idPrefix string, unique func() string, log *slog.Logger) *Client {
	return &Client{send: send, idPrefix: idPrefix, unique: unique, log: log}
}

// NoteInitialize reads the client's protocol version and elicitation
// capability from the params of its initialize request.
func (c *Client) NoteInitialize(params []byte) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
		Capabilities    struct {
			Elicitation *struct {
				Form *json.RawMessage `json:"form"`
				URL  *json.RawMessage `json:"url"`
			} `json:"elicitation"`
		} `json:"capabilities"`
	}
	if params == nil || json.Unmarshal(params, &p) != nil {
		return
	}
	el := p.Capabilities.Elicitation
	c.mu.Lock()
	defer c.mu.Unlock()
	c.version = p.ProtocolVersion
	// {} is form elicitation (2025-06-18 knows only form); a client that
	// names only url cannot show a form.
	c.elicit = el != nil && (el.Form != nil || el.URL == nil)
}

// Ended fails the elicitations still waiting when the client's input
// ends: a lost session is no (the other channels still count).
func (c *Client) Ended() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gone = true
	for id, ch := range c.asks {
		ch <- reply{err: errors.New("the client's input ended before it answered")}
		delete(c.asks, id)
	}
}

// TakeReply takes the client's answer to one of the executor's own
// elicitation requests; it reports whether the message was one (it then
// never reaches the server).
func (c *Client) TakeReply(m *wire.Message) bool {
	id, ok := wire.Unquote(m.ID)
	if !ok || len(id) <= len(c.idPrefix) || !strings.HasPrefix(id, c.idPrefix) {
		return false
	}
	c.mu.Lock()
	ch := c.asks[id]
	delete(c.asks, id)
	c.mu.Unlock()
	if ch == nil {
		c.log.Info("an answer to an elicitation the executor no longer waits for is dropped")
		return true
	}
	r := reply{result: append([]byte(nil), m.Result...)}
	if m.Error != nil {
		r = reply{err: fmt.Errorf("the client answered the elicitation with an error: %s", wire.Cut(string(m.Error)))}
	}
	ch <- r
	return true
}

// Channel is the client as a channel for the call whose client id is
// related, when it can be asked (it declared form elicitation, in
// 2025-06-18 or later); nil otherwise.
func (c *Client) Channel(related []byte) approval.Channel {
	c.mu.Lock()
	ok, version := c.elicit, c.version
	c.mu.Unlock()
	if !ok || version < "2025-06-18" {
		return nil
	}
	return &approval.Elicitation{Send: func(ctx context.Context, params []byte) ([]byte, error) {
		return c.ask(ctx, params, related)
	}, WithMode: version >= "2025-11-25", Logger: c.log}
}

// ask sends elicitation/create to the client under an id of the
// executor's own and waits for its answer.
func (c *Client) ask(ctx context.Context, params, related []byte) ([]byte, error) {
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.gone {
		c.mu.Unlock()
		return nil, errors.New("the client's input ended")
	}
	if c.asks == nil {
		c.asks = map[string]chan reply{}
	}
	c.n++
	id := c.idPrefix + strconv.Itoa(c.n) + "-" + c.unique()
	c.asks[id] = ch
	c.mu.Unlock()
	line := []byte(`{"jsonrpc":"2.0","id":`)
	line = append(line, wire.Quote(id)...)
	line = append(line, `,"method":"elicitation/create","params":`...)
	line = append(line, params...)
	line = append(line, '}')
	c.send(line, related)
	select {
	case r := <-ch:
		return r.result, r.err
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.asks, id)
		c.mu.Unlock()
		n := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`)
		n = append(n, wire.Quote(id)...)
		n = append(n, `,"reason":"the request for approval is over"}}`...)
		c.send(n, related)
		return nil, ctx.Err()
	}
}
