// Package tree is the Merkle tree over a book's lines (format description,
// section 10): RFC 6962 section 2.1 with SHA-256, a leaf being the bytes of
// one line without its line feed.
//
// It gives the leaf and node hashes, the root of any number of leaves, the
// audit path of one leaf (RFC 6962 section 2.1.1) and its check (RFC 9162
// section 2.1.3.2), and a [Builder] that keeps only the roots of the
// perfect subtrees seen so far: O(log n) hashes for n leaves, so that a
// writer can seal a book of any size without reading it again. The
// builder's [State] can be written down and taken up again.
//
// Nothing here reads a book: callers hand in lines or leaf hashes.
package tree
