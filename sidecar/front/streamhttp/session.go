package streamhttp

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// errCut is a line for a session whose client was cut off.
var errCut = errors.New("the session's client was cut off: its buffer is full")

// session is one 2025-11-25 session: one executor session, its client's
// requests in flight and the event streams they are answered on.
type session struct {
	f   *Front
	id  string            // the Mcp-Session-Id (secret: never logged)
	key [sha256.Size]byte // SHA-256 of id: the map key and what logs name
	tok [sha256.Size]byte // the bearer token it is bound to (zero without tokens)
	log *slog.Logger
	in  *inbox

	mu         sync.Mutex
	version    string             // the protocol version initialize asked for
	streams    map[uint64]*stream // by number; 0 is the GET stream
	order      []uint64           // numbers of the request streams, oldest first
	inflight   map[string]*stream // by the request's id key
	byToken    map[string]*stream // by the request's progress token key
	standalone *stream
	nextStream uint64
	held       int // bytes of events kept
	busy       int // HTTP requests being served
	lastUsed   time.Time
	closed     bool // takes no more requests (DELETE, idle, drain, cut)
	gone       bool // the executor session ended: no more lines
	cut        bool // its buffer overflowed
	dropped    int  // lines that found no stream
}

// stream is one event stream: a request's (its answer and what relates to
// it), or the session's GET stream. Events are kept after they are
// written, for a replay, until the session's buffer needs the room.
type stream struct {
	num      uint64
	sse      bool   // false: the answer is one JSON body
	key      string // the request's id key; "" for the GET stream
	reqID    []byte // the request's id as written
	progress string // the request's progress token key; "" none
	initial  bool   // an initialize: its answer carries the session id
	method   string

	events   []event // kept, oldest first
	first    uint64  // index of events[0] (or the next event when none)
	nextIdx  uint64  // index the next event gets
	sentTo   uint64  // index of the next event to write where it is attached
	attached bool
	answered bool      // holds its answer: nothing follows
	doneAt   time.Time // when its answer was written (zero before): kept for a replay Options.ReplayKeep after
	json     []byte    // JSON mode: the answer
	wake     chan struct{}
}

type event struct {
	idx   uint64
	bytes []byte // the whole event as written on the stream
}

func (st *stream) signal() {
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// newSessionID is 32 bytes from crypto/rand, base64url: 43 visible ASCII.
func newSessionID() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics when the system has no randomness)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// newSession makes and starts a session for an initialize, or says why not.
func (f *Front) newSession(tok [sha256.Size]byte) (*session, error) {
	id := newSessionID()
	s := &session{f: f, id: id, key: sha256.Sum256([]byte(id)), tok: tok, in: newInbox(f.o.BufferBytes),
		streams: map[uint64]*stream{}, inflight: map[string]*stream{}, byToken: map[string]*stream{}, lastUsed: time.Now()}
	s.log = f.log.With(slog.String("http_session", shortID(s.key)))
	s.standalone = &stream{num: 0, sse: true, wake: make(chan struct{}, 1)}
	s.streams[0] = s.standalone
	s.nextStream = 1
	f.mu.Lock()
	if err := f.reserveLocked(); err != nil {
		f.mu.Unlock()
		return nil, err
	}
	f.sessions[s.key] = s
	n := len(f.sessions)
	f.mu.Unlock()
	s.log.Info("session opened", slog.Int("sessions", n))
	f.startEngine(s, s.log, s.ended)
	return s, nil
}

// lookup finds the session a request names; nil (and the request was
// answered) when there is none for it. A session made under another token
// is not found either.
func (f *Front) lookup(w http.ResponseWriter, r *http.Request, tok [sha256.Size]byte) *session {
	sid, present, _ := readOne(r.Header, headerSession, false)
	if !present || sid == "" {
		refuse(w, http.StatusBadRequest, wire.CodeInvalidRequest, "bad request: no Mcp-Session-Id (start a session with initialize)")
		return nil
	}
	key := sha256.Sum256([]byte(sid))
	f.mu.Lock()
	s := f.sessions[key]
	f.mu.Unlock()
	if s == nil || subtle.ConstantTimeCompare(s.tok[:], tok[:]) != 1 || s.isClosed() {
		refuse(w, http.StatusNotFound, wire.CodeInvalidRequest, "session not found: start a new one with initialize")
		return nil
	}
	return s
}

func (s *session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// ReadMessage is the session's client line, for the engine.
func (s *session) ReadMessage() ([]byte, *wire.Message, error) { return s.in.take() }

// end takes no more requests and ends the executor session's input: the
// calls it sent still get their outcomes and receipts.
func (s *session) end(why string) {
	s.mu.Lock()
	was := s.closed
	s.closed = true
	s.mu.Unlock()
	if !was {
		s.log.Info("session input ends", slog.String("why", why))
	}
	s.in.close()
}

// ended is called when the executor session returned: requests still
// waiting get an error of the front's own, and the session is forgotten.
func (s *session) ended(error) {
	s.in.close()
	s.mu.Lock()
	s.gone, s.closed = true, true
	for key, st := range s.inflight {
		s.appendLocked(st, errorBody(st.reqID, wire.CodeInternalError, "the session ended before this request was answered"), true)
		delete(s.inflight, key)
	}
	for _, st := range s.streams {
		st.signal()
	}
	s.mu.Unlock()
	s.f.mu.Lock()
	delete(s.f.sessions, s.key)
	s.f.mu.Unlock()
}

// idleSince is how long no request has used the session (0 while one is
// being served).
func (s *session) idleSince(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy > 0 || s.closed {
		return 0
	}
	return now.Sub(s.lastUsed)
}

func (s *session) use(d int) {
	s.mu.Lock()
	s.busy += d
	s.lastUsed = time.Now()
	s.mu.Unlock()
}

// WriteLine takes a line for the client, for the engine: an answer goes on
// its request's stream; anything else on the stream of the request it
// relates to when that is known, else where the client will see it.
func (s *session) WriteLine(line, related []byte) error {
	m, err := wire.Inspect(line)
	s.mu.Lock()
	if s.cut {
		s.mu.Unlock()
		return errCut
	}
	var st *stream
	answer := false
	switch {
	case err != nil:
		st = s.unrelatedLocked()
	case m.Kind == wire.KindResponse:
		key := idKey(m.ID)
		if related != nil {
			key = idKey(related)
		}
		st = s.inflight[key]
		if st == nil {
			s.dropped++
			s.mu.Unlock()
			s.log.Warn("an answer to no request in flight is dropped", wire.LineAttr(line))
			return nil
		}
		delete(s.inflight, key)
		if st.progress != "" && s.byToken[st.progress] == st {
			delete(s.byToken, st.progress)
		}
		answer = true
		if st.method == "tools/list" && m.Result != nil {
			s.f.params.learn(m.Result)
		}
		if st.initial && m.Error != nil {
			defer s.end("its initialize was answered with an error")
		}
	default:
		st = s.relatedLocked(related, m)
	}
	over := s.appendLocked(st, line, answer)
	s.mu.Unlock()
	if over {
		s.cutOff()
		s.log.Warn("the session's client reads too little: its buffer is full and the session is cut; the calls it sent still get receipts",
			slog.Int("buffer_bytes", s.f.o.BufferBytes))
		return errCut
	}
	return nil
}

// relatedLocked is the stream a request or notification for the client
// goes on: the stream of the request it relates to (the engine says, or
// its progress token does), else the one request stream open when only one
// is, else the GET stream when the client has it open, else the newest
// request stream, else the GET stream for later.
func (s *session) relatedLocked(related []byte, m *wire.Message) *stream {
	if related != nil {
		if st := s.inflight[idKey(related)]; st != nil && st.sse && !st.answered {
			return st
		}
	}
	if m.Method == "notifications/progress" && m.Params != nil {
		if v, found, err := wire.Pointer(m.Params, "/progressToken"); err == nil && found {
			if st := s.byToken[idKey(v)]; st != nil && st.sse && !st.answered {
				return st
			}
		}
	}
	return s.unrelatedLocked()
}

func (s *session) unrelatedLocked() *stream {
	var open []*stream
	for _, st := range s.inflight {
		if st.sse && !st.answered {
			open = append(open, st)
		}
	}
	switch {
	case len(open) == 1:
		return open[0]
	case s.standalone.attached || len(open) == 0:
		return s.standalone
	}
	newest := open[0]
	for _, st := range open[1:] {
		if st.num > newest.num {
			newest = st
		}
	}
	return newest
}

// appendLocked puts a line on a stream; over is true when the session's
// buffer cannot hold what its client has not read.
func (s *session) appendLocked(st *stream, line []byte, answer bool) (over bool) {
	if !st.sse {
		st.json = line
		st.answered = true
		s.held += len(line)
		st.signal()
		return s.fitLocked()
	}
	ev := event{idx: st.nextIdx, bytes: appendEvent(nil, eventID{st.num, st.nextIdx}.String(), 0, line)}
	st.nextIdx++
	st.events = append(st.events, ev)
	s.held += len(ev.bytes)
	if answer {
		st.answered = true
	}
	if st == s.standalone {
		s.trimStandaloneLocked()
	}
	st.signal()
	return s.fitLocked()
}

// trimStandaloneLocked drops the oldest unwritten events of the GET stream
// beyond standaloneBytes while no client has it open.
func (s *session) trimStandaloneLocked() {
	st := s.standalone
	if st.attached {
		return
	}
	n := 0
	for _, ev := range st.events {
		n += len(ev.bytes)
	}
	for n > standaloneBytes && len(st.events) > 0 {
		n -= len(st.events[0].bytes)
		s.held -= len(st.events[0].bytes)
		st.events = st.events[1:]
		st.first++
		s.dropped++
	}
	if st.sentTo < st.first {
		st.sentTo = st.first
	}
}

// fitLocked makes room in the buffer: events already written go first,
// oldest stream first, and streams left with nothing to give are
// forgotten. It reports whether what is left is still over the bound.
func (s *session) fitLocked() bool {
	for s.held > s.f.o.BufferBytes || len(s.order) > maxKeptStreams {
		freed := false
		for i := 0; i < len(s.order); i++ {
			st := s.streams[s.order[i]]
			for len(st.events) > 0 && st.events[0].idx < st.sentTo && s.held > s.f.o.BufferBytes {
				s.held -= len(st.events[0].bytes)
				st.events = st.events[1:]
				st.first++
				freed = true
			}
			if st.answered && !st.attached && (len(st.events) == 0 || len(s.order) > maxKeptStreams) {
				s.forgetLocked(i)
				i--
				freed = true
			}
			if s.held <= s.f.o.BufferBytes && len(s.order) <= maxKeptStreams {
				return false
			}
		}
		if !freed {
			break
		}
	}
	return s.held > s.f.o.BufferBytes
}

// sweep forgets the streams whose answer was written more than ReplayKeep ago: the client had them,
// and a replay of them is kept no longer.
func (s *session) sweep(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := 0; i < len(s.order); i++ {
		st := s.streams[s.order[i]]
		if !st.doneAt.IsZero() && !st.attached && now.Sub(st.doneAt) > s.f.o.ReplayKeep {
			s.forgetLocked(i)
			i--
		}
	}
}

// forgetLocked drops the request stream at s.order[i].
func (s *session) forgetLocked(i int) {
	st := s.streams[s.order[i]]
	for _, ev := range st.events {
		s.held -= len(ev.bytes)
	}
	s.held -= len(st.json)
	delete(s.streams, st.num)
	s.order = append(s.order[:i], s.order[i+1:]...)
}

// cutOff ends a session whose client does not read: no more lines are kept
// for it, its input ends, and every stream it has open ends.
func (s *session) cutOff() {
	s.mu.Lock()
	s.cut = true
	for _, st := range s.streams {
		st.signal()
	}
	s.mu.Unlock()
	s.end("its client reads too little")
}

// request serves a POST carrying a request: a stream is opened for it (an
// event stream when Accept admits one), the line goes to the executor
// session, and the answer comes back on the stream.
func (s *session) request(w http.ResponseWriter, r *http.Request, p *posted, initial bool) {
	m := p.m
	key := idKey(m.ID)
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		refuse(w, http.StatusNotFound, wire.CodeInvalidRequest, "session not found: start a new one with initialize")
		return
	case s.inflight[key] != nil:
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, m.ID, wire.CodeInvalidRequest, "a request with this id is in flight in this session")
		return
	case len(s.inflight) >= maxInflight:
		s.mu.Unlock()
		writeError(w, http.StatusTooManyRequests, m.ID, wire.CodeNotTaken, "not taken: this session has "+strconv.Itoa(maxInflight)+" requests in flight")
		return
	}
	st := &stream{num: s.nextStream, sse: p.sseOK, key: key, reqID: clone(m.ID), initial: initial, method: m.Method, attached: true, wake: make(chan struct{}, 1)}
	s.nextStream++
	s.streams[st.num] = st
	s.order = append(s.order, st.num)
	s.inflight[key] = st
	if m.Params != nil {
		if v, found, err := wire.Pointer(m.Params, ptrProgressTok); err == nil && found {
			st.progress = idKey(v)
			s.byToken[st.progress] = st
		}
	}
	version := p.version
	if initial && m.Params != nil {
		if v, found, err := wire.Pointer(m.Params, "/protocolVersion"); err == nil && found {
			if pv, err := jsonText(v); err == nil {
				s.version = pv
			}
		}
	}
	if version == "" {
		version = s.version
	}
	prime := st.sse && version >= "2025-11-25"
	if prime {
		ev := event{idx: 0, bytes: appendEvent(nil, eventID{st.num, 0}.String(), retryMS, nil)}
		st.events = append(st.events, ev)
		st.nextIdx = 1
		s.held += len(ev.bytes)
	}
	s.busy++
	s.lastUsed = time.Now()
	s.mu.Unlock()
	defer s.use(-1)
	if err := s.in.put(p.line, m); err != nil {
		s.mu.Lock()
		delete(s.inflight, key)
		if st.progress != "" && s.byToken[st.progress] == st {
			delete(s.byToken, st.progress)
		}
		st.answered, st.attached = true, false
		s.mu.Unlock()
		if errors.Is(err, errInboxFull) {
			writeError(w, http.StatusServiceUnavailable, m.ID, wire.CodeNotTaken, "not taken: "+err.Error())
			return
		}
		refuse(w, http.StatusNotFound, wire.CodeInvalidRequest, "session not found: start a new one with initialize")
		return
	}
	if initial {
		w.Header().Set(headerSession, s.id)
	}
	s.serve(w, r, st)
}

// message serves a POST carrying a notification or an answer: 202 once the
// executor session has it.
func (s *session) message(w http.ResponseWriter, p *posted) {
	s.use(0)
	if err := s.in.put(p.line, p.m); err != nil {
		if errors.Is(err, errInboxFull) {
			writeError(w, http.StatusServiceUnavailable, nil, wire.CodeNotTaken, "not taken: "+err.Error())
			return
		}
		refuse(w, http.StatusNotFound, wire.CodeInvalidRequest, "session not found: start a new one with initialize")
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// attach serves a GET: the session's GET stream, or with lastEvent the
// stream that event was on, from the event after it.
func (s *session) attach(w http.ResponseWriter, r *http.Request, lastEvent *eventID) {
	s.mu.Lock()
	st := s.standalone
	if lastEvent != nil {
		st = s.streams[lastEvent.stream]
		switch {
		case st == nil:
			s.mu.Unlock()
			refuse(w, http.StatusBadRequest, 0, "bad request: this session keeps nothing after that event (Last-Event-ID)")
			return
		case lastEvent.idx >= st.nextIdx:
			s.mu.Unlock()
			refuse(w, http.StatusBadRequest, 0, "bad request: that event was never sent (Last-Event-ID)")
			return
		case lastEvent.idx+1 < st.first && st != s.standalone:
			s.mu.Unlock()
			refuse(w, http.StatusBadRequest, 0, "bad request: the events after that one are no longer kept (Last-Event-ID)")
			return
		}
	}
	if st.attached {
		s.mu.Unlock()
		refuse(w, http.StatusConflict, 0, "conflict: that stream is open on another connection")
		return
	}
	if lastEvent != nil {
		st.sentTo = max(lastEvent.idx+1, st.first)
	}
	st.attached = true
	s.busy++
	s.lastUsed = time.Now()
	s.mu.Unlock()
	defer s.use(-1)
	s.serve(w, r, st)
}

// serve writes a stream to its client until its answer is written, the
// client leaves, or the session ends.
func (s *session) serve(w http.ResponseWriter, r *http.Request, st *stream) {
	defer func() {
		s.mu.Lock()
		st.attached = false
		if st == s.standalone {
			s.trimStandaloneLocked()
		}
		s.mu.Unlock()
	}()
	if st.sse {
		s.serveEvents(w, r, st)
		return
	}
	s.serveJSON(w, r, st)
}

// serveJSON writes the answer as one JSON body when it comes.
func (s *session) serveJSON(w http.ResponseWriter, r *http.Request, st *stream) {
	rc := http.NewResponseController(w)
	for {
		s.mu.Lock()
		body := st.json
		ended := s.cut || (s.gone && !st.answered)
		s.mu.Unlock()
		if body != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			if err := s.f.write(rc, w, body); err == nil {
				s.mu.Lock()
				s.held -= len(st.json)
				st.json = []byte{}
				s.mu.Unlock()
			}
			return
		}
		if ended {
			return
		}
		select {
		case <-st.wake:
		case <-r.Context().Done():
			return
		}
	}
}

// unsentLocked is the stream's events from sentTo on, and the index after
// the last of them.
func (st *stream) unsentLocked() (out []byte, to uint64) {
	to = st.sentTo
	for _, ev := range st.events {
		if ev.idx >= st.sentTo {
			out = append(out, ev.bytes...)
			to = ev.idx + 1
		}
	}
	return out, to
}

// serveEvents writes a stream's events as they come. A write that takes
// longer than the write timeout ends the connection; what it did not write
// stays for a replay.
func (s *session) serveEvents(w http.ResponseWriter, r *http.Request, st *stream) {
	f := s.f
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if err := f.write(rc, w, []byte(": mcp-executor\n\n")); err != nil {
		return
	}
	keep := time.NewTicker(f.o.KeepAlive)
	defer keep.Stop()
	for {
		s.mu.Lock()
		out, to := st.unsentLocked()
		done := st.answered && to == st.nextIdx
		ended := s.cut || (s.gone && !st.answered)
		s.mu.Unlock()
		if len(out) > 0 {
			if err := f.write(rc, w, out); err != nil {
				s.log.Info("an event stream's connection ended while writing; what it did not get stays for a replay", slog.String("error", err.Error()))
				return
			}
			s.mu.Lock()
			st.sentTo = max(st.sentTo, to)
			if done && st.doneAt.IsZero() {
				st.doneAt = time.Now() // a replay keeps the first time
			}
			s.mu.Unlock()
		}
		if done || ended {
			return
		}
		select {
		case <-st.wake:
		case <-r.Context().Done():
			return
		case <-keep.C:
			if err := f.write(rc, w, []byte(": keep-alive\n\n")); err != nil {
				return
			}
		}
	}
}

// write writes b and flushes it within the write timeout.
func (f *Front) write(rc *http.ResponseController, w http.ResponseWriter, b []byte) error {
	_ = rc.SetWriteDeadline(time.Now().Add(f.o.WriteTimeout)) // not every writer has deadlines (tests); then none
	_, err := w.Write(b)
	if err == nil {
		err = rc.Flush()
	}
	_ = rc.SetWriteDeadline(time.Time{})
	return err
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

// postSession serves a POST of the 2025-11-25 era.
func (f *Front) postSession(w http.ResponseWriter, r *http.Request, p *posted) {
	m := p.m
	if _, present, _ := readOne(r.Header, headerSession, false); !present {
		if m.Kind != wire.KindRequest || m.Method != "initialize" {
			writeError(w, http.StatusBadRequest, m.ID, wire.CodeInvalidRequest, "bad request: no Mcp-Session-Id (start a session with initialize)")
			return
		}
		s, err := f.newSession(p.tok)
		if err != nil {
			f.log.Warn("a session is refused", slog.String("why", err.Error()))
			refuseStart(w, m.ID, err)
			return
		}
		s.request(w, r, p, true)
		return
	}
	s := f.lookup(w, r, p.tok)
	if s == nil {
		return
	}
	if m.Kind == wire.KindRequest {
		s.request(w, r, p, false)
		return
	}
	s.message(w, p)
}

// get serves a GET: a session's GET stream, or a replay.
func (f *Front) get(w http.ResponseWriter, r *http.Request, tok [sha256.Size]byte) {
	if v, _, _ := readOne(r.Header, headerVersion, false); v >= modernVersion {
		w.Header().Set("Allow", "POST")
		refuse(w, http.StatusMethodNotAllowed, 0, "method not allowed: 2026-07-28 has no GET stream")
		return
	}
	acc, _, _ := readOne(r.Header, "Accept", true)
	if _, sseOK := accepts(acc); !sseOK {
		refuse(w, http.StatusNotAcceptable, 0, "not acceptable: a GET stream is text/event-stream")
		return
	}
	var last *eventID
	if v, present, _ := readOne(r.Header, headerLastEventID, false); present {
		id, err := parseEventID(v)
		if err != nil {
			refuse(w, http.StatusBadRequest, 0, "bad request: Last-Event-ID: "+err.Error())
			return
		}
		last = &id
	}
	s := f.lookup(w, r, tok)
	if s == nil {
		return
	}
	s.attach(w, r, last)
}

// delete serves a DELETE: the session takes no more requests, and its calls
// in flight still get their receipts.
func (f *Front) delete(w http.ResponseWriter, r *http.Request, tok [sha256.Size]byte) {
	if v, _, _ := readOne(r.Header, headerVersion, false); v >= modernVersion {
		w.Header().Set("Allow", "POST")
		refuse(w, http.StatusMethodNotAllowed, 0, "method not allowed: 2026-07-28 has no sessions")
		return
	}
	s := f.lookup(w, r, tok)
	if s == nil {
		return
	}
	s.end("the client deleted it")
	w.WriteHeader(http.StatusNoContent)
}
