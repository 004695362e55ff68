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

	"github.com/seed-6e06167c/mcp-executor/internal/durable"
	"github.com/seed-6e06167c/mcp-executor/internal/sealed"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
)

// CheckpointPath is where the copy at path keeps its checkpoint: beside
// it, on the same volume the agent cannot reach.
func CheckpointPath(path string) string { return path + ".copy-checkpoint" }

// checkpoint says what the copy held when its executor last saved it: how
// many lines and bytes, and the SHA-256 of those bytes. It is only saved
// when every call the copy shows as sent has its receipt (no call is
// unfinished), so a start that finds the copy's first Bytes bytes
// unchanged knows the state of those lines without parsing them.
type checkpoint struct {
	Lines int64
	Bytes int64
	Sum   [sha256.Size]byte
}

const (
	checkpointType = "mcp-executor.copy-checkpoint.v1"
	// maxCheckpoint bounds the checkpoint file read at start; a checkpoint
	// is about 250 bytes.
	maxCheckpoint = 4096
)

func (c checkpoint) body(name string) map[string]any {
	return map[string]any{"name": name, "lines": c.Lines, "bytes": c.Bytes, "sha256": canon.B64(c.Sum[:])}
}

// seal writes the checkpoint of the copy of executor name as one canonical
// line, tagged with HMAC-SHA256 under a key derived from key
// (internal/sealed).
func (c checkpoint) seal(key []byte, name string) ([]byte, error) {
	out, err := sealed.Seal(checkpointType, key, c.body(name))
	if err != nil {
		return nil, fmt.Errorf("sealing the copy checkpoint: %w", err)
	}
	return out, nil
}

// openCheckpoint reads a checkpoint seal wrote under key for executor
// name. It fails, saying why, when the text is not one canonical line, the
// tag does not check, or a member is missing, out of range or names
// another executor.
func openCheckpoint(data, key []byte, name string) (checkpoint, error) {
	obj, err := sealed.Open(checkpointType, key, data)
	if err != nil {
		return checkpoint{}, err
	}
	if got, _ := obj["name"].(string); got != name {
		return checkpoint{}, fmt.Errorf("it is executor %q's, not %q's", got, name)
	}
	var c checkpoint
	lines, ok1 := obj["lines"].(int64)
	size, ok2 := obj["bytes"].(int64)
	sumText, _ := obj["sha256"].(string)
	sum, err := canon.UnB64(sumText)
	if !ok1 || !ok2 || lines < 1 || size < lines || err != nil || len(sum) != sha256.Size || len(obj) != 4 {
		return checkpoint{}, errors.New("a member is missing, out of range or not known")
	}
	c.Lines, c.Bytes = lines, size
	copy(c.Sum[:], sum)
	return c, nil
}

// readCheckpoint reads the checkpoint beside the copy at path. found is
// false when there is none; err says why one that is there cannot be used.
func readCheckpoint(path string, key []byte, name string) (c checkpoint, found bool, err error) {
	data, err := durable.ReadFile(CheckpointPath(path), maxCheckpoint)
	if errors.Is(err, os.ErrNotExist) {
		return checkpoint{}, false, nil
	}
	if err != nil {
		return checkpoint{}, true, err
	}
	c, err = openCheckpoint(data, key, name)
	return c, true, err
}

// writeCheckpoint saves c beside the copy at path (durable.WriteFile).
func writeCheckpoint(path string, c checkpoint, key []byte, name string) error {
	data, err := c.seal(key, name)
	if err != nil {
		return err
	}
	if err := durable.WriteFile(CheckpointPath(path), data); err != nil {
		return fmt.Errorf("saving the copy checkpoint: %w", err)
	}
	return nil
}

// kindMember begins the kind member of a copy line as the executor writes
// it. A string value cannot hold it: a quote inside a string is escaped.
var kindMember = []byte(`"kind":"`)

// rawKind is the kind a line the executor wrote names, read from its bytes
// without parsing it: the value of the first "kind" member (no nested
// object of a copy line has one), or "" when there is none.
func rawKind(raw []byte) Kind {
	i := bytes.Index(raw, kindMember)
	if i < 0 {
		return ""
	}
	rest := raw[i+len(kindMember):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return Kind(rest[:j])
}

// skimPrefix reads the first c.Bytes bytes of src, which the checkpoint
// says hold c.Lines whole lines whose SHA-256 is c.Sum, into h. Of these
// lines it parses and checks only those whose kind want reports (or whose
// kind cannot be told from the bytes), and hands them back in order. The
// others are neither parsed nor tag-checked: when the sum matches, every
// byte is as it was when the executor had read it whole or written it
// itself. why is "" when the prefix matches the checkpoint, else what
// differs; the lines handed back count only then.
func skimPrefix(src io.Reader, c checkpoint, key []byte, name string, want func(Kind) bool, h hash.Hash) (kept []Line, why string, err error) {
	br := bufio.NewReaderSize(io.TeeReader(io.LimitReader(src, c.Bytes), h), 1<<16)
	var (
		n, size int64
		buf     []byte
		mac     = hmac.New(sha256.New, key)
	)
	for {
		raw, complete, err := readCopyLine(br, &buf)
		if err != nil {
			return nil, "", err
		}
		if raw == nil {
			break
		}
		if !complete {
			return nil, "its last covered line does not end where the checkpoint says", nil
		}
		n++
		size += int64(len(raw)) + 1
		if k := rawKind(raw); k != "" && kindMembers[k] != nil && !want(k) {
			continue
		}
		ln, lerr := readLine(raw, mac)
		switch {
		case lerr != nil:
			return nil, fmt.Sprintf("line %d does not read (%s)", n, lerr.Reason), nil
		case ln.Seq != n || ln.Name != name:
			return nil, fmt.Sprintf("line %d carries number %d of executor %q", n, ln.Seq, ln.Name), nil
		case want(ln.Kind):
			kept = append(kept, ln)
		}
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	switch {
	case size != c.Bytes:
		return nil, fmt.Sprintf("the copy holds %d bytes, fewer than the %d the checkpoint covers: lines were taken off its end", size, c.Bytes), nil
	case sum != c.Sum || n != c.Lines:
		return nil, fmt.Sprintf("its first %d bytes changed since the checkpoint was saved", c.Bytes), nil
	}
	return kept, "", nil
}

// openFromCheckpoint uses the copy's checkpoint for Open where one fits:
// it skims the lines the checkpoint covers, hands those of the kinds want
// reports to visit, and returns where the full read goes on (with the
// running sum of the file). Where none fits, the file is put back at its
// start and the whole copy is read. use is what [Log.CheckpointUse]
// reports.
func openFromCheckpoint(f *os.File, fileSize int64, path string, key []byte, name string, want func(Kind) bool, visit func(Line) error) (from streamFrom, use string, err error) {
	from = streamFrom{sum: sha256.New()}
	c, found, err := readCheckpoint(path, key, name)
	if !found {
		return from, "", nil
	}
	var why string
	switch {
	case err != nil:
		why = err.Error()
	case fileSize < c.Bytes:
		why = fmt.Sprintf("the copy holds %d bytes, fewer than the %d it covers: lines were taken off the copy's end since its last stop", fileSize, c.Bytes)
	default:
		kept, differs, err := skimPrefix(f, c, key, name, want, from.sum)
		if err != nil {
			return from, "", fmt.Errorf("reading copy %s: %w", path, err)
		}
		if differs == "" {
			for _, ln := range kept {
				if err := visit(ln); err != nil {
					return from, "", err
				}
			}
			from.lines, from.bytes = c.Lines, c.Bytes
			return from, "used", nil
		}
		why = differs
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return from, "", fmt.Errorf("reading copy %s: %w", path, err)
		}
		from.sum.Reset()
	}
	return from, "ignored: " + why, nil
}

// CheckpointUse says what Open made of the checkpoint beside the copy: ""
// when there was none, "used" when the lines it covers were hashed and not
// parsed, else "ignored: " and why (the whole copy was then read).
func (l *Log) CheckpointUse() string { return l.cpUse }

// SaveCheckpoint saves, beside the copy, the checkpoint the next Open
// starts from: the copy's lines and bytes now and their SHA-256, after
// syncing lines written without a sync. It saves nothing, and says so
// with saved false, while a call the copy shows as sent has no receipt
// line yet or the log is broken: the checkpoint left from before still
// fits then, as it covers fewer lines. Call it when no more calls are
// taken, before Close.
func (l *Log) SaveCheckpoint() (saved bool, err error) {
	l.mu.Lock()
	l.w.WaitIdle()
	if l.closed || l.w.Err() != nil || len(l.unsettled) > 0 || l.size == 0 {
		l.mu.Unlock()
		return false, nil
	}
	if l.unsynced {
		if err := l.syncFile(); err != nil {
			l.mu.Unlock()
			return false, fmt.Errorf("syncing copy %s for its checkpoint: %w", l.path, err)
		}
		l.unsynced = false
	}
	c := checkpoint{Lines: l.nextSeq - 1, Bytes: l.size}
	l.sum.Sum(c.Sum[:0])
	l.mu.Unlock()
	if err := writeCheckpoint(l.path, c, l.key, l.name); err != nil {
		return false, err
	}
	return true, nil
}
