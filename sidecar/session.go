package sidecar

import (
	"bytes"
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/seed-6e06167c/mcp-executor/receipts/receipt"
	"github.com/seed-6e06167c/mcp-executor/sidecar/held"
	"github.com/seed-6e06167c/mcp-executor/sidecar/telemetry"
	"github.com/seed-6e06167c/mcp-executor/sidecar/upstream"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// maxForgotten is how many requests other than tool calls may wait for the
// server's answer before the oldest is forgotten.
const maxForgotten = 1000

// maxListsWaiting is how many tools/list requests may wait for the server.
const maxListsWaiting = 256

// maxEndedCalls is how many ended tool calls are remembered so that a late
// answer is dropped rather than handed on.
const maxEndedCalls = 4096

// passRequest is a request other than a tool call waiting for the server.
type passRequest struct {
	ourID    string
	clientID []byte
	filter   bool // a tools/list whose result is filtered
	elem     *list.Element
}

// Session is one agent connection: the client's messages in and out, and
// the tool server behind it. Every request goes to the server under an id of
// the executor's own; the answer goes back under the client's id, spliced
// into the server's own bytes.
type Session struct {
	e   *Executor
	log *slog.Logger

	conn ClientConn      // the client
	srv  upstream.Server // the tool server, or the router in front of several
	ids  callIDs

	mu         sync.Mutex
	requests   map[string]*passRequest // by our id
	order      *list.List              // our ids of requests, oldest first
	lists      int                     // tools/list requests waiting
	reqByCli   map[string]string       // client id → our id, requests other than tool calls
	calls      map[string]*toolCall    // by our id: sent, not yet answered
	callsByCli map[string]*toolCall    // client id → tool call waiting or sent
	ended      map[string]struct{}     // our ids of tool calls that ended
	endedOrder []string
	waiting    int           // tool calls taken and not yet finished
	idle       chan struct{} // closed (and cleared) when waiting reaches 0; set by drainCalls
	serverGone bool
	callsWG    sync.WaitGroup
	dropped    atomic.Int64        // lines from the server dropped, never handed to the client
	telID      telemetry.SessionID // its id for the spans

	// sending holds the calls admit has started sending (only admit
	// touches it until admitQ is closed): at the end of the client's input
	// each of them gets its outcome before the server's input is closed.
	sending []*toolCall

	admitQ   chan *toolCall
	orderMu  sync.Mutex    // guards lastSent and sending: admit and approvals (hold.go) send
	lastSent chan struct{} // the sentDone of the last call admitted
	client   *held.Client  // the client as a channel to ask a person through: its initialize, elicitations asked
	ctx      context.Context
}

// NewSession makes a session between a client and a running tool server
// (or the router in front of several). Run it with [Session.Run].
func (e *Executor) NewSession(c ClientConn, srv upstream.Server) *Session {
	s := &Session{
		e: e, log: e.log,
		conn:       c,
		srv:        srv,
		requests:   map[string]*passRequest{},
		order:      list.New(),
		reqByCli:   map[string]string{},
		calls:      map[string]*toolCall{},
		callsByCli: map[string]*toolCall{},
		ended:      map[string]struct{}{},
		admitQ:     make(chan *toolCall, e.set.MaxWaiting+1),
	}
	s.client = held.NewClient(s.toClient, IDPrefix+"ask-",
		func() string { return s.ids.next()[len(IDPrefix):] }, s.log)
	return s
}

// ExitError says the tool server exited: the executor exits with its code,
// and the client starts it again as the MCP specification says it should.
type ExitError struct{ Code int }

func (e *ExitError) Error() string {
	return "the tool server exited with code " + strconv.Itoa(e.Code)
}

// Run serves the session until the client closes its side (nil) or the
// tool server exits (*ExitError with the server's code). Every call that was
// sent has its stub in the book before Run returns.
func (s *Session) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.ctx = ctx
	admitDone := make(chan struct{})
	admitQ := s.admitQ
	go func() {
		defer close(admitDone)
		for tc := range admitQ {
			s.admit(tc)
		}
	}()
	serverDone := make(chan struct{})
	go func() {
		defer close(serverDone)
		s.readServer()
	}()
	clientDone := make(chan error, 1)
	go func() { clientDone <- s.readClient() }()

	var result error
	select {
	case err := <-clientDone:
		if err != nil {
			s.log.Warn("reading from the client ended", slog.String("error", err.Error()))
		}
		s.client.Ended() // its elicitations get no answer now
		// The client's input ended (or serve's drain ended it): every call
		// read before it goes to the server and gets its outcome (an answer,
		// its timeout, the server's end) before the server's input is
		// closed; the wait also ends when ctx does (serve's drain budget).
		s.closeAdmit()
		<-admitDone
		s.awaitSending(ctx, serverDone)
		s.drainCalls(ctx, serverDone)
		stopCtx := context.WithoutCancel(ctx)
		if err := s.srv.Stop(stopCtx); err != nil {
			s.log.Warn("stopping the tool server", slog.String("error", err.Error()))
		}
		<-serverDone
	case <-serverDone:
		// Its output ended: it may still run (it closed its output only);
		// it is stopped either way, so that waiting for it ends.
		result = s.serverEnded(ctx, serverDone)
	case <-s.srv.Done():
		// It exited, but its output may still be held open by a process it
		// started: ending what is left of its group ends the output.
		result = s.serverEnded(ctx, serverDone)
	case <-ctx.Done():
		if err := s.srv.Stop(context.WithoutCancel(ctx)); err != nil {
			s.log.Warn("stopping the tool server", slog.String("error", err.Error()))
		}
		<-serverDone
		result = ctx.Err()
	}
	s.closeAdmit()
	<-admitDone
	s.callsWG.Wait()
	return result
}

// closeAdmit takes no more tool calls; once admit has drained the queue,
// s.sending is whole.
func (s *Session) closeAdmit() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.admitQ != nil {
		close(s.admitQ)
		s.admitQ = nil
	}
}

// awaitSending waits until every call admit started sending has its
// outcome (each sent call has its timeout), or the server's output ends,
// or ctx is done. Call it after admit has ended.
func (s *Session) awaitSending(ctx context.Context, serverDone <-chan struct{}) {
	s.orderMu.Lock()
	sending := append([]*toolCall(nil), s.sending...)
	s.orderMu.Unlock()
	for _, tc := range sending {
		select {
		case <-tc.done:
		case <-serverDone:
			return
		case <-s.srv.Done():
			return
		case <-ctx.Done():
			return
		}
	}
}

// drainCalls waits until no tool call taken is still waiting for its
// outcome, or the server's output ends, or ctx ends.
func (s *Session) drainCalls(ctx context.Context, serverDone <-chan struct{}) {
	s.mu.Lock()
	if s.waiting == 0 {
		s.mu.Unlock()
		return
	}
	idle := make(chan struct{})
	s.idle = idle
	s.mu.Unlock()
	s.log.Info("the client's input ended: waiting for the calls in flight before the tool server's input is closed")
	select {
	case <-idle:
	case <-serverDone:
	case <-s.srv.Done():
	case <-ctx.Done():
	}
}

// serverEnded stops what is left of the tool server (its process group),
// waits for its output to end (every call still with it then ends), and
// returns its exit.
func (s *Session) serverEnded(ctx context.Context, serverDone <-chan struct{}) error {
	if err := s.srv.Stop(context.WithoutCancel(ctx)); err != nil {
		s.log.Warn("stopping the tool server", slog.String("error", err.Error()))
	}
	<-serverDone
	code, err := s.srv.Wait()
	if err != nil {
		s.log.Error("the tool server could not be waited for", slog.String("error", err.Error()))
	}
	s.log.Info("the tool server exited", slog.Int("code", code))
	return &ExitError{Code: code}
}

// readClient handles the client's lines until its input ends. A line that
// is not acceptable is answered, and the next one read.
func (s *Session) readClient() error {
	for {
		line, m, err := s.conn.ReadMessage()
		var tl *wire.TooLongError
		var we *wire.Error
		switch {
		case err == nil:
			s.fromClient(line, m)
		case errors.As(err, &tl):
			s.log.Warn("a line from the client is over 16 MiB", slog.Int64("bytes", tl.Length))
			s.replyError(nil, wire.CodeInvalidRequest, "line longer than 16 MiB", nil)
		case errors.As(err, &we):
			s.log.Warn("a line from the client is not an acceptable message", slog.String("why", we.Reason))
			s.replyError(we.ID, we.Code, we.Reason, nil)
		case errors.Is(err, io.EOF):
			return nil
		default:
			return err
		}
	}
}

// fromClient handles one of the client's lines, read as m.
func (s *Session) fromClient(line []byte, m *wire.Message) {
	switch m.Kind {
	case wire.KindRequest:
		if m.Method == "tools/call" {
			s.takeCall(line, m)
			return
		}
		if m.Method == "initialize" {
			s.client.NoteInitialize(m.Params)
		}
		s.forward(line, m)
	case wire.KindNotification:
		if !strings.HasPrefix(m.Method, "notifications/") {
			s.log.Warn("a notification that is not one of the protocol's own is dropped", slog.String("method", wire.Cut(m.Method)))
			return
		}
		if m.Method == "notifications/cancelled" {
			s.clientCancelled(line, m)
			return
		}
		s.toServer(line, m)
	case wire.KindResponse:
		// The client's answer to the server's own request: its id is the
		// server's, passed through unchanged; answers to the executor's
		// own elicitations stay here.
		if s.client.TakeReply(m) {
			return
		}
		s.toServer(line, m)
	}
}

// forward sends a request other than a tool call under an id of our own.
func (s *Session) forward(line []byte, m *wire.Message) {
	ourID := s.ids.next()
	filter := m.Method == "tools/list" && s.e.set.HideUnlisted
	s.mu.Lock()
	if filter && s.lists >= maxListsWaiting {
		s.mu.Unlock()
		s.replyNotTaken(m.ID, notTakenListsWaiting)
		return
	}
	r := &passRequest{ourID: ourID, clientID: bytes.Clone(m.ID), filter: filter}
	r.elem = s.order.PushBack(ourID)
	s.requests[ourID] = r
	s.reqByCli[string(m.ID)] = ourID
	if filter {
		s.lists++
	}
	for len(s.requests) > maxForgotten {
		oldest := s.order.Front()
		s.forgetLocked(s.requests[oldest.Value.(string)]) //nolint:errcheck // order holds only the ids put in it (strings); anything else is a bug to panic on
	}
	s.mu.Unlock()
	out, om, err := wire.EditRequest(line, m, wire.Quote(ourID), nil)
	if err != nil { // a request: cannot be
		out, om = wire.SpliceID(line, m.IDSpan, wire.Quote(ourID)), nil
	}
	s.toServer(out, om)
}

// forgetLocked drops a request other than a tool call. Callers hold s.mu.
func (s *Session) forgetLocked(r *passRequest) {
	s.order.Remove(r.elem)
	delete(s.requests, r.ourID)
	if s.reqByCli[string(r.clientID)] == r.ourID {
		delete(s.reqByCli, string(r.clientID))
	}
	if r.filter {
		s.lists--
	}
}

// readServer handles the server's lines until its output ends, then ends
// every call still with the server.
func (s *Session) readServer() {
	r := wire.NewReader(s.srv.Output())
	for {
		line, err := r.ReadLine()
		if err != nil {
			var tl *wire.TooLongError
			if errors.As(err, &tl) {
				s.log.Warn("a line from the tool server is over 16 MiB and is dropped", slog.Int64("bytes", tl.Length))
				continue
			}
			if !errors.Is(err, io.EOF) {
				s.log.Warn("reading from the tool server", slog.String("error", err.Error()))
			}
			break
		}
		s.fromServer(line)
	}
	s.mu.Lock()
	s.serverGone = true
	gone := make([]*toolCall, 0, len(s.calls))
	for _, tc := range s.calls {
		gone = append(gone, tc)
	}
	s.mu.Unlock()
	for _, tc := range gone {
		tc.finish(outcome{kind: outServerExit})
	}
}

// fromServer handles one line from the tool server. The server's own
// requests and notifications go to the client as they are. An answer goes
// to the client only when it answers, under the executor's own id, a
// request the executor sent and has not yet seen answered; every other
// answer (an unknown id, the client's own ids, a repeat, a late answer) is
// dropped, counted and logged by size and SHA-256 only.
func (s *Session) fromServer(line []byte) {
	sl, err := wire.ReadServerLine(line)
	if err != nil {
		s.unreadableFromServer(line, err)
		return
	}
	m := sl.Msg
	if sl.Kind != wire.KindResponse {
		s.toClient(line, nil)
		return
	}
	if !sl.IDIsString || !strings.HasPrefix(sl.ID, IDPrefix) {
		s.dropFromServer(line, "an answer under an id the executor did not send")
		return
	}
	id := sl.ID
	tc, ended, r := s.answered(id)
	switch {
	case tc != nil:
		o := outcome{kind: outResult, line: line, msg: m, idSpan: m.IDSpan}
		if m.Error != nil {
			o.kind = outError
		}
		tc.finish(o)
	case ended:
		s.dropFromServer(line, "a late answer to a tool call that ended")
	case r == nil:
		s.dropFromServer(line, "an answer to no request the executor is waiting for")
	default:
		out := wire.SpliceID(line, m.IDSpan, r.clientID)
		if r.filter && m.Result != nil {
			filtered, ok := s.filterTools(out)
			if !ok {
				s.replyError(r.clientID, wire.CodeInternalError, "the tool server's tools/list answer could not be read exactly, so it is not passed on", nil)
				return
			}
			out = filtered
		}
		s.toClient(out, r.clientID)
	}
}

// dropFromServer drops a line from the tool server: counted, and logged by
// its size and SHA-256 only.
func (s *Session) dropFromServer(line []byte, why string) {
	n := s.dropped.Add(1)
	s.e.tel.LineDropped()
	s.log.Warn("a line from the tool server is dropped", slog.String("why", why), wire.LineAttr(line), slog.Int64("dropped", n))
}

// answered takes what an answer from the tool server under our id ends:
// the tool call waiting for it (no longer waiting), or else the request it
// answers (forgotten). ended is true when it answers a tool call that has
// already ended; all are empty for an id that is not (or no longer) ours.
func (s *Session) answered(id string) (tc *toolCall, ended bool, r *passRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tc, ok := s.calls[id]; ok {
		delete(s.calls, id)
		return tc, false, nil
	}
	if _, ended := s.ended[id]; ended {
		return nil, true, nil
	}
	if r, ok := s.requests[id]; ok {
		s.forgetLocked(r)
		return nil, false, r
	}
	return nil, false, nil
}

// unreadableFromServer handles a server line that is not an acceptable
// message; it never reaches the client as it is. Where its top-level id
// can still be found (one JSON object naming id once) and is a call's in
// flight, the call ends with it: its stub names a fixed provared.error text
// (a number or text RFC 8785 cannot write, or an answer that cannot be read
// as a message). A request other than a tool call gets a JSON-RPC error.
// Anything else is dropped, counted and logged by size and SHA-256.
func (s *Session) unreadableFromServer(line []byte, err error) {
	var we *wire.Error
	if !errors.As(err, &we) {
		s.dropFromServer(line, "not an acceptable message")
		return
	}
	id, span := we.ID, we.IDSpan
	text := receipt.TextAnswerUnreadable
	if we.Fault == wire.FaultBigNumber {
		text = receipt.TextResultNotCanonical
	}
	if we.Fault == wire.FaultNotUTF8 {
		// Find the id in the same bytes with each byte that is not UTF-8
		// stood in for by one ASCII byte: offsets stay the same.
		m2, err2 := wire.Inspect(asciiStandIns(line))
		var we2 *wire.Error
		switch {
		case err2 == nil && m2.Kind == wire.KindResponse:
			id, span = line[m2.IDSpan.Start:m2.IDSpan.End], m2.IDSpan
		case errors.As(err2, &we2) && we2.ID != nil:
			id, span = line[we2.IDSpan.Start:we2.IDSpan.End], we2.IDSpan
		}
	}
	ourID, ok := wire.Unquote(id)
	if id == nil || !ok || !strings.HasPrefix(ourID, IDPrefix) {
		s.dropFromServer(line, "not an acceptable message: "+we.Reason)
		return
	}
	tc, ended, r := s.answered(ourID)
	switch {
	case tc != nil:
		tc.log().Warn("the tool server's answer to a call is not an acceptable message; it is not bound", slog.String("why", we.Reason), wire.LineAttr(line))
		o := outcome{kind: outUnreadable, idSpan: span, text: text}
		if we.Fault == wire.FaultBigNumber {
			// One UTF-8 JSON object, each name once: the client gets it
			// as written and reads its numbers as it does.
			o.line = line
		}
		tc.finish(o)
	case ended:
		s.dropFromServer(line, "a late answer to a tool call that ended")
	case r == nil:
		s.dropFromServer(line, "not an acceptable message, under no request the executor is waiting for")
	default:
		s.dropFromServer(line, "the answer to a request is not an acceptable message: "+we.Reason)
		s.replyError(r.clientID, wire.CodeInternalError, "the tool server's answer could not be read as a message, so it is not passed on", nil)
	}
}

// asciiStandIns returns line with every byte that is not part of a UTF-8
// character replaced by '?'.
func asciiStandIns(line []byte) []byte {
	out := make([]byte, len(line))
	copy(out, line)
	for i := 0; i < len(out); {
		r, n := utf8.DecodeRune(out[i:])
		if r == utf8.RuneError && n == 1 {
			out[i] = '?'
		}
		i += n
	}
	return out
}

// filterTools takes the tools no rule names out of a tools/list answer. It
// fails closed: ok is false for an answer it cannot read exactly, which
// must not reach the client.
func (s *Session) filterTools(line []byte) (out []byte, ok bool) {
	m, err := wire.Inspect(line)
	if err != nil || m.Result == nil {
		s.log.Warn("a tools/list answer could not be read; it is not passed on", wire.LineAttr(line))
		return nil, false
	}
	res, err := wire.FilterTools(m.Result, func(name string) bool {
		return s.e.pol.Listed(name)
	})
	if err != nil {
		s.log.Warn("a tools/list result could not be filtered; it is not passed on", slog.String("error", wire.Cut(err.Error())), wire.LineAttr(line))
		return nil, false
	}
	return wire.SpliceID(line, m.ResultSpan, res), true
}

// clientCancelled handles notifications/cancelled from the client.
func (s *Session) clientCancelled(line []byte, m *wire.Message) {
	var reqID []byte
	if m.Params != nil {
		if v, found, err := wire.Pointer(m.Params, "/requestId"); err == nil && found {
			reqID = v
		}
	}
	if reqID == nil {
		s.toServer(line, m)
		return
	}
	s.mu.Lock()
	if tc, ok := s.callsByCli[string(reqID)]; ok {
		s.mu.Unlock()
		tc.cancel()
		return
	}
	ourID, ok := s.reqByCli[string(reqID)]
	if ok {
		s.forgetLocked(s.requests[ourID])
	}
	s.mu.Unlock()
	if !ok {
		// A request that has ended, or that the executor never sent on:
		// nothing with the server to cancel.
		s.log.Debug("a cancellation for no request in flight is dropped")
		return
	}
	s.sendCancelled(ourID, "cancelled by the client")
}

// sendCancelled tells the server a request under our id is cancelled.
func (s *Session) sendCancelled(ourID, reason string) {
	line := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`)
	line = append(line, wire.Quote(ourID)...)
	line = append(line, `,"reason":`...)
	line = append(line, wire.Quote(reason)...)
	line = append(line, "}}"...)
	s.toServer(line, nil)
}

// toServer hands a line to the tool server (see sendToServer).
func (s *Session) toServer(line []byte, m *wire.Message) {
	if err := s.sendToServer(line, m); err != nil {
		s.log.Warn("writing to the tool server", slog.String("error", err.Error()))
	}
}

// sendToServer hands a line to the tool server with its reading m: the one
// the session made of the client's line, or, for a line of the executor's
// own (m nil), one made here.
func (s *Session) sendToServer(line []byte, m *wire.Message) error {
	if m == nil {
		var err error
		if m, err = wire.Inspect(line); err != nil { // the executor's own line: cannot be
			return fmt.Errorf("the executor's own line cannot be read: %w", err)
		}
	}
	return s.srv.Send(line, m)
}

// toClient writes a line to the client; related is the client's id of the
// request it belongs to (ClientConn.WriteLine).
func (s *Session) toClient(line, related []byte) {
	if err := s.conn.WriteLine(line, related); err != nil {
		s.log.Warn("writing to the client", slog.String("error", err.Error()))
	}
}

// replyError answers the client with a JSON-RPC error of the executor's own.
func (s *Session) replyError(id []byte, code int, message string, data []byte) {
	related := id
	if id == nil {
		id = []byte("null")
	}
	s.toClient(wire.ErrorLine(id, code, message, data), related)
}
