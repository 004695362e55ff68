package wire

import (
	"bytes"
	"fmt"
	"testing"
)

func benchLine(size int) []byte {
	var args bytes.Buffer
	for i := 0; args.Len() < size-120; i++ {
		if i > 0 {
			args.WriteByte(',')
		}
		fmt.Fprintf(&args, `"k%d":{"n":%d,"s":"text \u00e9 %d","f":1.5e3,"l":[true,false,null]}`, i, i*7919, i)
	}
	return []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"t","arguments":{` + args.String() + `}}}`)
}

func benchmarkInspect(b *testing.B, size int) {
	line := benchLine(size)
	if _, err := Inspect(line); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Inspect(line); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInspect1KiB(b *testing.B) { benchmarkInspect(b, 1<<10) }
func BenchmarkInspect1MiB(b *testing.B) { benchmarkInspect(b, 1<<20) }
