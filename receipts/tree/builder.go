package tree

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// Builder adds leaves one at a time and gives the root at any moment. It
// keeps the roots of the perfect subtrees the leaves so far make up (one
// for each bit set in the number of leaves), so adding a leaf costs O(1)
// hashes amortised and the root O(log n), in O(log n) memory. The zero
// Builder is a tree of no leaves.
type Builder struct {
	size  uint64
	peaks []Hash // from the largest subtree (leftmost) to the smallest
}

// Add adds one leaf by its bytes.
func (b *Builder) Add(data []byte) { b.AddLeaf(LeafHash(data)) }

// AddLeaf adds one leaf by its leaf hash.
func (b *Builder) AddLeaf(leaf Hash) {
	b.peaks = append(b.peaks, leaf)
	// Each trailing one bit of the old size is a subtree of the same size
	// as the one just made: join them.
	for n := b.size; n&1 == 1; n >>= 1 {
		last := len(b.peaks) - 1
		b.peaks[last-1] = NodeHash(b.peaks[last-1], b.peaks[last])
		b.peaks = b.peaks[:last]
	}
	b.size++
}

// Size is the number of leaves added.
func (b *Builder) Size() int { return int(b.size) }

// Root is the root of the tree of the leaves so far (Empty for none).
func (b *Builder) Root() Hash {
	if len(b.peaks) == 0 {
		return Empty
	}
	acc := b.peaks[len(b.peaks)-1]
	for i := len(b.peaks) - 2; i >= 0; i-- {
		acc = NodeHash(b.peaks[i], acc)
	}
	return acc
}

// Clone returns an independent copy.
func (b *Builder) Clone() *Builder {
	return &Builder{size: b.size, peaks: append([]Hash(nil), b.peaks...)}
}

// State is what a Builder holds, to be written down and taken up again:
// the number of leaves and the roots of its perfect subtrees, largest
// first.
type State struct {
	Size  int
	Peaks []Hash
}

// State returns the builder's state (a copy).
func (b *Builder) State() State {
	return State{Size: int(b.size), Peaks: append([]Hash(nil), b.peaks...)}
}

// FromState makes a Builder that carries on from s. It fails when the
// number of subtree roots is not the number of bits set in the size.
func FromState(s State) (*Builder, error) {
	if s.Size < 0 {
		return nil, errors.New("tree state: a negative size")
	}
	if want := bits.OnesCount64(uint64(s.Size)); len(s.Peaks) != want {
		return nil, fmt.Errorf("tree state: %d subtree roots for %d leaves, want %d", len(s.Peaks), s.Size, want)
	}
	return &Builder{size: uint64(s.Size), peaks: append([]Hash(nil), s.Peaks...)}, nil
}

// String writes the state as text: the size, then each subtree root in
// base64url, separated by spaces ("0" for no leaves).
func (s State) String() string {
	var sb strings.Builder
	sb.WriteString(strconv.Itoa(s.Size))
	for _, p := range s.Peaks {
		sb.WriteByte(' ')
		sb.WriteString(base64.RawURLEncoding.EncodeToString(p[:]))
	}
	return sb.String()
}

// ParseState reads what State.String wrote.
func ParseState(text string) (State, error) {
	fields := strings.Split(text, " ")
	n, err := strconv.Atoi(fields[0])
	if err != nil || n < 0 || strconv.Itoa(n) != fields[0] {
		return State{}, errors.New("tree state: the size is not a whole number")
	}
	s := State{Size: n}
	for _, f := range fields[1:] {
		b, err := base64.RawURLEncoding.Strict().DecodeString(f)
		if err != nil || len(b) != 32 {
			return State{}, errors.New("tree state: a subtree root is not 32 bytes of base64url")
		}
		s.Peaks = append(s.Peaks, Hash(b))
	}
	if _, err := FromState(s); err != nil {
		return State{}, err
	}
	return s, nil
}
