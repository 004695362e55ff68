package keys

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// secretMark is a value no error or log line may ever contain.
const secretMark = "S3CRET-do-not-print-7Qx"

// logBuffer collects slog output of a test.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func testOptions(t *testing.T) (Options, *logBuffer) {
	t.Helper()
	lb := &logBuffer{}
	return Options{Logger: slog.New(slog.NewJSONHandler(lb, nil))}, lb
}

func writeFile(t *testing.T, dir, name, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil { // WriteFile's mode is masked by umask
		t.Fatal(err)
	}
	return p
}

func assertNoSecret(t *testing.T, what, text string) {
	t.Helper()
	if strings.Contains(text, secretMark) || strings.Contains(text, secretMark[:8]) {
		t.Errorf("%s holds the secret value: %s", what, text)
	}
}
