package streamhttp_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-6e06167c/mcp-executor/receipts/book"
	"github.com/seed-6e06167c/mcp-executor/sidecar/front/streamhttp"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// A 2025-11-25 session: its id is 32 random bytes; a request answered as JSON when Accept admits only
// that, as an event stream (a priming event with an id and a retry, then the answer with its event
// id) when it admits both; a notification gets 202; a refused call never reaches the server.
func TestSessionAnswersAsJSONAndAsEvents(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{})
	sid := tf.initialize("2025-11-25")
	if b, err := base64.RawURLEncoding.DecodeString(sid); err != nil || len(b) != 32 {
		t.Fatalf("session id %q: %d bytes, %v", sid, len(b), err)
	}
	h := session(sid, "2025-11-25")
	h["Accept"] = []string{"application/json"}
	resp := tf.do(request{body: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, headers: h})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("tools/list: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	if body := answerOf(t, resp); !strings.HasPrefix(body, `{"jsonrpc":"2.0","id":1,"result":{`) || !strings.Contains(body, `"echo"`) {
		t.Fatalf("tools/list answered %s", body)
	}

	resp = tf.do(request{body: `{"jsonrpc":"2.0","id":"call-7","method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`, headers: session(sid, "2025-11-25")})
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	evs := readEvents(t, resp.Body)
	if len(evs) != 2 || evs[0].data != "" || evs[0].retry != 1000 || !strings.HasSuffix(evs[0].id, "-0") {
		t.Fatalf("events %+v: want a priming event, then the answer", evs)
	}
	stream, _, _ := strings.Cut(evs[0].id, "-")
	if evs[1].id != stream+"-1" || !strings.Contains(evs[1].data, `"id":"call-7"`) || !strings.Contains(evs[1].data, `"text":"hello"`) {
		t.Fatalf("answer event %+v", evs[1])
	}

	resp = tf.do(request{body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"forbidden","arguments":{}}}`, headers: session(sid, "2025-11-25")})
	answer := answerOf(t, resp)
	m := jsonMap(t, answer)
	res, _ := m["result"].(map[string]any)
	if res == nil || res["isError"] != true || strings.Contains(answer, "the forbidden tool ran") {
		t.Fatalf("the unlisted tool was answered %s", answer)
	}
	if refused, _ := res["_meta"].(map[string]any); refused == nil || refused["red.prova/refused"] == nil {
		t.Fatalf("the refusal names no refusal code: %s", answer)
	}
}

// A server's answer reaches the client as the server wrote it, apart from the id: in a JSON body and
// in an event's data.
func TestServersBytesReachTheClient(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{mode: "raw"})
	sid := tf.initialize("2025-11-25")
	for _, accept := range []string{"application/json", "text/event-stream"} {
		h := session(sid, "2025-11-25")
		h["Accept"] = []string{accept}
		resp := tf.do(request{body: `{"jsonrpc":"2.0","id":"b-` + accept[:4] + `","method":"tools/call","params":{"name":"exact","arguments":{}}}`, headers: h})
		got := answerOf(t, resp)
		if want := rawAnswer([]byte(`"b-` + accept[:4] + `"`)); got != want {
			t.Errorf("Accept %s:\n got %s\nwant %s", accept, got, want)
		}
	}
	// The same over 2026-07-28, where the front puts its own id in and the client's back.
	resp := tf.do(request{body: `{"jsonrpc":"2.0","id":  41,"method":"tools/call","params":{"name":"exact","arguments":{},` + modernMeta + `}}`,
		headers: modern("tools/call", "exact")})
	if got, want := answerOf(t, resp), rawAnswer([]byte("41")); got != want {
		t.Errorf("2026-07-28:\n got %s\nwant %s", got, want)
	}
}

// DELETE ends the session: it is not found after, and a call in flight at the time still gets its
// answer and its receipt.
func TestDeleteEndsTheSession(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{})
	sid := tf.initialize("2025-11-25")
	answered := make(chan string, 1)
	go func() {
		resp, err := tf.try(context.Background(), request{body: `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{"ms":700}}}`, headers: session(sid, "2025-11-25")})
		if err != nil {
			answered <- err.Error()
			return
		}
		defer resp.Body.Close()
		answered <- answerOf(t, resp)
	}()
	waitLog(t, tf, `"tool":"slow"`)
	resp := tf.do(request{method: http.MethodDelete, headers: session(sid, "2025-11-25")})
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %s", resp.Status)
	}
	if a := <-answered; !strings.Contains(a, `"slept"`) {
		t.Fatalf("the call in flight was answered %s", a)
	}
	resp = tf.do(request{body: `{"jsonrpc":"2.0","id":6,"method":"ping"}`, headers: session(sid, "2025-11-25")})
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a request after DELETE: %s", resp.Status)
	}
	tf.close()
	if n := stubs(t, tf); n != 1 {
		t.Fatalf("%d stubs in the book, want 1", n)
	}
}

// stubs checks the book (intact, within its slip) and counts its stubs.
func stubs(t *testing.T, tf *testFront) int {
	t.Helper()
	rep, err := book.VerifyFile(tf.env.BookPath, []string{tf.env.Thumbprint})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Intact || !rep.WithinSlips {
		t.Fatalf("the book is not intact and within its slip: %+v", rep)
	}
	return rep.Counts.Stubs
}

// waitLog waits until the log holds s (two minutes at most: a 12 MiB answer under the race detector on
// two busy cores takes a while).
func waitLog(t *testing.T, tf *testFront, s string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(tf.log.String(), s) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %s", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A client whose connection breaks in the middle of a call reconnects with Last-Event-ID and gets the
// answer there, once; asking again from the answer's own id gives nothing more.
func TestReplayAfterLastEventID(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{})
	sid := tf.initialize("2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := tf.try(ctx, request{body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow","arguments":{"ms":600}}}`, headers: session(sid, "2025-11-25")})
	if err != nil {
		t.Fatal(err)
	}
	var priming sseEvent
	_ = parseSSE(resp.Body, func(e sseEvent) bool { priming = e; return false })
	cancel() // the connection breaks before the answer
	_ = resp.Body.Close()
	if priming.id == "" {
		t.Fatal("no priming event")
	}
	h := session(sid, "2025-11-25")
	h["Last-Event-ID"] = []string{priming.id}
	var got []sseEvent
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp = tf.do(request{method: http.MethodGet, headers: h})
		if resp.StatusCode == http.StatusConflict && time.Now().Before(deadline) {
			// the server has not yet seen the first connection go
			_ = resp.Body.Close()
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET with Last-Event-ID: %s %s", resp.Status, readAll(t, resp.Body))
		}
		got = readEvents(t, resp.Body)
		break
	}
	if len(got) != 1 || !strings.Contains(got[0].data, `"id":9`) || !strings.Contains(got[0].data, "slept") {
		t.Fatalf("the replay gave %+v", got)
	}
	h["Last-Event-ID"] = []string{got[0].id}
	resp = tf.do(request{method: http.MethodGet, headers: h})
	if again := readEvents(t, resp.Body); resp.StatusCode != http.StatusOK || len(again) != 0 {
		t.Fatalf("after the answer's own id: %s %+v", resp.Status, again)
	}
	tf.close()
	if n := stubs(t, tf); n != 1 {
		t.Fatalf("%d stubs, want 1", n)
	}
}

// What the server sends on its own goes on the GET stream when no request is in flight; a server's
// request during a call goes on that call's stream, and the client's answer (a POST) gets 202.
func TestServerMessagesFindTheirStream(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{})
	sid := tf.initialize("2025-11-25")
	resp := tf.do(request{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ask","arguments":{"text":"may I?"}}}`, headers: session(sid, "2025-11-25")})
	var asked sseEvent
	_ = parseSSE(resp.Body, func(e sseEvent) bool {
		if strings.Contains(e.data, "elicitation/create") {
			asked = e
			return false
		}
		return true
	})
	m, err := wire.Inspect([]byte(asked.data))
	if err != nil {
		t.Fatalf("%v: %s", err, asked.data)
	}
	idText := string(m.ID)
	r2 := tf.do(request{body: `{"jsonrpc":"2.0","id":` + idText + `,"result":{"action":"decline"}}`, headers: session(sid, "2025-11-25")})
	_ = r2.Body.Close()
	if r2.StatusCode != http.StatusAccepted {
		t.Fatalf("the client's answer: %s", r2.Status)
	}
	rest := readEvents(t, resp.Body)
	if len(rest) != 1 || !strings.Contains(rest[0].data, "the client said decline") {
		t.Fatalf("after the answer: %+v", rest)
	}
}

// Two 2026-07-28 requests with the same client id at once each get their own answer under that id:
// the front sends them under ids of its own.
func TestModernRequestsWithTheSameID(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{opts: nil})
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			text := "n" + strconv.Itoa(i)
			resp, err := tf.try(context.Background(), request{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"},` + modernMeta + `}}`,
				headers: modern("tools/call", "echo")})
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			a := answerOf(t, resp)
			if !strings.HasPrefix(a, `{"jsonrpc":"2.0","id":1,`) || !strings.Contains(a, `"text":"`+text+`"`) {
				t.Errorf("request %d answered %s", i, a)
			}
		}()
	}
	wg.Wait()
	if n := tf.f.Sessions(); n > 2 {
		t.Fatalf("%d executor sessions serve the pool, want at most 2", n)
	}
}

// The executor's own question about a held call goes on that call's event stream; with a call answered
// as JSON (no stream of its own) it goes on the GET stream. Either way the client's answer lets the call
// through.
func TestHeldCallIsAskedOnItsStream(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{})
	sid := tf.initialize("2025-11-25")
	answerAsk := func(e sseEvent) {
		m, err := wire.Inspect([]byte(e.data))
		if err != nil || m.Method != "elicitation/create" {
			t.Fatalf("not the executor's question: %v %s", err, e.data)
		}
		r := tf.do(request{body: `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"action":"accept","content":{"approve":true}}}`, headers: session(sid, "2025-11-25")})
		_ = r.Body.Close()
		if r.StatusCode != http.StatusAccepted {
			t.Fatalf("the answer: %s", r.Status)
		}
	}
	// On the call's stream.
	resp := tf.do(request{body: `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"held","arguments":{"text":"a"}}}`, headers: session(sid, "2025-11-25")})
	var answered string
	_ = parseSSE(resp.Body, func(e sseEvent) bool {
		switch {
		case strings.Contains(e.data, "elicitation/create"):
			answerAsk(e)
		case strings.Contains(e.data, `"id":11`):
			answered = e.data
			return false
		}
		return true
	})
	_ = resp.Body.Close()
	if !strings.Contains(answered, "held call ran: a") {
		t.Fatalf("the held call on its stream: %s", answered)
	}
	// A call answered as JSON: the question comes on the GET stream.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get, err := tf.try(ctx, request{method: http.MethodGet, headers: session(sid, "2025-11-25")})
	if err != nil || get.StatusCode != http.StatusOK {
		t.Fatalf("GET: %v %v", err, get)
	}
	asked := make(chan struct{})
	go func() {
		_ = parseSSE(get.Body, func(e sseEvent) bool {
			if strings.Contains(e.data, "elicitation/create") {
				answerAsk(e)
				close(asked)
				return false
			}
			return true
		})
	}()
	h := session(sid, "2025-11-25")
	h["Accept"] = []string{"application/json"}
	resp = tf.do(request{body: `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"held","arguments":{"text":"b"}}}`, headers: h})
	if a := answerOf(t, resp); !strings.Contains(a, "held call ran: b") {
		t.Fatalf("the held call answered as JSON: %s", a)
	}
	<-asked
}

// A stream whose answer was written is kept for a replay for ReplayKeep, then forgotten.
func TestReplayIsKeptForAWhile(t *testing.T) {
	t.Parallel()
	tf := newFront(t, frontSetup{opts: func(o *streamhttp.Options) { o.ReplayKeep = 300 * time.Millisecond }})
	sid := tf.initialize("2025-11-25")
	resp := tf.do(request{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`, headers: session(sid, "2025-11-25")})
	evs := readEvents(t, resp.Body)
	if len(evs) != 2 {
		t.Fatalf("events %+v", evs)
	}
	h := session(sid, "2025-11-25")
	h["Last-Event-ID"] = []string{evs[0].id}
	replay := tf.do(request{method: http.MethodGet, headers: h})
	if got := readEvents(t, replay.Body); replay.StatusCode != http.StatusOK || len(got) != 1 || got[0].data != evs[1].data {
		t.Fatalf("the replay right after: %s %+v", replay.Status, got)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		late := tf.do(request{method: http.MethodGet, headers: h})
		body := readAll(t, late.Body)
		if late.StatusCode == http.StatusBadRequest && strings.Contains(body, "keeps nothing") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stream is still kept: %s %s", late.Status, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
