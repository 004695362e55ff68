package book

import (
	"hash"

	mtree "github.com/seed-6e06167c/mcp-executor/receipts/tree"
)

// tree is the RFC 6962 Merkle tree over the book's lines (without their
// line feeds): receipts/tree's Builder, which keeps the roots of its
// perfect subtrees so that adding a line costs O(1) amortised and the root
// O(log n).
type tree struct{ b mtree.Builder }

func (t *tree) add(line []byte) { t.b.Add(line) }

// leafHash is a line's leaf hash: SHA-256 of 0x00 and the line.
func leafHash(line []byte) [32]byte { return mtree.LeafHash(line) }

// newLeafHash starts a leaf hash; the line's bytes are written after it
// (lineScanner writes a long line's as it reads them).
func newLeafHash() hash.Hash { return mtree.NewLeafHash() }

// addLeaf adds a line by its leaf hash.
func (t *tree) addLeaf(leaf [32]byte) { t.b.AddLeaf(leaf) }

// root is the top fingerprint's bytes: SHA-256 of nothing for no lines.
func (t *tree) root() [32]byte { return t.b.Root() }

// state is the tree's state, for a writer that carries it on (a seal).
func (t *tree) state() mtree.State { return t.b.State() }
