package copylog

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
)

// holdEnv makes the test binary, started as a child, open the copy named in
// it, say "locked" on stdout and hold the copy until its stdin closes.
const holdEnv = "COPYLOG_TEST_HOLD_COPY"

func TestMain(m *testing.M) {
	if path := os.Getenv(holdEnv); path != "" {
		os.Exit(holdCopy(path))
	}
	os.Exit(m.Run())
}

func holdCopy(path string) int {
	l, err := Open(path, testKey, testName)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := l.Append(Line{Kind: KindStart}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("locked")
	if _, err := io.Copy(io.Discard, os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := l.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

func TestSecondOpenInSameProcessIsLocked(t *testing.T) {
	path := tempCopy(t)
	first := mustOpen(t, path)
	_, err := Open(path, testKey, testName)
	want := "opening copy " + path + ": another executor holds it (flock): copy in use by another executor"
	if err == nil || err.Error() != want || !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open = %v, want %q", err, want)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := Open(path, testKey, testName)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	second.Close()
}

// TestOpenLockedByAnotherProcess holds the copy in a real second process
// (this test binary, started again) and opens it here.
func TestOpenLockedByAnotherProcess(t *testing.T) {
	path := tempCopy(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := false
	defer func() {
		if !waited {
			stdin.Close()
			cmd.Wait()
		}
	}()
	said, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || said != "locked\n" {
		t.Fatalf("child said %q, %v", said, err)
	}

	_, err = Open(path, testKey, testName)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("Open while another process holds the copy = %v, want ErrLocked", err)
	}
	// ReadFile does not lock: compare can read a copy an executor holds.
	lines, err := ReadFile(path, testKey, testName)
	if err != nil || len(lines) != 1 || lines[0].Kind != KindStart {
		t.Fatalf("ReadFile beside the holder = %v, %v", lines, err)
	}

	stdin.Close()
	waited = true
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	l := mustOpen(t, path)
	if n := len(linesOf(t, l)); n != 1 {
		t.Errorf("after the child ended the copy has %d lines, want 1", n)
	}
}
