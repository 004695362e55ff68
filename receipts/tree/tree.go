package tree

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"math/bits"
)

// Hash is a leaf or node hash of the tree, and the root: 32 bytes of SHA-256.
type Hash [32]byte

// Empty is the root of a tree of no leaves: SHA-256 of nothing.
var Empty = Hash(sha256.Sum256(nil))

// LeafHash is the hash of one leaf: SHA-256 of 0x00 and the leaf's bytes.
func LeafHash(data []byte) Hash {
	h := NewLeafHash()
	h.Write(data)
	var out Hash
	h.Sum(out[:0])
	return out
}

// NewLeafHash starts a leaf hash; the leaf's bytes are written after it,
// for a caller that reads a long line in parts. Its Sum is the LeafHash.
func NewLeafHash() hash.Hash {
	h := sha256.New()
	h.Write([]byte{0})
	return h
}

// NodeHash is the hash of an inner node: SHA-256 of 0x01, the left hash
// and the right hash.
func NodeHash(l, r Hash) Hash {
	var buf [65]byte
	buf[0] = 1
	copy(buf[1:], l[:])
	copy(buf[33:], r[:])
	return sha256.Sum256(buf[:])
}

// Root is the root of the tree of the given leaves (RFC 6962 MTH).
func Root(leaves [][]byte) Hash {
	var b Builder
	for _, l := range leaves {
		b.Add(l)
	}
	return b.Root()
}

// RootOfHashes is the root of the tree whose leaves have these hashes.
func RootOfHashes(leaves []Hash) Hash {
	var b Builder
	for _, l := range leaves {
		b.AddLeaf(l)
	}
	return b.Root()
}

// split is the largest power of two smaller than n (n ≥ 2): RFC 6962's k.
func split(n int) int { return 1 << (bits.Len(uint(n-1)) - 1) }

// subRoot is the root of leaves by recursion, for paths.
func subRoot(leaves []Hash) Hash {
	switch len(leaves) {
	case 0:
		return Empty
	case 1:
		return leaves[0]
	}
	k := split(len(leaves))
	return NodeHash(subRoot(leaves[:k]), subRoot(leaves[k:]))
}

// Path is the audit path of the leaf at index among leaves (RFC 6962
// section 2.1.1, PATH(m, D[n])): the hashes needed, from the leaf up, to
// work out the root again.
func Path(leaves []Hash, index int) ([]Hash, error) {
	if index < 0 || index >= len(leaves) {
		return nil, fmt.Errorf("tree path: leaf %d of %d does not exist", index, len(leaves))
	}
	var out []Hash
	var walk func(d []Hash, m int)
	walk = func(d []Hash, m int) {
		if len(d) <= 1 {
			return
		}
		k := split(len(d))
		if m < k {
			walk(d[:k], m)
			out = append(out, subRoot(d[k:]))
		} else {
			walk(d[k:], m-k)
			out = append(out, subRoot(d[:k]))
		}
	}
	walk(leaves, index)
	return out, nil
}

// ErrNotIncluded is the answer of VerifyInclusion for a path that does not
// lead from the leaf to the root.
var ErrNotIncluded = errors.New("the path does not lead from the leaf to the root")

// VerifyInclusion checks an audit path by the steps of RFC 9162 section
// 2.1.3.2: that leaf, at index in a tree of size leaves, with path, gives
// root. It fails with ErrNotIncluded (wrapped) when it does not, and for an
// index outside the tree or a path of the wrong length.
func VerifyInclusion(index, size int, leaf Hash, path []Hash, root Hash) error {
	got, err := RootFromPath(index, size, leaf, path)
	if err != nil {
		return err
	}
	if got != root {
		return ErrNotIncluded
	}
	return nil
}

// RootFromPath works out the root that an audit path leads to (RFC 9162
// section 2.1.3.2, steps 1 to 5), or fails when the index is not in the
// tree or the path is not of the length the tree needs.
func RootFromPath(index, size int, leaf Hash, path []Hash) (Hash, error) {
	if index < 0 || size < 1 || index >= size {
		return Hash{}, fmt.Errorf("%w: leaf %d is not in a tree of %d", ErrNotIncluded, index, size)
	}
	fn, sn := uint64(index), uint64(size-1)
	r := leaf
	for _, p := range path {
		if sn == 0 {
			return Hash{}, fmt.Errorf("%w: the path is longer than the tree needs", ErrNotIncluded)
		}
		if fn&1 == 1 || fn == sn {
			r = NodeHash(p, r)
			if fn&1 == 0 {
				for fn&1 == 0 && fn != 0 {
					fn >>= 1
					sn >>= 1
				}
			}
		} else {
			r = NodeHash(r, p)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return Hash{}, fmt.Errorf("%w: the path is shorter than the tree needs", ErrNotIncluded)
	}
	return r, nil
}
