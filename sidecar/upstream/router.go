package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/seed-6e06167c/mcp-executor/sidecar/settings"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// This file puts several tool servers ("servers" in the settings) behind
// one session. The session sees one Server, the router: it sends the
// client's lines (under the executor's ids) with their reading, and reads
// the servers' lines from the router's output, so judging, the copy and
// the receipts are the same as with one server. The router:
//
//   - tools/call: routed by the tool name's "<server><sep>" prefix; the
//     server gets its own name of the tool (only params.name changes, every
//     other byte of the call is the client's), and its answer comes back
//     byte for byte;
//   - tools/list: sent to every server; each server's pages are followed by
//     the router (nextCursor, at most maxListPages a server); the client gets
//     one list, in the settings' server order, every name qualified, with no
//     nextCursor. A server that answers with an error is left out (logged);
//     when every server fails the client gets the first error;
//   - initialize: sent to every server; the client gets the first server's
//     result (settings order), its capabilities the union of every server's
//     (the first server's value of a capability wins), serverInfo the
//     executor's. A server that refuses initialize ends it with its error;
//   - ping: answered by the router itself;
//   - resources/*, prompts/*, completion/complete, logging/setLevel and any
//     other request: to the first server (settings order) whose initialize
//     result declares the capability (resources, prompts, completions,
//     logging), else to the first server;
//   - the client's notifications go to every server, except
//     notifications/cancelled, which goes to the server holding the request;
//   - a server's own requests (sampling, elicitation, roots) go to the client
//     under an id of the router's ("<server>!<n>"), and the client's answer
//     goes back to that server under the server's own id; its notifications
//     go to the client as they are.
//
// When any server ends its output, the router ends its own: the session
// then ends as it does when its one server exits, with that server's code.

// maxListPages is how many tools/list pages the router reads from one server.
const maxListPages = 100

// namedServer is one upstream behind the router.
type namedServer struct {
	name string
	srv  Server
	caps map[string]json.RawMessage // from its initialize result
}

// router is several tool servers as one Server.
type router struct {
	set *settings.Settings
	log *slog.Logger
	ups []*namedServer

	// inClosed is set by Stop: Send then takes nothing, as a write to a
	// closed input would fail.
	inClosed atomic.Bool
	outR     *io.PipeReader // to the session
	outW     *io.PipeWriter
	out      *wire.Writer

	mu       sync.Mutex
	routed   map[string]*namedServer // our id → server of a request in flight
	fanouts  map[string]*fanout      // sub id → fan-out
	fromSrv  map[string]srvRequest   // router id → a server's own request
	nextSrv  int
	exitCode int
	exited   bool

	done     chan struct{}
	doneOnce sync.Once
	readers  sync.WaitGroup
}

// srvRequest is a server's own request passed to the client.
type srvRequest struct {
	up *namedServer
	id []byte
}

// fanout is one client request sent to several servers.
type fanout struct {
	method  string
	ourID   string
	subs    map[*namedServer]string // the sub id each server has it under
	answers map[*namedServer]*wire.Message
	tools   map[*namedServer][]json.RawMessage
	pages   map[*namedServer]int
	waiting int
	params  []byte
}

// newRouter puts the started servers (in the settings' order) behind one
// Server.
func newRouter(set *settings.Settings, log *slog.Logger, ups []*namedServer) *router {
	r := &router{set: set, log: log, ups: ups,
		routed: map[string]*namedServer{}, fanouts: map[string]*fanout{}, fromSrv: map[string]srvRequest{},
		done: make(chan struct{})}
	r.outR, r.outW = io.Pipe()
	r.out = wire.NewWriter(r.outW)
	for _, u := range ups {
		r.readers.Add(1)
		go r.readUpstream(u)
	}
	go func() {
		// The router's output ends when the first server's does; then every
		// server is stopped by the session.
		r.readers.Wait()
		_ = r.outW.Close()
	}()
	return r
}

func (r *router) Output() io.Reader { return r.outR }
func (r *router) Done() <-chan struct{} {
	return r.done
}

// Stop stops every server (in parallel) and ends the router's output.
func (r *router) Stop(ctx context.Context) error {
	r.inClosed.Store(true)
	var wg sync.WaitGroup
	errs := make([]error, len(r.ups))
	for i, u := range r.ups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := u.srv.Stop(ctx); err != nil {
				errs[i] = errors.New("tool server " + u.name + ": " + err.Error())
			}
		}()
	}
	wg.Wait()
	_ = r.outW.Close()
	r.markDone(0)
	return errors.Join(errs...)
}

// Close lets go of what every server holds, once the router's output
// has ended.
func (r *router) Close(ctx context.Context) error {
	var errs []error
	for _, u := range r.ups {
		if err := u.srv.Close(ctx); err != nil {
			errs = append(errs, errors.New("tool server "+u.name+": "+err.Error()))
		}
	}
	return errors.Join(errs...)
}

// Wait returns the exit code of the first server that ended.
func (r *router) Wait() (int, error) {
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.exitCode, nil
}

func (r *router) markDone(code int) {
	r.mu.Lock()
	if !r.exited {
		r.exited, r.exitCode = true, code
	}
	r.mu.Unlock()
	r.doneOnce.Do(func() { close(r.done) })
}

// readUpstream handles one server's lines until its output ends; then the
// router's output ends.
func (r *router) readUpstream(u *namedServer) {
	defer r.readers.Done()
	rd := wire.NewReader(u.srv.Output())
	for {
		line, err := rd.ReadLine()
		if err != nil {
			var tl *wire.TooLongError
			if errors.As(err, &tl) {
				r.log.Warn("a line from a tool server is over 16 MiB and is dropped", slog.String("server", u.name))
				continue
			}
			break
		}
		r.fromUpstream(u, line)
	}
	code := 0
	select {
	case <-u.srv.Done():
		code, _ = u.srv.Wait()
	default:
	}
	r.log.Info("a tool server's output ended; the executor's session ends with it", slog.String("server", u.name), slog.Int("code", code))
	_ = r.outW.Close()
	r.markDone(code)
}

func (r *router) toSession(line []byte) {
	if err := r.out.WriteLine(line); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		r.log.Warn("the router could not hand a line to the session", slog.String("error", err.Error()))
	}
}

// toUpstream hands a line and its reading to a server.
func (r *router) toUpstream(u *namedServer, line []byte, m *wire.Message) {
	if err := u.srv.Send(line, m); err != nil {
		r.log.Warn("writing to a tool server", slog.String("server", u.name), slog.String("error", err.Error()))
	}
}

// toUpstreamOwn hands a server a line the router wrote itself, read once
// here.
func (r *router) toUpstreamOwn(u *namedServer, line []byte) {
	m, err := wire.Inspect(line)
	if err != nil { // the router's own line: cannot be
		r.log.Error("the router made a line it cannot read; it is not sent", slog.String("server", u.name), wire.LineAttr(line))
		return
	}
	r.toUpstream(u, line, m)
}

// Send takes one of the session's lines with its reading, in the
// session's goroutine: the line crosses no pipe and is not read again, and
// the router takes the lines in the order the session sends them.
func (r *router) Send(line []byte, m *wire.Message) error {
	if r.inClosed.Load() {
		return io.ErrClosedPipe
	}
	switch m.Kind {
	case wire.KindRequest:
		r.request(line, m)
	case wire.KindNotification:
		r.notification(line, m)
	case wire.KindResponse:
		r.clientAnswer(line, m)
	}
	return nil
}

func (r *router) request(line []byte, m *wire.Message) {
	ourID, _ := wire.Unquote(m.ID)
	switch m.Method {
	case "tools/call":
		r.toolCall(line, m, ourID)
	case "tools/list":
		if m.Params != nil {
			if _, found, _ := wire.Pointer(m.Params, "/cursor"); found {
				r.toSession(wire.ErrorLine(m.ID, wire.CodeInvalidParams, "invalid cursor: the executor's merged tools/list has a single page", nil))
				return
			}
		}
		r.fanOut(m, ourID, r.ups)
	case "initialize", "logging/setLevel":
		r.fanOut(m, ourID, r.ups)
	case "ping":
		// The router's own answer: in the form of the client's era.
		res := []byte("{}")
		if wire.Modern(wire.ReadCall(line, m).ProtocolVersion) {
			res = wire.Complete(res)
		}
		r.toSession(wire.ResultLine(m.ID, res))
	default:
		u := r.serverFor(m.Method)
		r.mu.Lock()
		r.routed[ourID] = u
		r.mu.Unlock()
		r.toUpstream(u, line, m)
	}
}

// serverFor is the server a request other than the tools' goes to.
func (r *router) serverFor(method string) *namedServer {
	capName, _, _ := strings.Cut(method, "/")
	if capName == "completion" {
		capName = "completions"
	}
	for _, u := range r.ups {
		if _, ok := u.caps[capName]; ok {
			return u
		}
	}
	return r.ups[0]
}

// toolCall sends a call to the server its name's prefix names, under the
// server's own name of the tool: params.name, where the reading says it
// is, is the only part of the line that changes.
func (r *router) toolCall(line []byte, m *wire.Message, ourID string) {
	name, ok := toolName(line, m)
	server, tool, routed := r.set.Route(name)
	if !ok || !routed {
		r.toSession(wire.ErrorLine(m.ID, wire.CodeInvalidParams,
			"unknown tool: a tool name begins with one of the servers "+strings.Join(r.set.ServerOrder, ", ")+" and \""+r.set.NamespaceSeparator+"\"", nil))
		return
	}
	u := r.byName(server)
	r.mu.Lock()
	r.routed[ourID] = u
	r.mu.Unlock()
	out, om := wire.SpliceValue(line, m, m.NameSpan, wire.Quote(tool))
	r.toUpstream(u, out, om)
}

func (r *router) byName(name string) *namedServer {
	for _, u := range r.ups {
		if u.name == name {
			return u
		}
	}
	return nil
}

// toolName is a tools/call's params.name, where its reading says it is.
func toolName(line []byte, m *wire.Message) (string, bool) {
	if !m.NameSpan.Present() {
		return "", false
	}
	return wire.Unquote(line[m.NameSpan.Start:m.NameSpan.End])
}

// fanOut sends a request to several servers, each under a sub id.
func (r *router) fanOut(m *wire.Message, ourID string, to []*namedServer) {
	f := &fanout{method: m.Method, ourID: ourID, subs: map[*namedServer]string{}, answers: map[*namedServer]*wire.Message{},
		tools: map[*namedServer][]json.RawMessage{}, pages: map[*namedServer]int{}, waiting: len(to), params: bytes.Clone(m.Params)}
	r.mu.Lock()
	for _, u := range to {
		sub := ourID + "@" + u.name
		f.subs[u] = sub
		r.fanouts[sub] = f
	}
	r.mu.Unlock()
	for _, u := range to {
		r.sendSub(u, f, m.Params)
	}
}

func (r *router) sendSub(u *namedServer, f *fanout, params []byte) {
	line := []byte(`{"jsonrpc":"2.0","id":`)
	line = append(line, wire.Quote(f.subs[u])...)
	line = append(line, `,"method":`...)
	line = append(line, wire.Quote(f.method)...)
	if params != nil {
		line = append(line, `,"params":`...)
		line = append(line, params...)
	}
	line = append(line, '}')
	r.toUpstreamOwn(u, line)
}

// notification passes a client's notification on.
func (r *router) notification(line []byte, m *wire.Message) {
	if m.Method == "notifications/cancelled" && m.Params != nil {
		if v, found, err := wire.Pointer(m.Params, "/requestId"); err == nil && found {
			id, _ := wire.Unquote(v)
			r.mu.Lock()
			u := r.routed[id]
			var subs []string
			var subUps []*namedServer
			for _, x := range r.ups {
				sub := id + "@" + x.name
				if _, ok := r.fanouts[sub]; ok {
					subs, subUps = append(subs, sub), append(subUps, x)
				}
			}
			r.mu.Unlock()
			if u != nil {
				r.toUpstream(u, line, m)
			}
			for i, sub := range subs {
				ln := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`)
				ln = append(append(ln, wire.Quote(sub)...), "}}"...)
				r.toUpstreamOwn(subUps[i], ln)
			}
			return
		}
	}
	for _, u := range r.ups {
		r.toUpstream(u, line, m)
	}
}

// clientAnswer takes the client's answer to a server's own request back to
// that server under the server's id.
func (r *router) clientAnswer(line []byte, m *wire.Message) {
	id, _ := wire.Unquote(m.ID)
	r.mu.Lock()
	req, ok := r.fromSrv[id]
	delete(r.fromSrv, id)
	r.mu.Unlock()
	if !ok {
		r.log.Warn("the client answered a request no tool server is waiting for; dropped", wire.LineAttr(line))
		return
	}
	out, om := wire.SpliceValue(line, m, m.IDSpan, req.id)
	r.toUpstream(req.up, out, om)
}

// fromUpstream handles one line of a server.
func (r *router) fromUpstream(u *namedServer, line []byte) {
	sl, err := wire.ReadServerLine(line)
	if err != nil {
		// The session reads it and ends the call it answers (or drops it).
		r.toSession(line)
		return
	}
	m := sl.Msg
	switch sl.Kind {
	case wire.KindRequest:
		r.mu.Lock()
		r.nextSrv++
		rid := u.name + "!" + strconv.Itoa(r.nextSrv)
		r.fromSrv[rid] = srvRequest{up: u, id: bytes.Clone(m.ID)}
		r.mu.Unlock()
		r.toSession(wire.SpliceID(line, m.IDSpan, wire.Quote(rid)))
		return
	case wire.KindNotification:
		r.toSession(line)
		return
	}
	id := sl.ID
	r.mu.Lock()
	f := r.fanouts[id]
	if f == nil {
		if r.routed[id] == u {
			delete(r.routed, id)
		}
		r.mu.Unlock()
		r.toSession(line)
		return
	}
	r.mu.Unlock()
	r.fanoutAnswer(u, f, m)
}

// fanoutAnswer takes one server's answer to a fan-out; the last one makes
// the client's answer.
func (r *router) fanoutAnswer(u *namedServer, f *fanout, m *wire.Message) {
	if f.method == "tools/list" && m.Result != nil {
		if next, more := r.addTools(u, f, m.Result); more {
			r.mu.Lock()
			f.pages[u]++
			again := f.pages[u] < maxListPages
			r.mu.Unlock()
			if again {
				params, _ := json.Marshal(map[string]string{"cursor": next})
				r.sendSub(u, f, params)
				return
			}
			r.log.Warn("a tool server's tools/list has more pages than the executor reads; the rest is left out",
				slog.String("server", u.name), slog.Int("pages", maxListPages))
		}
	}
	if f.method == "initialize" && m.Result != nil {
		u.caps = capabilities(m.Result)
	}
	r.mu.Lock()
	f.answers[u] = m
	delete(r.fanouts, f.subs[u])
	f.waiting--
	last := f.waiting == 0
	r.mu.Unlock()
	if last {
		r.toSession(r.combine(f))
	}
}

// addTools keeps a page's tools, names qualified; it returns the next
// cursor when the page names one.
func (r *router) addTools(u *namedServer, f *fanout, result []byte) (string, bool) {
	var page struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor *string           `json:"nextCursor"`
	}
	if err := json.Unmarshal(result, &page); err != nil {
		r.log.Warn("a tool server's tools/list result could not be read; its tools are left out", slog.String("server", u.name))
		return "", false
	}
	for _, t := range page.Tools {
		q, ok := qualifyTool(t, r.set.Qualified, u.name)
		if !ok {
			r.log.Warn("a tool of a tool server has no name and is left out", slog.String("server", u.name))
			continue
		}
		r.mu.Lock()
		f.tools[u] = append(f.tools[u], q)
		r.mu.Unlock()
	}
	if page.NextCursor != nil && *page.NextCursor != "" {
		return *page.NextCursor, true
	}
	return "", false
}

// qualifyTool rewrites a tool entry's name to <server><sep><name>, every
// other byte kept.
func qualifyTool(entry json.RawMessage, qualified func(server, tool string) string, server string) (json.RawMessage, bool) {
	v, found, err := wire.Pointer(entry, "/name")
	if err != nil || !found {
		return nil, false
	}
	name, ok := wire.Unquote(v)
	if !ok {
		return nil, false
	}
	start := cap(entry) - cap(v) // v is a slice of entry
	return wire.SpliceID(entry, wire.Span{Start: start, End: start + len(v)}, wire.Quote(qualified(server, name))), true
}

func capabilities(result []byte) map[string]json.RawMessage {
	var res struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	_ = json.Unmarshal(result, &res)
	if res.Capabilities == nil {
		return map[string]json.RawMessage{}
	}
	return res.Capabilities
}

// combine makes the client's answer to a fan-out.
func (r *router) combine(f *fanout) []byte {
	id := wire.Quote(f.ourID)
	var firstErr *wire.Message
	var firstErrServer string
	for _, u := range r.ups {
		if m, ok := f.answers[u]; ok && m.Error != nil && firstErr == nil {
			firstErr, firstErrServer = m, u.name
		}
	}
	switch f.method {
	case "tools/list":
		var all []json.RawMessage
		ok := 0
		for _, u := range r.ups {
			m := f.answers[u]
			if m == nil {
				continue
			}
			if m.Error != nil {
				r.log.Warn("a tool server refused tools/list; its tools are left out", slog.String("server", u.name))
				continue
			}
			ok++
			all = append(all, f.tools[u]...)
		}
		if ok == 0 && firstErr != nil {
			return r.serverError(id, firstErrServer, firstErr)
		}
		if all == nil {
			all = []json.RawMessage{}
		}
		res, _ := json.Marshal(map[string]any{"tools": all})
		if modernParams(f.params) {
			// The router wrote this result: a 2026-07-28 client reads resultType on it.
			res = wire.Complete(res)
		}
		return wire.ResultLine(id, res)
	case "initialize":
		if firstErr != nil {
			return r.serverError(id, firstErrServer, firstErr)
		}
		return wire.ResultLine(id, r.initializeResult(f))
	}
	if firstErr != nil {
		return r.serverError(id, firstErrServer, firstErr)
	}
	return wire.ResultLine(id, f.answers[r.ups[0]].Result)
}

func (r *router) initializeResult(f *fanout) []byte {
	var first map[string]json.RawMessage
	_ = json.Unmarshal(f.answers[r.ups[0]].Result, &first)
	if first == nil {
		first = map[string]json.RawMessage{}
	}
	capsUnion := map[string]json.RawMessage{}
	for _, u := range r.ups {
		for k, v := range u.caps {
			if _, ok := capsUnion[k]; !ok {
				capsUnion[k] = v
			}
		}
	}
	if _, ok := capsUnion["tools"]; !ok {
		capsUnion["tools"] = json.RawMessage(`{}`)
	}
	first["capabilities"], _ = json.Marshal(capsUnion)
	first["serverInfo"], _ = json.Marshal(map[string]string{"name": "mcp-executor", "version": "1",
		"title": "mcp-executor in front of " + strings.Join(r.set.ServerOrder, ", ")})
	delete(first, "instructions")
	out, _ := json.Marshal(first)
	return out
}

// serverError is a server's JSON-RPC error as the client's answer, its
// message naming the server.
func (r *router) serverError(id []byte, server string, m *wire.Message) []byte {
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(m.Error, &e)
	if e.Code == 0 {
		e.Code = wire.CodeInternalError
	}
	return wire.ErrorLine(id, e.Code, "tool server "+server+": "+e.Message, nil)
}

// modernParams reports whether a request's params name a 2026-07-28 (or later) revision in _meta.
func modernParams(params []byte) bool {
	if params == nil {
		return false
	}
	v, found, err := wire.Pointer(params, "/_meta/io.modelcontextprotocol~1protocolVersion")
	if err != nil || !found {
		return false
	}
	rev, ok := wire.Unquote(v)
	return ok && wire.Modern(rev)
}
