package peakrss

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSelf(t *testing.T) {
	n, err := Self()
	if err != nil || n <= 0 {
		t.Fatalf("Self: %d, %v", n, err)
	}
	if m, err := OfPID(os.Getpid()); err != nil || m < n {
		t.Fatalf("OfPID: %d, %v (Self gave %d)", m, err, n)
	}
}

func TestOfStatus(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text string
		want       int64
		fails      bool
	}{
		{"a status", "Name:\tx\nVmPeak:\t  9 kB\nVmHWM:\t    1234 kB\nVmRSS:\t 1000 kB\n", 1234, false},
		{"no VmHWM", "Name:\tx\n", 0, true},
		{"not a number", "VmHWM:\tlots kB\n", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if err := os.WriteFile(p, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := OfStatus(p)
			if (err != nil) != tc.fails || got != tc.want {
				t.Fatalf("OfStatus: %d, %v; want %d, fails %v", got, err, tc.want, tc.fails)
			}
		})
	}
	if _, err := OfStatus(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("a missing file gave no error")
	}
}

func TestFromChild(t *testing.T) {
	out := []byte("=== RUN x\n" + ChildLine(4321) + "\nPASS\n")
	if kb, err := FromChild(out); err != nil || kb != 4321 {
		t.Fatalf("FromChild: %d, %v", kb, err)
	}
	for _, bad := range []string{"PASS\n", "BENCH hwm_kb=many\n"} {
		if _, err := FromChild([]byte(bad)); err == nil {
			t.Errorf("%q gave no error", bad)
		}
	}
}
