package record

import (
	"context"
	"testing"
)

func BenchmarkSignStub(b *testing.B) {
	ctx := context.Background()
	c := stubContent()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Sign(ctx, Stub, c, testSigner); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyHybridStub(b *testing.B) {
	r, err := Sign(context.Background(), Stub, stubContent(), testSigner)
	if err != nil {
		b.Fatal(err)
	}
	ks := testSigner.Keys()
	b.ReportAllocs()
	for b.Loop() {
		if err := VerifyHybrid(r, ks); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseStub(b *testing.B) {
	r, err := Sign(context.Background(), Stub, stubContent(), testSigner)
	if err != nil {
		b.Fatal(err)
	}
	v := r.Value()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(v, Stub); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSignCheckedStub: a stub signed once as the book takes it
// (SignChecked), with its allocations: the four bytes of each signature's
// text and the envelope are what the call path pays beside the signatures.
func BenchmarkSignCheckedStub(b *testing.B) {
	ctx := context.Background()
	c := stubContent()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SignChecked(ctx, Stub, c, testSigner); err != nil {
			b.Fatal(err)
		}
	}
}
