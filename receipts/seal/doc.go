// Package seal writes and reads the seal of a book (format description,
// section 21): the recorder's statement, signed with three keys (Ed25519,
// ML-DSA-87, SLH-DSA-SHA2-256s), of the top fingerprint and the number of
// the entries before it, chained to the seal before it, with one to four
// outside time-stamps beside it on its line.
//
// Writing is in two steps so that no caller waits for the slow signature:
// [Prepare] confirms and writes the content canonically, so the seal's
// fingerprint (what a time-stamp service is asked to stamp) is known at
// once; [Prepared.Sign] then signs it with a [Signer] (the SLH-DSA
// signature takes about 0.65 s of one core; run it off any call path).
// [Sealed.Line] writes the book line with the stamps a caller got.
//
// Reading: [ParseLine] reads a seal line's parts, [DecodeStamps] its
// time-stamps as the reference decodes them, [CheckSignatures] the three
// signatures. The rules that need the whole book (the tree, the chain of
// seals, the dates of the entries a stamp covers) are receipts/book's.
package seal
