package copylog

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
)

// ReadFileFunc reads and verifies the copy at path line by line without
// locking it or writing anything, holding one line at a time. It hands each
// line to fn in order as it is read; a copy that does not verify is only
// known at its end (a tag that fails further on is reported before a
// fault in the sequence earlier), so fn's lines count only when
// ReadFileFunc returns nil. Errors are as for [ReadFile]; fn's error stops
// the reading and is returned as it is.
func ReadFileFunc(path string, key []byte, name string, fn func(Line) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading copy %s: %w", path, err)
	}
	defer func() { _ = f.Close() }() // read only: a failed close loses nothing
	_, _, err = verifyStream(f, key, name, path, fn)
	return err
}

// verifyStream verifies the copy read from src (from where it stands) and
// hands each line that checks to each. It returns the number of lines and
// of bytes read. On a sequence fault it reads src again from the start to
// name a repeated line, so src must seek.
func verifyStream(src io.ReadSeeker, key []byte, name, path string, each func(Line) error) (int64, int64, error) {
	return verifyStreamFrom(src, streamFrom{}, key, name, path, each)
}

// streamFrom is where verifyStreamFrom starts: after lines lines that are
// known good (those a checkpoint covers), feeding sum every byte of every
// whole line it reads (nil for none).
type streamFrom struct {
	lines, bytes int64
	sum          hash.Hash
}

// verifyStreamFrom is verifyStream from where from says src stands: the
// lines are numbered on from there, and it returns the number of lines in
// all and the bytes it read itself.
func verifyStreamFrom(src io.ReadSeeker, from streamFrom, key []byte, name, path string, each func(Line) error) (int64, int64, error) {
	where := "copy"
	if path != "" {
		where = "copy " + path
	}
	br := bufio.NewReaderSize(src, 1<<16)
	n, checked := from.lines, from.lines
	var (
		size      int64
		firstErr  *LineError
		otherName *LineError
		seqAt     int64 // first line whose number is not its place
		seqGot    int64
		seqRaw    []byte
		movedTo   int64 // a later line carrying the number seqAt lacks
		buf       []byte
		cut       bool
		mac       hash.Hash // one for every line: HMAC-SHA256 under key
	)
	for {
		raw, complete, err := readCopyLine(br, &buf)
		if err != nil {
			return 0, 0, fmt.Errorf("reading %s: %w", where, err)
		}
		if raw == nil {
			break
		}
		if n == 0 {
			if len(key) == 0 {
				return 0, 0, fmt.Errorf("%s holds lines but no copy key was given: %w", where, ErrKeyMissing)
			}
			if len(key) != KeySize {
				return 0, 0, fmt.Errorf("%s: the copy key is %d bytes, not %d", where, len(key), KeySize)
			}
			if name == "" {
				return 0, 0, errors.New("no executor name given for the copy")
			}
		}
		if !complete {
			cut = true
			break
		}
		size += int64(len(raw)) + 1
		n++
		if from.sum != nil {
			from.sum.Write(raw)
			from.sum.Write(lineFeed)
		}
		if mac == nil {
			mac = hmac.New(sha256.New, key)
		}
		ln, lerr := readLine(raw, mac)
		if lerr != nil {
			if firstErr == nil {
				lerr.Path, lerr.Line = path, int(n)
				firstErr = lerr
			}
			continue
		}
		checked++
		if firstErr != nil {
			continue
		}
		if ln.Name != name && otherName == nil {
			otherName = &LineError{Path: path, Line: int(n), Reason: fmt.Sprintf("the line was written by executor %q, not %q", ln.Name, name), Err: ErrOtherExecutor}
		}
		switch {
		case seqAt == 0 && ln.Seq != n:
			seqAt, seqGot, seqRaw = n, ln.Seq, append([]byte(nil), raw...)
		case seqAt != 0 && movedTo == 0 && ln.Seq == seqAt:
			movedTo = n
		}
		if otherName == nil && seqAt == 0 && each != nil {
			if err := each(ln); err != nil {
				return 0, 0, err
			}
		}
	}
	return n, size, streamVerdict(src, path, verdict{firstErr, otherName, seqAt, seqGot, seqRaw, movedTo, cut, checked, n})
}

var lineFeed = []byte{'\n'}

// verdict is what verifyStream found, for streamVerdict to choose the
// error from in the order the format's reader reports them.
type verdict struct {
	firstErr, otherName *LineError
	seqAt, seqGot       int64
	seqRaw              []byte
	movedTo             int64
	cut                 bool
	checked, n          int64
}

func streamVerdict(src io.ReadSeeker, path string, v verdict) error {
	if v.firstErr != nil {
		if v.checked == 0 && errors.Is(v.firstErr.Err, errTagFails) {
			return &LineError{Path: path, Line: v.firstErr.Line, Reason: "no line checks under the copy key given: the key is not this copy's, or every line was changed", Err: ErrWrongKey}
		}
		if errors.Is(v.firstErr.Err, errTagFails) {
			v.firstErr.Err = ErrTampered
		}
		return v.firstErr
	}
	if v.otherName != nil {
		return v.otherName
	}
	if v.seqAt != 0 {
		return seqFault(src, path, v.seqAt, v.seqGot, v.seqRaw, v.movedTo)
	}
	if v.cut {
		return &LineError{Path: path, Line: int(v.n + 1), Reason: "the last line has no end (LF): a stop cut it while it was being written", Err: ErrCutLine}
	}
	return nil
}

// seqFault says what is wrong at line at, the first whose number (got) is
// not its place: a line put twice, one moved, or one taken out.
func seqFault(src io.ReadSeeker, path string, at, got int64, raw []byte, movedTo int64) error {
	fail := func(format string, a ...any) error {
		return &LineError{Path: path, Line: int(at), Reason: fmt.Sprintf(format, a...), Err: ErrTampered}
	}
	if got >= 1 && got < at {
		// Every line before at carries its place: line got carries got.
		if earlier, err := copyLineAt(src, got); err == nil && bytes.Equal(earlier, raw) {
			return fail("the line repeats line %d (number %d): a line was put twice", got, got)
		}
		return fail("the line carries number %d, which line %d already carries", got, got)
	}
	if movedTo > at {
		return fail("the line carries number %d where %d belongs; number %d is at line %d: a line was moved", got, at, at, movedTo)
	}
	return fail("the line carries number %d where %d belongs: a line was taken out", got, at)
}

// copyLineAt reads line n (1-based) of src from its start.
func copyLineAt(src io.ReadSeeker, n int64) ([]byte, error) {
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(src, 1<<16)
	var buf []byte
	for i := int64(1); ; i++ {
		raw, complete, err := readCopyLine(br, &buf)
		if err != nil || raw == nil || !complete {
			return nil, errors.New("line not found")
		}
		if i == n {
			return raw, nil
		}
	}
}

// readCopyLine reads one line into *buf, without its line feed; a line
// longer than maxLine is kept to maxLine+1 bytes (readLine refuses it). It
// returns nil at the end, and complete false for a last line without a
// line feed.
func readCopyLine(br *bufio.Reader, buf *[]byte) (raw []byte, complete bool, err error) {
	line := (*buf)[:0]
	if line == nil {
		line = []byte{} // an empty line is a line, not the end
	}
	sawBytes := false
	for {
		chunk, rerr := br.ReadSlice('\n')
		sawBytes = sawBytes || len(chunk) > 0
		if rerr == nil {
			chunk = chunk[:len(chunk)-1]
		}
		if room := maxLine + 1 - len(line); room > 0 {
			line = append(line, chunk[:min(room, len(chunk))]...)
		}
		switch {
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		case rerr == io.EOF:
			*buf = line
			if !sawBytes {
				return nil, false, nil
			}
			return line, false, nil
		case rerr != nil:
			return nil, false, rerr
		}
		*buf = line
		return line, true, nil
	}
}

// ReadUnfinished reads and verifies the copy at path line by line, as
// ReadFileFunc does, and returns how many lines it holds and its
// unfinished calls (as UnfinishedCalls lists them), keeping no other line.
func ReadUnfinished(path string, key []byte, name string) (int64, []Unfinished, error) {
	var acc unfinishedAcc
	var n int64
	err := ReadFileFunc(path, key, name, func(ln Line) error {
		n++
		acc.add(ln)
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return n, acc.list(), nil
}

// FileLines is a LinesFunc over the copy at path, for [CompareLines]: its
// first call verifies the copy line by line (as [ReadFileFunc]) and notes
// how many bytes it read; each later call reads and verifies those bytes
// again, and only those, so that lines a running executor appends
// meanwhile are not seen, and a copy changed between two readings fails
// its verification. No call holds more than one line.
func FileLines(path string, key []byte, name string) LinesFunc {
	var size, lines int64 = -1, -1
	return func(fn func(Line) error) error {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("reading copy %s: %w", path, err)
		}
		defer func() { _ = f.Close() }() // read only: a failed close loses nothing
		var src io.ReadSeeker = f
		if size >= 0 {
			src = io.NewSectionReader(f, 0, size)
		}
		n, read, err := verifyStream(src, key, name, path, fn)
		switch {
		case err != nil:
			return err
		case size < 0:
			size, lines = read, n
		case read != size || n != lines:
			return fmt.Errorf("reading copy %s: it holds %d lines in its first %d bytes now, %d lines in %d bytes before: it changed while compare read it", path, n, read, lines, size)
		}
		return nil
	}
}
