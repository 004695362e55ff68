package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/seed-6e06167c/mcp-executor/internal/durable"
	"github.com/seed-6e06167c/mcp-executor/receipts/canon"
	"github.com/seed-6e06167c/mcp-executor/receipts/record"
	"github.com/seed-6e06167c/mcp-executor/sidecar/wire"
)

// ChannelQueue and ChannelCommand are the channels of answers read from the
// queue folder: written there by a person or a script, or by the approve
// command (the file then says "answeredWith": [AnsweredWithCommand]).
const (
	ChannelQueue   = "queue"
	ChannelCommand = "command"
)

// AnsweredWithCommand is the answeredWith member the approve command writes.
const AnsweredWithCommand = "mcp-executor approve"

// TimeLayout is how a queue file writes its times: UTC, to the millisecond.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// MaxFileSize is the largest queue file read.
const MaxFileSize = 1 << 20

// File is one request file of the queue folder, <queue>/<id>.json. The
// executor writes it with Approved nil; a person or a script answers by
// writing it again (atomically: a new file renamed over it) with Approved
// true or false and every other member unchanged.
type File struct {
	ID              string          `json:"id"`
	Tool            string          `json:"tool"`
	Action          string          `json:"action"`
	Amount          *record.Amount  `json:"amount"`    // null when the action has no amount
	Arguments       json.RawMessage `json:"arguments"` // secret-looking values redacted; null when not known (after a restart)
	ArgumentsSHA256 string          `json:"argumentsSha256"`
	RequestedAt     string          `json:"requestedAt"`
	ExpiresAt       string          `json:"expiresAt"`
	Approved        *bool           `json:"approved"`
	// AnsweredWith, optional, is what wrote the answer ([AnsweredWithCommand]).
	AnsweredWith string `json:"answeredWith,omitempty"`
}

// FileFor is the file the queue writes for r.
func FileFor(r *Request) File {
	args := r.Shown
	if args == nil {
		args = json.RawMessage("null")
	}
	return File{ID: r.ID, Tool: r.Tool, Action: r.Action, Amount: r.Amount, Arguments: args, ArgumentsSHA256: r.Arguments,
		RequestedAt: r.RequestedAt.UTC().Format(TimeLayout), ExpiresAt: r.ExpiresAt.UTC().Format(TimeLayout)}
}

// Encode is the file's text: indented JSON for people, ending in LF.
func (f File) Encode() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("approval: encoding the request file of %s: %w", f.ID, err)
	}
	return buf.Bytes(), nil
}

// Bound reports whether g holds the same request as f: every member but
// approved and answeredWith equal (the arguments compared in RFC 8785 form).
func (f File) Bound(g File) bool {
	if f.ID != g.ID || f.Tool != g.Tool || f.Action != g.Action || f.ArgumentsSHA256 != g.ArgumentsSHA256 ||
		f.RequestedAt != g.RequestedAt || f.ExpiresAt != g.ExpiresAt || (f.Amount == nil) != (g.Amount == nil) ||
		(f.Amount != nil && *f.Amount != *g.Amount) {
		return false
	}
	a, err1 := canon.JCS(f.Arguments)
	b, err2 := canon.JCS(g.Arguments)
	return err1 == nil && err2 == nil && bytes.Equal(a, b)
}

// Expires is the file's expiry time.
func (f File) Expires() (time.Time, error) {
	t, err := time.Parse(TimeLayout, f.ExpiresAt)
	if err != nil {
		return time.Time{}, fmt.Errorf("approval: expiresAt %q is not %s", f.ExpiresAt, TimeLayout)
	}
	return t, nil
}

var fileMembers = map[string]bool{"id": true, "tool": true, "action": true, "amount": true, "arguments": true,
	"argumentsSha256": true, "requestedAt": true, "expiresAt": true, "approved": true, "answeredWith": false}

// ParseFile reads a queue file strictly: UTF-8 JSON, one object with
// exactly the members of [File] (answeredWith optional), none named twice
// (or twice under case folding), each of its type, id an id and
// argumentsSha256 a fingerprint, the times in [TimeLayout].
func ParseFile(data []byte) (File, error) {
	var f File
	if len(data) > MaxFileSize {
		return f, errors.New("larger than 1 MiB")
	}
	if !utf8.Valid(data) {
		return f, errors.New("not UTF-8")
	}
	if _, err := wire.Inspect([]byte(`{"jsonrpc":"2.0","id":0,"result":` + strings.TrimSpace(string(data)) + `}`)); err != nil {
		var we *wire.Error
		if errors.As(err, &we) && we.Fault == wire.FaultDuplicate {
			return f, errors.New("a member is named twice (or twice under case folding)")
		}
		return f, errors.New("not one JSON object with each member once")
	}
	if path, dup := wire.FoldedDuplicate(data); dup {
		_ = path // the path names a member of the arguments: not shown
		return f, errors.New("a member is named twice")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil || members == nil {
		return f, errors.New("not a JSON object")
	}
	for name := range members {
		if _, ok := fileMembers[name]; !ok {
			return f, fmt.Errorf("member %q is not one of a request file", name)
		}
	}
	for name, required := range fileMembers {
		if _, ok := members[name]; !ok && required {
			return f, fmt.Errorf("member %q is missing", name)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return File{}, fmt.Errorf("a member is not of its type: %w", err)
	}
	if a := members["amount"]; string(a) != "null" {
		var am map[string]json.RawMessage
		if json.Unmarshal(a, &am) != nil || len(am) != 2 || am["unit"] == nil || am["value"] == nil || f.Amount.Value < 0 {
			return File{}, errors.New("amount must be null or {unit, value}")
		}
	}
	if ap := string(members["approved"]); ap != "null" && ap != "true" && ap != "false" {
		return File{}, errors.New("approved must be null, true or false")
	}
	if !canon.IsID(f.ID) || !canon.IsFingerprint(f.ArgumentsSHA256) {
		return File{}, errors.New("id or argumentsSha256 is not of its form")
	}
	for _, t := range []string{f.RequestedAt, f.ExpiresAt} {
		if _, err := time.Parse(TimeLayout, t); err != nil {
			return File{}, fmt.Errorf("time %q is not %s", t, TimeLayout)
		}
	}
	return f, nil
}

// WriteFileAtomic writes data to dir/name as a new file renamed into place,
// with the file and then the folder synced, so that a reader sees the old
// text or the new, never part of it (durable.WriteFile).
func WriteFileAtomic(dir, name string, data []byte) error {
	if err := durable.WriteFile(filepath.Join(dir, name), data); err != nil {
		return fmt.Errorf("approval: %w", err)
	}
	return nil
}

// Queue is the channel of the queue folder: one file per request, answered
// by a person or a script (or the approve command) setting "approved".
type Queue struct {
	dir  string
	poll time.Duration
	log  *slog.Logger
}

// DefaultPoll is how often the queue reads a waiting request's file.
const DefaultPoll = 200 * time.Millisecond

// NewQueue opens the queue folder dir, creating it (mode 0700) when
// missing. poll 0 means DefaultPoll; logger nil discards.
func NewQueue(dir string, poll time.Duration, logger *slog.Logger) (*Queue, error) {
	if poll <= 0 {
		poll = DefaultPoll
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("approval: the queue folder %s (settings approvals.queue): %w", dir, err)
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, fmt.Errorf("approval: the queue folder %s (settings approvals.queue) is not a folder", dir)
	}
	if risk := FolderRisk(dir); risk != "" {
		logger.Warn("approval: "+risk, slog.String("queue", dir), slog.String("fix", FolderRiskFix(dir)))
	}
	return &Queue{dir: dir, poll: poll, log: logger}, nil
}

// FolderRisk says what is wrong with the queue folder dir for a folder
// whose files approve calls: "" when only its owner, this process's user,
// can write it (or when it is not there yet: the queue makes it 0700).
// Whoever can write the folder can answer a request in it, so a folder
// others may write, or one another user owns, is named.
func FolderRisk(dir string) string {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return ""
	}
	owner := os.Geteuid()
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		owner = int(sys.Uid)
	}
	return folderRisk(st.Mode().Perm(), owner, os.Geteuid())
}

// folderRisk is FolderRisk of a folder of mode perm owned by user owner,
// for a process of user self.
func folderRisk(perm fs.FileMode, owner, self int) string {
	var risks []string
	if perm&0o022 != 0 {
		risks = append(risks, fmt.Sprintf("its group or others may write it (mode %04o)", perm))
	}
	if owner != self {
		risks = append(risks, fmt.Sprintf("it belongs to user %d, not to the executor's user %d", owner, self))
	}
	if len(risks) == 0 {
		return ""
	}
	return "the queue folder can be written by others than the executor: " + strings.Join(risks, ", and ") +
		"; whoever can write it can approve a held call"
}

// FolderRiskFix is what to do about a FolderRisk of dir.
func FolderRiskFix(dir string) string {
	return "chmod 0700 " + dir + " (and chown it to the executor's user), on a volume the agent's container does not mount"
}

// Dir is the queue folder.
func (q *Queue) Dir() string { return q.dir }

// Name is the channel's name.
func (q *Queue) Name() string { return ChannelQueue }

// FileName is the name of the request file of id.
func FileName(id string) string { return id + ".json" }

// Ask writes r's file (a restored request keeps a file that still holds it,
// answered or not) and watches it until r ends.
func (q *Queue) Ask(ctx context.Context, r *Request, answer func(Answer)) error {
	want := FileFor(r)
	path := filepath.Join(q.dir, FileName(r.ID))
	keep := false
	if r.Restored() {
		if data, _, err := readQueueFile(path); err == nil {
			if f, err := ParseFile(data); err == nil && sameRequest(want, f) {
				want, keep = f, true
				want.Approved, want.AnsweredWith = nil, ""
			}
		}
	}
	if !keep {
		data, err := want.Encode()
		if err != nil {
			return err
		}
		if err := WriteFileAtomic(q.dir, FileName(r.ID), data); err != nil {
			return err
		}
	}
	go q.watch(ctx, r, want, path, answer)
	return nil
}

// Forget removes the file of a request that is over.
func (q *Queue) Forget(r *Request) {
	path := filepath.Join(q.dir, FileName(r.ID))
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		q.log.Warn("approval: could not remove a request file", slog.String("file", path), slog.String("error", err.Error()))
	}
}

// sameRequest is Bound, except that a file written after a restart, which
// does not know the arguments, matches whatever arguments the file shows.
func sameRequest(want, f File) bool {
	if string(want.Arguments) == "null" {
		want.Arguments = f.Arguments
	}
	return want.Bound(f)
}

// watch reads the file until it holds an answer, r ends or r expires.
func (q *Queue) watch(ctx context.Context, r *Request, want File, path string, answer func(Answer)) {
	deadline := time.NewTimer(time.Until(r.ExpiresAt) + q.poll)
	defer deadline.Stop()
	tick := time.NewTicker(q.poll)
	defer tick.Stop()
	var lastBad string
	for {
		if a, bad, ok := q.read(r, want, path); ok {
			answer(a)
			break
		} else if bad != "" && bad != lastBad {
			lastBad = bad
			q.log.Warn("approval: a request file is no answer", slog.String("request", r.ID), slog.String("file", path), slog.String("reason", bad))
		}
		select {
		case <-ctx.Done():
		case <-deadline.C:
		case <-tick.C:
			continue
		}
		break
	}
	<-ctx.Done()
	if errors.Is(context.Cause(ctx), ErrClosed) {
		return // the request is not over: the next start asks again
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		q.log.Warn("approval: could not remove a request file", slog.String("file", path), slog.String("error", err.Error()))
	}
}

// read reads the file: an answer, or why it is none ("" when it simply
// waits).
func (q *Queue) read(r *Request, want File, path string) (Answer, string, bool) {
	data, st, err := readQueueFile(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Answer{}, "the file is gone", false
		}
		return Answer{}, "unreadable: " + err.Error(), false
	}
	f, err := ParseFile(data)
	if err != nil {
		return Answer{}, "not a request file: " + err.Error(), false
	}
	if !sameRequest(want, f) {
		return Answer{}, "a member other than approved was changed", false
	}
	if f.Approved == nil {
		return Answer{}, "", false
	}
	channel := ChannelQueue
	if f.AnsweredWith == AnsweredWithCommand {
		channel = ChannelCommand
	} else if f.AnsweredWith != "" {
		return Answer{}, "answeredWith names no known answerer", false
	}
	return Answer{Request: r.ID, Approved: *f.Approved, Channel: channel, Who: ownerOf(st), When: now()}, "", true
}

// ReadQueueFile reads a file the executor keeps in the queue folder (a kept
// approval) as every queue file is read: never through a symbolic link, a
// FIFO, a device or a second hard link, and at most MaxFileSize bytes. A
// missing file is an error that wraps fs.ErrNotExist.
func ReadQueueFile(path string) ([]byte, error) {
	data, _, err := readQueueFile(path)
	if err != nil {
		return nil, fmt.Errorf("approval: reading %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("approval: %s is longer than %d bytes", path, MaxFileSize)
	}
	return data, nil
}

// readQueueFile reads a file of the queue folder (see openAnswer for the
// files refused), at most MaxFileSize+1 bytes: ParseFile refuses more.
func readQueueFile(path string) ([]byte, fs.FileInfo, error) {
	fh, st, err := openAnswer(path)
	if err != nil {
		return nil, nil, err
	}
	defer func() { _ = fh.Close() }() // read only: a failed close loses nothing
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileSize+1))
	if err != nil {
		return nil, nil, err
	}
	return data, st, nil
}

// Waiting lists the request files of dir that wait for an answer (approved
// null, not past expiresAt at t), by expiry, soonest first. Files that do
// not parse are left out and named in skipped.
func Waiting(dir string, t time.Time) (files []File, skipped []string, err error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("approval: listing %s: %w", dir, err)
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, nil, fmt.Errorf("approval: the queue folder %s: %w", dir, err)
	}
	for _, name := range names {
		data, _, err := readQueueFile(name)
		if err != nil {
			skipped = append(skipped, filepath.Base(name))
			continue
		}
		f, err := ParseFile(data)
		if err != nil || FileName(f.ID) != filepath.Base(name) {
			skipped = append(skipped, filepath.Base(name))
			continue
		}
		exp, _ := f.Expires()
		if f.Approved != nil || !t.Before(exp) {
			continue
		}
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool {
		if files[i].ExpiresAt != files[j].ExpiresAt {
			return files[i].ExpiresAt < files[j].ExpiresAt
		}
		return files[i].ID < files[j].ID
	})
	return files, skipped, nil
}

// AnswerFile answers the request id of dir as the approve command does:
// the file read strictly, still waiting, rewritten atomically with approved
// set and answeredWith [AnsweredWithCommand].
func AnswerFile(dir, id string, approved bool, t time.Time) (File, error) {
	if !canon.IsID(id) {
		return File{}, fmt.Errorf("approval: %q is not a request id (22 characters of base64url)", id)
	}
	data, _, err := readQueueFile(filepath.Join(dir, FileName(id)))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return File{}, fmt.Errorf("approval: no request %s waits in %s (answered, ended or never made)", id, dir)
		}
		return File{}, fmt.Errorf("approval: reading request %s: %w", id, err)
	}
	f, err := ParseFile(data)
	if err != nil {
		return File{}, fmt.Errorf("approval: the file of request %s is not a request file: %w", id, err)
	}
	if f.ID != id {
		return File{}, fmt.Errorf("approval: the file of request %s is not a request file: it names request %s", id, f.ID)
	}
	if f.Approved != nil {
		return File{}, fmt.Errorf("approval: request %s is already answered", id)
	}
	if exp, _ := f.Expires(); !t.Before(exp) {
		return File{}, fmt.Errorf("approval: request %s expired at %s", id, f.ExpiresAt)
	}
	f.Approved, f.AnsweredWith = &approved, AnsweredWithCommand
	out, err := f.Encode()
	if err != nil {
		return File{}, err
	}
	return f, WriteFileAtomic(dir, FileName(id), out)
}

// Sentence is the request in one sentence for a person: the tool, the
// action, the amount and the arguments as shown.
func Sentence(tool, action string, amount *record.Amount, shown json.RawMessage) string {
	amt := "no amount"
	if amount != nil {
		amt = fmt.Sprintf("an amount of %d %s", amount.Value, amount.Unit)
	}
	args := "arguments not known"
	if len(shown) > 0 && string(shown) != "null" {
		var buf bytes.Buffer
		if json.Compact(&buf, shown) == nil {
			shown = buf.Bytes()
		}
		args = "arguments " + string(shown)
	}
	return fmt.Sprintf("Allow the tool %q (action %s) to run once, with %s and %s?", tool, action, amt, args)
}
