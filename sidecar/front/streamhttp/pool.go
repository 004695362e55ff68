package streamhttp

import (
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// Requests of the 2026-07-28 era carry no session: each is judged and
// recorded on its own, by one of a few executor sessions the front keeps
// for them. There is a pool of PoolSize sessions per bearer token (one pool
// without tokens): the key is a token the request proved it holds, nothing
// it could name. A request goes to the session of its pool with the fewest
// requests in flight; a session's tool server starts when the session is
// first used, and a session whose tool server ended is replaced on the next
// use. Client ids repeat across requests (every client starts at 1), so a
// request goes to its session under an id of the front's own ("h-N"), and
// its answer comes back with the client's id as the client wrote it; a
// progress token is swapped the same way ("hp-N").

// pool is the sessions serving one token's 2026-07-28 requests.
type pool struct {
	f       *Front
	tok     [sha256.Size]byte
	members []*pooled // nil until first used
}

// pooled is one executor session of a pool.
type pooled struct {
	p   *pool
	at  int // its place in p.members
	log *slog.Logger
	in  *inbox

	mu       sync.Mutex
	n        uint64
	pending  map[string]*oneShot // by the front's id as written
	tokens   map[string]*oneShot // by the front's progress token as written
	over     bool                // its executor session ended
	queued   int                 // bytes waiting in the requests' queues, bounded by BufferBytes
	lastUsed time.Time
	dropped  atomic.Int64
}

// oneShot is one request in flight: what is to be written to its response.
type oneShot struct {
	method      string
	clientID    []byte
	clientToken []byte // the client's progress token as written; nil none
	frontID     string
	frontToken  string
	sse         bool
	queue       [][]byte
	bytes       int
	answered    bool
	dropped     bool // gone over its buffer: it was cancelled
	wake        chan struct{}
}

func (o *oneShot) signal() {
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// member picks the session of tok's pool for a request, starting one when
// the chosen place is empty.
func (f *Front) member(tok [sha256.Size]byte) (*pooled, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.draining {
		return nil, errDraining
	}
	p := f.pools[tok]
	if p == nil {
		p = &pool{f: f, tok: tok, members: make([]*pooled, f.o.PoolSize)}
		f.pools[tok] = p
	}
	var best *pooled
	bestLoad, empty := -1, -1
	for i, m := range p.members {
		if m == nil {
			if empty < 0 {
				empty = i
			}
			continue
		}
		if l := m.load(); bestLoad < 0 || l < bestLoad {
			best, bestLoad = m, l
		}
	}
	if empty >= 0 && (best == nil || bestLoad > 0) {
		if err := f.reserveLocked(); err == nil {
			m := &pooled{p: p, at: empty, in: newInbox(f.o.BufferBytes), pending: map[string]*oneShot{}, tokens: map[string]*oneShot{}, lastUsed: time.Now()}
			m.log = f.log.With(slog.String("http_pooled", shortID(tok)+"/"+strconv.Itoa(empty)))
			p.members[empty] = m
			m.log.Info("a pooled session for 2026-07-28 requests starts")
			f.startEngine(m, m.log, m.ended)
			return m, nil
		} else if best == nil {
			return nil, err
		}
	}
	return best, nil
}

func (m *pooled) load() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.pending)
}

func (m *pooled) idleSince(now time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.pending) > 0 || m.over {
		return 0
	}
	return now.Sub(m.lastUsed)
}

// ReadMessage is the next request for the pooled session, for the engine.
func (m *pooled) ReadMessage() ([]byte, *wire.Message, error) { return m.in.take() }

// ended is called when the pooled executor session returned: requests
// still waiting get an error of the front's own; the place is freed.
func (m *pooled) ended(error) {
	m.in.close()
	m.mu.Lock()
	m.over = true
	for id, o := range m.pending {
		m.queueLocked(o, errorBody(o.clientID, wire.CodeInternalError, "the executor session serving this request ended before it answered"), true)
		delete(m.pending, id)
	}
	m.tokens = map[string]*oneShot{}
	m.mu.Unlock()
	f := m.p.f
	f.mu.Lock()
	if m.p.members[m.at] == m {
		m.p.members[m.at] = nil
	}
	f.mu.Unlock()
}

// WriteLine takes a line for a client, for the engine: an answer goes to
// the request under the front's id with the client's id put back; a
// progress notification to the request whose token it names, the token
// put back; a request from the server is answered with an error (a
// 2026-07-28 client takes none); anything else goes to the one request in
// flight when there is only one, and is dropped otherwise.
func (m *pooled) WriteLine(line, related []byte) error {
	msg, err := wire.Inspect(line)
	if err != nil {
		m.drop(line, "a line the front cannot read")
		return nil
	}
	switch msg.Kind {
	case wire.KindResponse:
		key := string(msg.ID)
		if related != nil {
			key = string(related)
		}
		m.mu.Lock()
		o := m.pending[key]
		if o == nil {
			m.mu.Unlock()
			m.drop(line, "an answer to no request in flight")
			return nil
		}
		m.forgetLocked(o)
		if o.method == "tools/list" && msg.Result != nil {
			// Before the client has the list: its next call may carry the headers it names.
			m.p.f.params.learn(msg.Result)
		}
		m.queueLocked(o, wire.SpliceID(line, msg.IDSpan, o.clientID), true)
		m.mu.Unlock()
		return nil
	case wire.KindRequest:
		m.refuseServerRequest(msg)
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if msg.Method == "notifications/progress" && msg.Params != nil {
		if v, found, err := wire.Pointer(msg.Params, "/progressToken"); err == nil && found {
			if o := m.tokens[string(v)]; o != nil && o.sse {
				at := msg.ParamsSpan.Start + cap(msg.Params) - cap(v)
				out := wire.SpliceID(line, wire.Span{Start: at, End: at + len(v)}, o.clientToken)
				m.queueLocked(o, out, false)
				return nil
			}
		}
	}
	var only *oneShot
	n := 0
	for _, o := range m.pending {
		if o.sse {
			only = o
			n++
		}
	}
	if n == 1 {
		m.queueLocked(only, line, false)
		return nil
	}
	m.dropped.Add(1)
	m.log.Debug("a notification that names no request is dropped", slog.String("method", wire.Cut(msg.Method)))
	return nil
}

func (m *pooled) drop(line []byte, why string) {
	m.dropped.Add(1)
	m.log.Warn("a line for a 2026-07-28 client is dropped", slog.String("why", why), wire.LineAttr(line))
}

// refuseServerRequest answers a tool server's request for a client that
// cannot take one: in the 2026-07-28 era a server asks through an
// input_required result.
func (m *pooled) refuseServerRequest(msg *wire.Message) {
	m.log.Info("a request of the tool server is answered with an error: a 2026-07-28 client takes no requests", slog.String("method", wire.Cut(msg.Method)))
	line := errorBody(msg.ID, wire.CodeInvalidRequest, "the client of a 2026-07-28 request takes no requests; ask through an input_required result")
	lm, err := wire.Inspect(line)
	if err != nil {
		return
	}
	_ = m.in.put(line, lm) // the session may have ended: the server is then gone too
}

// forgetLocked takes a request out of the maps.
func (m *pooled) forgetLocked(o *oneShot) {
	delete(m.pending, o.frontID)
	if o.frontToken != "" {
		delete(m.tokens, o.frontToken)
	}
	m.lastUsed = time.Now()
}

// queueLocked puts a line on a request's response. Past the buffer bound
// the request is dropped: its answer would be lost anyway, and it is
// cancelled below.
func (m *pooled) queueLocked(o *oneShot, line []byte, answer bool) {
	if o.dropped {
		return
	}
	if !o.sse && !answer {
		return
	}
	o.queue = append(o.queue, line)
	o.bytes += len(line)
	m.queued += len(line)
	if answer {
		o.answered = true
	}
	if m.queued > m.p.f.o.BufferBytes {
		// Its clients read too little: this request's lines go, and it ends.
		o.dropped = true
		m.queued -= o.bytes
		o.queue, o.bytes = nil, 0
	}
	o.signal()
}

// postModern serves a POST of the 2026-07-28 era.
func (f *Front) postModern(w http.ResponseWriter, r *http.Request, p *posted) {
	m := p.m
	switch m.Kind {
	case wire.KindResponse:
		writeError(w, http.StatusBadRequest, nil, wire.CodeInvalidRequest, "a 2026-07-28 client sends no answers: the server asks through input_required results")
		return
	case wire.KindNotification:
		// Nothing to relate it to: its ids would be the client's, and each
		// request went to its session under one of the front's own.
		f.log.Info("a notification of a 2026-07-28 client is taken and dropped", slog.String("method", wire.Cut(m.Method)))
		w.WriteHeader(http.StatusAccepted)
		return
	}
	mem, err := f.member(p.tok)
	if err != nil {
		f.log.Warn("a 2026-07-28 request is refused", slog.String("why", err.Error()))
		refuseStart(w, m.ID, err)
		return
	}
	mem.request(w, r, p)
}

// request sends one request to the pooled session and writes what comes
// back for it. Closing the response cancels it.
func (m *pooled) request(w http.ResponseWriter, r *http.Request, p *posted) {
	msg := p.m
	m.mu.Lock()
	if m.over {
		m.mu.Unlock()
		refuseStart(w, msg.ID, errors.New("not taken: the executor session for this request ended; try again"))
		return
	}
	m.n++
	o := &oneShot{method: msg.Method, clientID: clone(msg.ID), frontID: `"h-` + strconv.FormatUint(m.n, 10) + `"`, sse: p.sseOK, wake: make(chan struct{}, 1)}
	var metas []wire.Member
	if msg.Params != nil {
		if v, found, err := wire.Pointer(msg.Params, ptrProgressTok); err == nil && found {
			o.clientToken = clone(v)
			tok := "hp-" + strconv.FormatUint(m.n, 10)
			o.frontToken = `"` + tok + `"`
			metas = []wire.Member{{Key: "progressToken", Value: tok}}
		}
	}
	out, om, err := wire.EditRequest(p.line, msg, []byte(o.frontID), metas)
	if err != nil {
		m.mu.Unlock()
		writeError(w, http.StatusBadRequest, msg.ID, wire.CodeInvalidRequest, "the request could not be put under the executor's id")
		return
	}
	m.pending[o.frontID] = o
	if o.frontToken != "" {
		m.tokens[o.frontToken] = o
	}
	m.lastUsed = time.Now()
	m.mu.Unlock()
	if err := m.in.put(out, om); err != nil {
		m.mu.Lock()
		m.forgetLocked(o)
		m.mu.Unlock()
		refuseStart(w, msg.ID, errors.New("not taken: "+err.Error()))
		return
	}
	m.serve(w, r, o)
}

// serve writes a request's lines as they come: an event stream (no event
// ids: 2026-07-28 streams do not resume) or one JSON body. An error the
// protocol gives an HTTP status (method not found: 404; invalid params,
// unsupported version, missing capability: 400) is written as a JSON body
// with that status when nothing was written before it.
func (m *pooled) serve(w http.ResponseWriter, r *http.Request, o *oneShot) {
	f := m.p.f
	rc := http.NewResponseController(w)
	started := false
	keep := time.NewTicker(f.o.KeepAlive)
	defer keep.Stop()
	defer func() {
		// Nothing more goes to this response: what waits for it goes.
		m.mu.Lock()
		m.queued -= o.bytes
		o.queue, o.bytes, o.dropped = nil, 0, true
		m.mu.Unlock()
	}()
	for {
		m.mu.Lock()
		lines := o.queue
		m.queued -= o.bytes
		o.queue, o.bytes = nil, 0
		answered, dropped := o.answered, o.dropped
		m.mu.Unlock()
		if dropped {
			m.cancel(o, "its client read too little")
			return
		}
		for i, line := range lines {
			last := answered && i == len(lines)-1
			if !started {
				if status := errorStatus(line, last); status != 0 || !o.sse {
					if status == 0 {
						status = http.StatusOK
					}
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(status)
					if err := f.write(rc, w, line); err != nil {
						// The request is over either way.
						m.log.Info("a 2026-07-28 response's connection ended while writing", slog.String("error", err.Error()))
					}
					return
				}
				h := w.Header()
				h.Set("Content-Type", "text/event-stream")
				h.Set("Cache-Control", "no-cache, no-transform")
				h.Set("X-Accel-Buffering", "no")
				w.WriteHeader(http.StatusOK)
				started = true
			}
			if err := f.write(rc, w, appendEvent(nil, "", 0, line)); err != nil {
				m.log.Info("a 2026-07-28 response's connection ended while writing", slog.String("error", err.Error()))
				if !answered {
					m.cancel(o, "its connection ended")
				}
				return
			}
		}
		if answered {
			return
		}
		select {
		case <-o.wake:
		case <-r.Context().Done():
			m.cancel(o, "its client closed the response")
			return
		case <-keep.C:
			if started {
				if err := f.write(rc, w, []byte(": keep-alive\n\n")); err != nil {
					m.cancel(o, "its connection ended")
					return
				}
			}
		}
	}
}

// cancel ends a request its client left: the executor session gets
// notifications/cancelled under the front's id, unless it was answered.
func (m *pooled) cancel(o *oneShot, why string) {
	m.mu.Lock()
	waiting := m.pending[o.frontID] == o
	if waiting {
		m.forgetLocked(o)
	}
	m.mu.Unlock()
	if !waiting {
		return
	}
	m.log.Info("a 2026-07-28 request is cancelled", slog.String("why", why))
	line := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + o.frontID + `,"reason":`)
	line = append(line, wire.Quote("the client closed its response ("+why+")")...)
	line = append(line, "}}"...)
	lm, err := wire.Inspect(line)
	if err != nil {
		return
	}
	_ = m.in.put(line, lm) // the session may have ended: then nothing is left to cancel
}

// errorStatus is the HTTP status the protocol gives a JSON-RPC error
// answer (0 for anything else).
func errorStatus(line []byte, answer bool) int {
	if !answer {
		return 0
	}
	msg, err := wire.Inspect(line)
	if err != nil || msg.Error == nil {
		return 0
	}
	v, found, err := wire.Pointer(msg.Error, "/code")
	if err != nil || !found {
		return 0
	}
	switch string(v) {
	case "-32601":
		return http.StatusNotFound
	case "-32602", "-32022", "-32021":
		return http.StatusBadRequest
	}
	return 0
}
