package toolserver

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact"
)

// Bounds of a StderrLog.
const (
	// DefaultMaxLogLine is the most bytes of one stderr line a StderrLog
	// reads into a record; the rest of the line is counted (cut).
	DefaultMaxLogLine = 4 << 10
	// DefaultLogQueue is how many lines may wait for the logger; lines past
	// it are dropped and counted.
	DefaultLogQueue = 256
	// maxKeyBlock bounds the lines of a PEM private key block read into one
	// record.
	maxKeyBlock = 128
	// closeWait is how long Close waits for the lines still queued.
	closeWait = time.Second
)

// Log messages of a StderrLog.
const (
	MsgStderrLine    = "tool server stderr"
	MsgStderrDropped = "tool server stderr lines dropped"
)

// StderrLogOptions configure a StderrLog.
type StderrLogOptions struct {
	// Server names the server in each record (attribute "server"); "" for
	// the single server leaves it out.
	Server string
	// Redact is applied to every line before it is logged (the executor's
	// redactor's Text). nil: a redactor of the built-in detectors under a
	// salt of its own.
	Redact func(string) string
	// MaxLine bounds each line, in bytes; 0 is DefaultMaxLogLine.
	MaxLine int
	// Queue bounds the lines waiting for the logger; 0 is DefaultLogQueue.
	Queue int
}

// StderrLog is a tool server's stderr written to a logger: cut into lines,
// each line bounded, redacted, its control characters escaped
// ([redact.Printable]), one record per line (a private key's PEM block is
// one record, so that its lines are redacted together).
//
// Write never waits for the logger: lines queue, and when the queue is full
// they are dropped and counted, so a stalled log never stalls the server.
// A line longer than MaxLine keeps its first MaxLine bytes, less the word it
// was cut inside (a secret cut in two would escape its detector); the
// record says how many bytes were cut. Give it as Spec.Stderr, one per
// server: the process reads the server's stderr into it as it comes and
// closes it at the end.
type StderrLog struct {
	log    *slog.Logger
	server string
	redact func(string) string
	max    int

	mu      sync.Mutex
	line    []byte // the line being read, at most max bytes
	cut     int    // bytes of it past max
	closed  bool
	queue   chan stderrLine
	dropped atomic.Int64
	done    chan struct{}
}

type stderrLine struct {
	text []byte
	cut  int
}

// NewStderrLog returns a StderrLog writing to log.
func NewStderrLog(log *slog.Logger, o StderrLogOptions) *StderrLog {
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLogLine
	}
	if o.Queue <= 0 {
		o.Queue = DefaultLogQueue
	}
	if o.Redact == nil {
		r, err := redact.New(redact.NewSalt(), redact.Options{})
		if err != nil {
			panic(err) // the built-in options with a fresh salt always build
		}
		o.Redact = r.Text
	}
	w := &StderrLog{log: log, server: o.Server, redact: o.Redact, max: o.MaxLine,
		queue: make(chan stderrLine, o.Queue), done: make(chan struct{})}
	go w.run()
	return w
}

// Write reads p as more of the server's stderr. It never fails and never
// waits for the logger.
func (w *StderrLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for rest := p; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		chunk := rest
		if i >= 0 {
			chunk = rest[:i]
		}
		room := w.max - len(w.line)
		if len(chunk) > room {
			w.line = append(w.line, chunk[:room]...)
			w.cut += len(chunk) - room
		} else {
			w.line = append(w.line, chunk...)
		}
		if i < 0 {
			break
		}
		w.endLine()
		rest = rest[i+1:]
	}
	return len(p), nil
}

// endLine queues the line read (w.mu held).
func (w *StderrLog) endLine() {
	l := stderrLine{text: w.line, cut: w.cut}
	w.line, w.cut = nil, 0
	if w.closed {
		w.dropped.Add(1)
		return
	}
	select {
	case w.queue <- l:
	default:
		w.dropped.Add(1)
	}
}

// Close queues the last line (one without a line feed), then waits up to
// a second for the queued lines to be logged. It is safe to call more than
// once.
func (w *StderrLog) Close() error {
	w.mu.Lock()
	if !w.closed {
		if len(w.line) > 0 || w.cut > 0 {
			w.endLine()
		}
		w.closed = true
		close(w.queue)
	}
	w.mu.Unlock()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
	}
	return nil
}

// Dropped is how many lines were dropped so far.
func (w *StderrLog) Dropped() int64 { return w.dropped.Load() }

// run logs the queued lines in order.
func (w *StderrLog) run() {
	defer close(w.done)
	var block []stderrLine // a private key's PEM block being read
	reported := int64(0)
	for l := range w.queue {
		if d := w.dropped.Load(); d > reported {
			w.log.LogAttrs(context.Background(), slog.LevelWarn, MsgStderrDropped, w.attrs(slog.Int64("lines", d-reported))...)
			reported = d
		}
		text := string(l.text)
		if l.cut > 0 {
			var more int
			text, more = cutWord(text)
			l.cut += more
		}
		switch {
		case block != nil:
			block = append(block, stderrLine{text: []byte(text), cut: l.cut})
			if strings.Contains(text, "-----END") || len(block) >= maxKeyBlock {
				w.logBlock(block)
				block = nil
			}
		case beginsKeyBlock(text):
			block = []stderrLine{{text: []byte(text), cut: l.cut}}
		default:
			w.logLine(text, l.cut, 1)
		}
	}
	if block != nil {
		w.logBlock(block)
	}
	if d := w.dropped.Load(); d > reported {
		w.log.LogAttrs(context.Background(), slog.LevelWarn, MsgStderrDropped, w.attrs(slog.Int64("lines", d-reported))...)
	}
}

// beginsKeyBlock reports whether the line opens a PEM private key block
// that it does not also close.
func beginsKeyBlock(s string) bool {
	i := strings.Index(s, "-----BEGIN")
	return i >= 0 && strings.Contains(s[i:], "PRIVATE KEY-----") && !strings.Contains(s[i:], "-----END")
}

func (w *StderrLog) logBlock(block []stderrLine) {
	var b strings.Builder
	cut := 0
	for i, l := range block {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.Write(l.text)
		cut += l.cut
	}
	w.logLine(b.String(), cut, len(block))
}

func (w *StderrLog) logLine(text string, cut, lines int) {
	attrs := []slog.Attr{slog.String("line", redact.Printable(w.redact(text)))}
	if cut > 0 {
		attrs = append(attrs, slog.Int("cut", cut))
	}
	if lines > 1 {
		attrs = append(attrs, slog.Int("lines", lines))
	}
	w.log.LogAttrs(context.Background(), slog.LevelInfo, MsgStderrLine, w.attrs(attrs...)...)
}

func (w *StderrLog) attrs(a ...slog.Attr) []slog.Attr {
	if w.server == "" {
		return a
	}
	return append([]slog.Attr{slog.String("server", w.server)}, a...)
}

// cutWord drops what a line cut at its bound ends with: a partial rune,
// then the run of letters, digits and the characters of tokens, encodings
// and URLs it was cut inside. It returns what is left and how many bytes
// it dropped.
func cutWord(s string) (string, int) {
	n := len(s)
	for len(s) > 0 {
		c, size := utf8.DecodeLastRuneInString(s)
		if c != utf8.RuneError || size > 1 {
			break
		}
		s = s[:len(s)-1]
	}
	s = strings.TrimRightFunc(s, func(c rune) bool {
		return c < utf8.RuneSelf && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.ContainsRune("+/=_.~%-:@", c))
	})
	return s, n - len(s)
}
