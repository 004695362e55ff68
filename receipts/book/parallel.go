package book

import (
	"errors"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/seed-6e06167c/mcp-executor/receipts/jwk"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
)

// Reading a book on every core. What one line holds can be worked out
// without the lines before it (its JSON, its records' envelopes, its leaf
// hash), and so can whether a signature checks against a given key; only
// the reader's state (slips, chains, totals) needs the lines in order.
// So a producer cuts the book into lines, workers parse them, and the
// reader takes them back in the book's order; the signatures it asks for
// are checked by a pool of workers while it goes on, each taken as valid.
// If any does not check, which only a damaged book shows, the caller reads
// the book again in order, checking each signature in its turn, so the
// answer is always the one a reading in order gives. At most window lines
// are held at a time, whatever the size of the book.

// parsedLine is one line as a worker has read it.
type parsedLine struct {
	line []byte // without its line feed (a copy the reader may keep while it reads)
	lf   bool
	end  int64   // bytes read up to the end of this line, line feed included
	buf  *[]byte // where line lives, handed back once it is read
	leaf [32]byte
	cut  bool // the line was cut (longer than MaxLineBytes+1): leaf was hashed as it was read
	// deferred: the line is covered by a checkpoint, its signatures are not decoded.
	deferred bool
	checked  []checkedSig // the signatures the worker checked (preverify)
	obj      map[string]any
	names    string
	err      error // the fault readLineValue found
	ioErr    error // reading the source failed here
	noLine   bool  // the end of the source: no line
}

// preParsed stands in a line's value for a record a worker has already
// read (or failed to read) with record.Parse; the reader takes it as read.
type preParsed struct {
	raw  any
	kind record.Kind
	rec  *record.Record
	err  error
}

// batchLines is how many lines go to a worker at a time, so that the
// hand-offs between goroutines are few beside the work on the lines.
const batchLines = 4

// lineBatch is lines handed to one worker together.
type lineBatch struct {
	lines []*parsedLine
	ready chan struct{}
}

func window() int { return 4 * runtime.GOMAXPROCS(0) } // batches in flight

// parseLines reads src line by line and hands each line, parsed, to each in
// the book's order. each's error stops the reading; so does an error from
// src, handed to each as the ioErr of a last line. The records of the
// first covered lines (those a checkpoint covers) are read without
// decoding their signatures (record.ParseDeferred).
//
// With a keyBoard, the workers check the signatures of stub lines too
// (preverify), against the keys the reader has published there.
func parseLines(src io.Reader, covered int, kb *keyBoard, opts Options, each func(*parsedLine) error) error {
	sc := newLineScanner(src)
	order := make(chan *lineBatch, window())
	jobs := make(chan *lineBatch, window())
	stop := make(chan struct{})
	var workers sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		workers.Go(func() {
			var scratch, slim []byte
			for batch := range jobs {
				for _, pl := range batch.lines {
					if !pl.noLine && pl.ioErr == nil {
						pl.parse(&slim)
						pl.preverify(kb, opts, &scratch)
					}
				}
				close(batch.ready)
			}
		})
	}
	go func() {
		defer close(order)
		defer close(jobs)
		for index, last := 0, false; !last; {
			batch := &lineBatch{lines: make([]*parsedLine, 0, batchLines), ready: make(chan struct{})}
			for ; len(batch.lines) < batchLines && !last; index++ {
				buf, _ := lineBuffers.Get().(*[]byte)
				if buf == nil {
					buf = new([]byte)
				}
				line, lf, err := sc.next(*buf)
				pl := &parsedLine{lf: lf, end: sc.bytes, deferred: index < covered}
				switch {
				case errors.Is(err, io.EOF):
					pl.noLine, last = true, true
				case err != nil:
					pl.ioErr, last = err, true
				default:
					pl.buf, pl.line = buf, line
					if sc.leaf != nil {
						pl.leaf, pl.cut = *sc.leaf, true // hashed whole as it was read
					}
				}
				batch.lines = append(batch.lines, pl)
			}
			select {
			case order <- batch:
			case <-stop:
				return
			}
			select {
			case jobs <- batch:
			case <-stop:
				return
			}
		}
	}()
	var err error
reading:
	for batch := range order {
		<-batch.ready
		for _, pl := range batch.lines {
			err = each(pl)
			pl.release()
			if err != nil || pl.noLine || pl.ioErr != nil {
				break reading
			}
		}
	}
	close(stop)
	for range order { // let the producer end (the lines left are the collector's)
	}
	workers.Wait()
	return err
}

// lineBuffers are the buffers lines are copied into, used again once the
// reader is done with a line (it keeps nothing of a line's bytes: what it
// keeps it copies).
var lineBuffers sync.Pool

func (pl *parsedLine) release() {
	if pl.buf != nil {
		*pl.buf = pl.line[:0]
		lineBuffers.Put(pl.buf)
		pl.buf, pl.line = nil, nil
	}
}

// parse reads the line's leaf hash, its value and the envelopes of its
// records.
func (pl *parsedLine) parse(slim *[]byte) {
	if !pl.cut {
		pl.leaf = leafHash(pl.line)
	}
	text := pl.line
	if pl.deferred {
		// A covered line: its hybrid signatures are not read (slim.go).
		// The parse keeps nothing of text, so slim is used again.
		if s, ok := blankHybridSignatures(pl.line, *slim); ok {
			text, *slim = s, s
		}
	}
	pl.obj, pl.names, pl.err = readLineValue(text)
	if pl.err != nil || pl.obj == nil {
		return
	}
	for _, name := range []string{"stub", "countersignature", "refusal", "acknowledgement", "pass"} {
		if v, ok := pl.obj[name]; ok {
			parse := record.Parse
			if pl.deferred {
				parse = record.ParseDeferred
			}
			rec, err := parse(v, record.Kind(name))
			pl.obj[name] = preParsed{raw: v, kind: record.Kind(name), rec: rec, err: err}
		}
	}
}

// verifyPool checks signatures on every core, each as it is asked for,
// noting whether any did not check.
type verifyPool struct {
	jobs chan verifyJob
	bad  atomic.Bool
	wg   sync.WaitGroup
}

type verifyJob struct {
	key        *jwk.Key
	input, sig []byte
}

func newVerifyPool() *verifyPool {
	p := &verifyPool{jobs: make(chan verifyJob, 64)}
	for range runtime.GOMAXPROCS(0) {
		p.wg.Go(func() {
			for j := range p.jobs {
				if !checkSignature(j.key, j.input, j.sig) {
					p.bad.Store(true)
				}
			}
		})
	}
	return p
}

// verify hands one signature to the pool and takes it as valid for now.
func (p *verifyPool) verify(k *jwk.Key, input, sig []byte) bool {
	p.jobs <- verifyJob{k, input, sig}
	return true
}

// wait ends the pool and reports whether every signature checked.
func (p *verifyPool) wait() (allChecked bool) {
	close(p.jobs)
	p.wg.Wait()
	return !p.bad.Load()
}
