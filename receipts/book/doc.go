// Package book keeps a Provared book: the agent's append-only file of
// records, one canonical entry per line (format description, sections 7 to
// 11, 17, 20 and 22).
//
// It holds three things that share one way of reading a line:
//
//   - CheckBook, the checker: problems (faults in the record), breaches
//     (what a sound record shows about the agent) and a summary, with the
//     reference's codes and order of findings.
//   - Book, the file: opened and verified once, then appended to with one
//     write and one fdatasync per group of lines, never a partial line.
//   - Ledger, the check before acting: the state read from the book, kept up
//     to date line by line, so that a check costs the same whatever the size
//     of the book. It also counts calls still in flight (reservations), so
//     that calls running together cannot jointly pass a limit.
//
// Supported entries: slip; stub with its countersignature and approval on
// the same line; refusal; cancellation; acknowledgement; pass (§25: a
// helper agent's permission, its stubs in a chain of their own, compared
// with the slip and every pass above; passes.go); seal with its
// time-stamps (§21: the three signatures, SLH-DSA included, the tree of the
// entries before it, the chain of seals, the dates, the stamps' check with
// receipts/stamp, and what a counted stamp shows of the entries it covers;
// block time-stamps are read for their layout and reported as not checked).
// A line of any other kind the format knows (terms, vouching, withdrawal,
// or time-stamps beside a cancellation) is reported as the
// problem "unknown-entry" with a message naming the kind: it is never
// silently accepted, and a book holding one is never intact, so the check
// before acting refuses everything under it.
//
// Book.Seal appends a seal as the book's next line, holding other appends
// off while the caller builds it for exactly that point (seals.go,
// sealbook.go).
//
// Reading a book (OpenBook, CheckBook, VerifyFile, VerifyFileEntries,
// ReadEntries) uses every
// core: workers parse the lines and check the signatures of stub lines
// whose slip the reader has read; the reader takes the lines back in their
// order, so that the chains, totals and findings are the ones a reading in
// order gives (parallel.go, preverify.go). A few lines per core are held,
// whatever the size of the book.
//
// Sign once, trust once: a stub line this process has just signed
// (SignedStub, made of record.Signed values that only
// record.SignChecked makes) is appended by AppendSigned without checking
// its signatures again; a line from anywhere else (a file, another
// process) goes through Append or AppendStub and has every signature
// checked.
package book
