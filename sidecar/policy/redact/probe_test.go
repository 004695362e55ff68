package redact

import (
	"bufio"
	"fmt"
	"os"
	"testing"
)

func TestProbe(t *testing.T) {
	f, err := os.Open(os.Getenv("PROBE"))
	if err != nil {
		t.Skip()
	}
	r := newTest(t, Options{})
	sc := bufio.NewScanner(f)
	n, k := 0, 0
	for sc.Scan() {
		n++
		if fs := r.Find(sc.Text()); len(fs) > 0 {
			k++
			fmt.Println(fs[0].Kind, sc.Text())
		}
	}
	fmt.Println("flagged", k, "of", n)
}
