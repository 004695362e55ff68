package copylog

import "github.com/seed-6e06167c/mcp-executor/receipts/book"

// RepairTornLine sets aside the copy's torn last line, the one a stop in
// the middle of a write leaves ([ErrCutLine]), so the executor can start
// again. Only the executor appends to its copy, each write ends with a line
// feed, and no write is acknowledged before its fdatasync: a last line
// without its line feed was never acknowledged, whatever it held (a sent
// line: the call was not yet sent; a receipt line: the stub is in the
// book, and the start writes the receipt line again from it). The torn
// bytes are kept in COPY.torn-<time>, the copy is cut back to its last
// whole line, and its line numbers still run on without a gap. A copy
// another process holds locked, or a tail longer than any line, is left
// as it is. It returns nil when nothing was done.
func RepairTornLine(path string) (*book.TornLine, error) {
	return book.RepairTornFile(path, "copy", func(tail []byte) bool { return len(tail) <= maxLine })
}
