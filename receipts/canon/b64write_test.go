package canon

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestB64Chunked: B64 and WriteB64, which encode through a buffer on the
// stack a chunk at a time, give the very text encoding/base64 gives in one
// piece (the old B64), at every length around the chunk's edges.
func TestB64Chunked(t *testing.T) {
	src := make([]byte, 4*b64Chunk+5)
	for i := range src {
		src[i] = byte(i*131 + i/7)
	}
	for n := 0; n <= len(src); n++ {
		if n > 40 && n%b64Chunk > 3 && n%b64Chunk < b64Chunk-3 && n%97 != 0 {
			continue // the edges of the chunks, and a sample of the rest
		}
		want := base64.RawURLEncoding.EncodeToString(src[:n])
		if got := B64(src[:n]); got != want {
			t.Fatalf("B64 of %d bytes: %q, want %q", n, got, want)
		}
		var sb strings.Builder
		sb.WriteString("x")
		WriteB64(&sb, src[:n])
		if sb.String() != "x"+want {
			t.Fatalf("WriteB64 of %d bytes differs", n)
		}
		if B64Len(n) != len(want) {
			t.Fatalf("B64Len(%d) = %d, want %d", n, B64Len(n), len(want))
		}
	}
}

// FuzzB64: B64 is encoding/base64's RawURLEncoding for any bytes.
func FuzzB64(f *testing.F) {
	f.Add([]byte(""))
	f.Add(make([]byte, b64Chunk+1))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := B64(b), base64.RawURLEncoding.EncodeToString(b); got != want {
			t.Fatalf("B64: %q, want %q", got, want)
		}
	})
}

// BenchmarkB64Signature: the text of an ML-DSA-87 signature (4,627
// bytes), by B64 and by encoding/base64's EncodeToString (the old B64).
func BenchmarkB64Signature(b *testing.B) {
	sig := make([]byte, 4627)
	b.Run("B64", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = B64(sig)
		}
	})
	b.Run("EncodeToString", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = base64.RawURLEncoding.EncodeToString(sig)
		}
	})
}
