// Package copylog keeps the executor's own copy of every call: an
// append-only file of HMAC-tagged lines, held apart from the agent's book,
// that says what the executor sent, which receipt it wrote for it, what it
// refused and what it could not finish. At a start the copy tells the
// executor which calls still need a receipt ([Log.Unfinished]); at any time
// [Compare] holds it against the book to find a receipt that was left out,
// changed or never written.
//
// The copy proves nothing against whoever holds the copy key: such a person
// can write lines that check. It shows a receipt left out of the book only
// where the agent's side can neither write the copy nor read its key.
//
// # The file
//
// The copy is UTF-8 text, one line per record, each line ending in LF
// (0x0A), created with mode 0600. A line is one JSON object written in the
// canonical form of package receipts/canon (RFC 8785 narrowed: members in
// UTF-16 order, no whitespace, only objects, lists, strings and whole
// numbers 0 … 2^53−1). Every line has these members:
//
//	seq     whole number: 1 on the first line, then 2, 3, … with no gap
//	name    the executor's name (settings "name"); a copy belongs to one executor
//	kind    one of the kinds below
//	when    the time of the line, Provared time text YYYY-MM-DDTHH:MM:SSZ
//	whenMs  the same time in whole milliseconds since 1970-01-01T00:00:00Z
//	tag     base64url (no padding) of HMAC-SHA256 under the 32-byte copy key
//
// and the members of its kind (all strings unless said):
//
//	start         (none): the executor started
//	sent          call, tool, action, amount {unit, value (whole number)} (optional),
//	              slip (fingerprint), requestId, details [{name, sha256}, …]
//	              (the documents known before sending: provared.arguments,
//	              provared.tool-name, executor.call, provared.request-id,
//	              provared.trace-id, executor.rules); when is the stub's time
//	              (to the second, as the stub states it; a late stub is dated
//	              by it), sentMs (whole number, optional) the time of sending
//	              in milliseconds since 1970, which report measures the
//	              server's time from (copies written before it have none)
//	receipt       call, stub (the stub's fingerprint), outcome {name, sha256}
//	              where name is provared.tool-result or provared.error,
//	              serverMs (whole number, optional) the call's time with the
//	              server in milliseconds, as the executor measured it
//	not-written   call, outcome {name, sha256}, reason (why the book could not
//	              be written); the next start writes the receipt from it
//	late-receipt  call, stub: a receipt written at a restart
//	denial        call, tool, action, reason, codes [text, …], slip, refusal (the
//	              refusal's fingerprint, "" where none was written because of
//	              the hourly cap), rules (the rules file's fingerprint or ""),
//	              rule (the fingerprint of the refusing rule's name or "")
//	withdrawn     call: cancelled while waiting its turn; nothing was sent
//
// and the kinds of a call held for a person's approval (approval-request,
// approval-answer, approval-late, approval-use, approval-end), whose members
// are listed beside [KindApprovalRequest], and redaction-salt (salt: the
// redaction salt, base64url of 32 bytes; see [KindRedactionSalt]).
//
// No member holds a tool argument's value: arguments appear only as the
// fingerprint in details.
//
// # The tag
//
// The tag input is the line's object without its tag member, written
// canonically (canon.Marshal); the line on disk is the same object with the
// tag member added, written canonically, then LF. Because canonical JSON has
// exactly one spelling for each value, a reader parses the line with
// canon.Parse (which refuses any other spelling), removes tag, writes the rest
// again and compares HMACs in constant time. In Go:
//
//	body := map[string]any{"seq": 1, "name": "…", "kind": "withdrawn", "call": "…", "when": "…", "whenMs": …}
//	mac := hmac.New(sha256.New, key); mac.Write(canon.MustMarshal(body))
//	body["tag"] = canon.B64(mac.Sum(nil))
//	line := append(canon.MustMarshal(body), '\n')
//
// # What reading checks
//
// [Open] and [ReadFile] read every line and refuse the copy, naming the
// line, when: the key is missing while the copy holds lines
// ([ErrKeyMissing]); no line checks under the key ([ErrWrongKey]); a line is
// not a canonical object or its tag does not check ([ErrTampered]); a line
// names another executor ([ErrOtherExecutor]); the numbers show a line taken
// out, put twice or moved ([ErrTampered]); the last line has no LF, cut by a
// stop ([ErrCutLine]). A copy cut at a line end cannot be seen: nothing in a
// line says it is the last. A cut last line was never acknowledged (no write
// returns before its fdatasync), so the executor's start sets it aside
// ([RepairTornLine]) and goes on; [ReadFile] and compare still name it.
//
// # Durability
//
// [Log.Append] writes all lines of a call, and of every call waiting at the
// same moment, with one write and one fdatasync (group commit) and returns
// only once the caller's lines are on the disk. A failed or short write is
// cut back off the file, and the log is then broken: every later Append
// fails with [ErrUnwritable], so the executor takes no more calls until it
// is started again. [Open] holds an exclusive flock on the file until
// [Log.Close], so a second executor on the same copy fails at once
// ([ErrLocked]).
//
// [Log.AppendUnsynced] writes the same way but does not wait for a sync of
// its own: its lines reach the disk with the next Append's fdatasync
// (which syncs the whole file) or at Close. The executor uses it only for
// the receipt line, below.
//
// # The receipt line comes after the answer
//
// The executor writes a call's lines in this order: sent (durable before
// the call goes to the server), the stub in the book (durable), the answer
// to the client, and then receipt. The receipt line is off the answer's
// path, and recovery stays exact, because:
//
//   - receipt carries nothing the book does not hold already: the stub's
//     fingerprint, and the outcome document, which is one of the stub's
//     own details. The copy without it shows the call as unfinished, never
//     as something else.
//   - A stop before receipt is durable leaves a sent line without receipt
//     whose stub is durable in the book. That state already existed with
//     receipt before the answer (a stop between the stub's fsync and the
//     receipt line's); the answer going out first only widens its window.
//     The next start finds the stub in the book by its executor.call
//     detail, writes a late-receipt line naming it, and writes no second
//     stub and sends nothing again: every call the server got still has
//     exactly one receipt, and [Compare] then matches copy and book.
//   - The answer still waits for the stub: a call's answer reaches the
//     client only once its stub is durable. A stub line torn by a stop was
//     never answered (its append had not returned), so setting it aside at
//     the next start loses nothing that was acknowledged.
//   - receipt is not synced on its own (AppendUnsynced). A stop of the
//     process loses nothing written, and a crash of the machine before the
//     next sync loses at most lines that were never acknowledged as
//     durable: the receipt lines since the last sync, which leave the
//     state just described (the next start writes late-receipt lines from
//     the book), and no sent line, each of which is synced before its call
//     is sent. The call path so pays two fdatasyncs, the sent line's and
//     the stub's, not three.
//   - receipt is not overlapped with the book's fsync: written before the
//     stub is durable, a receipt line could survive a stop that the stub
//     does not, and the copy would then show as finished a call whose
//     receipt is missing from the book, which no start would write.
//
// A client that stops reading holds its own calls' receipt lines (never
// their stubs, nor any other call) until the write to it ends: at the
// socket's write deadline, or when a drain cuts it.
//
// While the executor runs, a [Compare] can meet a stub whose receipt line
// is not yet written, as it could before: it reports the call as sent
// without receipt, naming the stub the book holds for it, as it does for
// any call in flight.
//
// # The checkpoint
//
// A start next to a long copy need not parse every line again. When the
// executor has started (and finished the calls its last run left) and
// when it stops, [Log.SaveCheckpoint] writes COPY.copy-checkpoint beside
// the copy: one canonical line with the executor's name, the number of
// lines and bytes the copy holds, and the SHA-256 of those bytes, tagged
// with HMAC-SHA256 under a key derived from the copy key. It is saved only
// when every call the copy shows as sent has its receipt or late-receipt
// line (after the last unsynced lines are synced), and never by a broken
// log: a checkpoint is a point where the copy leaves nothing to recover.
//
// [Open] then hashes the bytes the checkpoint covers and parses, of those
// lines, only the ones a start keeps (the approval kinds and the kinds its
// [Visit] asks for, told from the bytes by the line's kind member); the
// lines after the checkpoint are read whole, as without one. This stays
// exact because the covered bytes are the very bytes an earlier Open
// verified or this executor wrote itself, which the sum confirms to the
// byte, and because nothing in them is left unfinished. What such an Open
// does not know is the ids of the calls finished before the checkpoint;
// those ids are random and never sent twice, so a sent line after the
// checkpoint cannot be one of them.
//
// A checkpoint whose tag does not check, that names another executor, that
// covers more bytes than the copy holds, or whose bytes changed is ignored
// ([Log.CheckpointUse] says why) and the whole copy is read, which refuses
// any changed line as before. [ReadFile], [Compare] and the report never
// use the checkpoint: they read every line.
package copylog
