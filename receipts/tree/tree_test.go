package tree

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

const vectorDir = "../../testdata/provared-vectors"

type vectorCase struct {
	Name     string          `json:"name"`
	Leaf     string          `json:"leaf"`
	Leaves   []string        `json:"leaves"`
	Index    int             `json:"index"`
	Size     int             `json:"size"`
	Path     []string        `json:"path"`
	Root     string          `json:"root"`
	Expected json.RawMessage `json:"expected"`
}

func loadCases(t *testing.T, name, function string) []vectorCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(vectorDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Function string       `json:"function"`
		Cases    []vectorCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if f.Function != function || len(f.Cases) == 0 {
		t.Fatalf("%s: function %q with %d cases, want %s", name, f.Function, len(f.Cases), function)
	}
	return f.Cases
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hashOf(t *testing.T, s string) Hash {
	t.Helper()
	b := unhex(t, s)
	if len(b) != 32 {
		t.Fatalf("%s is not 32 bytes", s)
	}
	return Hash(b)
}

func okString(t *testing.T, raw json.RawMessage) string {
	var e struct{ Ok string }
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	return e.Ok
}

func TestLeavesVectors(t *testing.T) {
	cases := loadCases(t, "tree-leaves.json", "leafHash")
	for _, c := range cases {
		got := LeafHash(unhex(t, c.Leaf))
		if want := okString(t, c.Expected); hex.EncodeToString(got[:]) != want {
			t.Errorf("%s: %x, want %s", c.Name, got, want)
		}
	}
	t.Logf("tree-leaves.json: %d cases", len(cases))
}

func TestRootsVectors(t *testing.T) {
	cases := loadCases(t, "tree-roots.json", "treeRoot")
	for _, c := range cases {
		var leaves [][]byte
		var hashes []Hash
		for _, l := range c.Leaves {
			leaves = append(leaves, unhex(t, l))
			hashes = append(hashes, LeafHash(unhex(t, l)))
		}
		want := okString(t, c.Expected)
		for how, got := range map[string]Hash{"Root": Root(leaves), "RootOfHashes": RootOfHashes(hashes), "recursion": subRoot(hashes)} {
			if hex.EncodeToString(got[:]) != want {
				t.Errorf("%s: %s %x, want %s", c.Name, how, got, want)
			}
		}
	}
	t.Logf("tree-roots.json: %d cases", len(cases))
}

func TestPathsVectors(t *testing.T) {
	cases := loadCases(t, "tree-paths.json", "inclusionPath")
	for _, c := range cases {
		var hashes []Hash
		for _, l := range c.Leaves {
			hashes = append(hashes, LeafHash(unhex(t, l)))
		}
		var e struct{ Ok []string }
		if err := json.Unmarshal(c.Expected, &e); err != nil {
			t.Fatal(err)
		}
		got, err := Path(hashes, c.Index)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if len(got) != len(e.Ok) {
			t.Fatalf("%s: %d hashes, want %d", c.Name, len(got), len(e.Ok))
		}
		for i := range got {
			if hex.EncodeToString(got[i][:]) != e.Ok[i] {
				t.Errorf("%s: hash %d %x, want %s", c.Name, i, got[i], e.Ok[i])
			}
		}
		// The path found leads back to the root.
		if err := VerifyInclusion(c.Index, len(hashes), hashes[c.Index], got, RootOfHashes(hashes)); err != nil {
			t.Errorf("%s: its own path does not check: %v", c.Name, err)
		}
	}
	t.Logf("tree-paths.json: %d cases", len(cases))
}

func TestInclusionVectors(t *testing.T) {
	cases := loadCases(t, "tree-inclusion.json", "verifyInclusion")
	for _, c := range cases {
		var path []Hash
		for _, p := range c.Path {
			path = append(path, hashOf(t, p))
		}
		leaf := LeafHash(unhex(t, c.Leaf))
		err := VerifyInclusion(c.Index, c.Size, leaf, path, hashOf(t, c.Root))
		var e struct{ Ok *bool }
		if err := json.Unmarshal(c.Expected, &e); err != nil {
			t.Fatal(err)
		}
		if e.Ok == nil || !*e.Ok {
			if err == nil {
				t.Errorf("%s: accepted, want refused", c.Name)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
	t.Logf("tree-inclusion.json: %d cases", len(cases))
}

// A path refused for every way it can be wrong: each hash changed, one
// taken off, one added, another index, another size, another root.
func TestInclusionRefused(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for size := 1; size <= 40; size++ {
		hashes := make([]Hash, size)
		for i := range hashes {
			hashes[i] = LeafHash([]byte(fmt.Sprint(r.Uint64())))
		}
		root := RootOfHashes(hashes)
		for idx := range size {
			path, err := Path(hashes, idx)
			if err != nil {
				t.Fatal(err)
			}
			if err := VerifyInclusion(idx, size, hashes[idx], path, root); err != nil {
				t.Fatalf("%d of %d: %v", idx, size, err)
			}
			for i := range path {
				bad := append([]Hash(nil), path...)
				bad[i][0] ^= 1
				if VerifyInclusion(idx, size, hashes[idx], bad, root) == nil {
					t.Fatalf("%d of %d: hash %d changed, accepted", idx, size, i)
				}
			}
			if len(path) > 0 && VerifyInclusion(idx, size, hashes[idx], path[:len(path)-1], root) == nil {
				t.Fatalf("%d of %d: a hash taken off, accepted", idx, size)
			}
			if VerifyInclusion(idx, size, hashes[idx], append(path, root), root) == nil {
				t.Fatalf("%d of %d: a hash added, accepted", idx, size)
			}
			if idx+1 < size && VerifyInclusion(idx+1, size, hashes[idx], path, root) == nil && hashes[idx] != hashes[idx+1] {
				// Another index may happen to need the same path shape,
				// but never with the same leaf and root.
				t.Fatalf("%d of %d: accepted at index %d", idx, size, idx+1)
			}
			if err := VerifyInclusion(idx, size, hashes[idx], path, LeafHash(nil)); !errors.Is(err, ErrNotIncluded) {
				t.Fatalf("%d of %d: another root: %v", idx, size, err)
			}
		}
		if VerifyInclusion(size, size, hashes[0], nil, root) == nil || VerifyInclusion(-1, size, hashes[0], nil, root) == nil {
			t.Fatalf("size %d: an index outside the tree accepted", size)
		}
	}
}

func TestBuilderAgreesWithRecursion(t *testing.T) {
	var b Builder
	var hashes []Hash
	if b.Root() != Empty || Empty != Hash(sha256.Sum256(nil)) {
		t.Fatal("the empty tree")
	}
	for n := 1; n <= 300; n++ {
		line := []byte(fmt.Sprintf("line %d", n))
		b.Add(line)
		hashes = append(hashes, LeafHash(line))
		if got, want := b.Root(), subRoot(hashes); got != want {
			t.Fatalf("%d leaves: builder %x, recursion %x", n, got, want)
		}
		if b.Size() != n {
			t.Fatalf("size %d, want %d", b.Size(), n)
		}
		// The state written and read back carries on the same tree.
		s, err := ParseState(b.State().String())
		if err != nil {
			t.Fatalf("%d leaves: %v", n, err)
		}
		again, err := FromState(s)
		if err != nil {
			t.Fatal(err)
		}
		again.Add([]byte("next"))
		c := b.Clone()
		c.Add([]byte("next"))
		if again.Root() != c.Root() {
			t.Fatalf("%d leaves: the state taken up again gives another tree", n)
		}
		if len(b.State().Peaks) > 9 {
			t.Fatalf("%d leaves: %d subtree roots held", n, len(b.State().Peaks))
		}
	}
}

func TestStateRefused(t *testing.T) {
	for _, text := range []string{"", "x", "-1", "01", "1", "2 " + string(bytes.Repeat([]byte("A"), 43)) + " " + string(bytes.Repeat([]byte("A"), 43)), "1 AAAA", "0 " + string(bytes.Repeat([]byte("A"), 43))} {
		if _, err := ParseState(text); err == nil {
			t.Errorf("%q: accepted", text)
		}
	}
}

func FuzzParseState(f *testing.F) {
	var b Builder
	for i := range 7 {
		f.Add(b.State().String())
		b.Add([]byte{byte(i)})
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ParseState(text)
		if err != nil {
			return
		}
		if s.String() != text {
			t.Fatalf("%q read back as %q", text, s.String())
		}
	})
}

// BenchmarkRoot90000 is the root of a 90,000-line book kept by a Builder
// (each line added once, as the executor does), against hashing the same
// lines with SHA-256 alone: the floor any tree over them pays.
func BenchmarkRoot90000(b *testing.B) {
	lines := make([][]byte, 90000)
	for i := range lines {
		lines[i] = bytes.Repeat([]byte{byte(i)}, 1200) // about a stub line
	}
	b.Run("sha256-floor", func(b *testing.B) {
		for b.Loop() {
			for _, l := range lines {
				sha256.Sum256(l)
			}
		}
	})
	b.Run("builder", func(b *testing.B) {
		for b.Loop() {
			var t Builder
			for _, l := range lines {
				t.Add(l)
			}
			_ = t.Root()
		}
	})
	b.Run("root-from-state", func(b *testing.B) {
		var t Builder
		for _, l := range lines {
			t.Add(l)
		}
		s := t.State()
		for b.Loop() {
			t, _ := FromState(s)
			_ = t.Root()
		}
	})
}
