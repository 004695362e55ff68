package book

import (
	"crypto/sha256"
	"hash"
)

// tree is the RFC 6962 Merkle tree over the book's lines (without their
// line feeds), kept as its perfect subtrees so that adding a line costs
// O(1) amortised and the root O(log n).
type tree struct {
	hashes [][32]byte
	sizes  []int
}

func (t *tree) add(line []byte) { t.addLeaf(leafHash(line)) }

// leafHash is a line's leaf hash: SHA-256 of 0x00 and the line.
func leafHash(line []byte) [32]byte {
	h := newLeafHash()
	h.Write(line)
	var leaf [32]byte
	h.Sum(leaf[:0])
	return leaf
}

// newLeafHash starts a leaf hash; the line's bytes are written after it
// (lineScanner writes a long line's as it reads them).
func newLeafHash() hash.Hash {
	h := sha256.New()
	h.Write([]byte{0})
	return h
}

// addLeaf adds a line by its leaf hash.
func (t *tree) addLeaf(leaf [32]byte) {
	t.hashes = append(t.hashes, leaf)
	t.sizes = append(t.sizes, 1)
	for n := len(t.sizes); n >= 2 && t.sizes[n-1] == t.sizes[n-2]; n = len(t.sizes) {
		t.hashes[n-2] = node(t.hashes[n-2], t.hashes[n-1])
		t.sizes[n-2] *= 2
		t.hashes = t.hashes[:n-1]
		t.sizes = t.sizes[:n-1]
	}
}

func node(l, r [32]byte) [32]byte {
	h := sha256.New()
	h.Write([]byte{1})
	h.Write(l[:])
	h.Write(r[:])
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// root is the top fingerprint's bytes: SHA-256 of nothing for no lines.
func (t *tree) root() [32]byte {
	if len(t.hashes) == 0 {
		return sha256.Sum256(nil)
	}
	acc := t.hashes[len(t.hashes)-1]
	for i := len(t.hashes) - 2; i >= 0; i-- {
		acc = node(t.hashes[i], acc)
	}
	return acc
}
