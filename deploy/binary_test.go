package deploy

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStaticBinaryAsTheDockerfileBuildsIt builds the binary the way the Dockerfile's build stage does
// (CGO_ENABLED=0, -trimpath, the version set with -ldflags) and checks that it is a static executable
// that runs on a distroless base: no ELF interpreter and no shared libraries, and the version it prints
// is the one given. (No Docker engine runs here, so the image itself is not built in tests.)
func TestStaticBinaryAsTheDockerfileBuildsIt(t *testing.T) {
	dockerfile, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-X main.version=${VERSION}", "distroless/static", "USER 65532:65532"} {
		if !strings.Contains(string(dockerfile), want) {
			t.Errorf("the Dockerfile lacks %q", want)
		}
	}
	out := filepath.Join(t.TempDir(), "mcp-executor")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w -X main.version=9.9.9-test", "-o", out, "../cmd/mcp-executor")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v\n%s", err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the binary names an ELF interpreter: it is not static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("the binary needs shared libraries: %v", libs)
	}
	v, err := exec.Command(out, "version").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(v)); got != "mcp-executor 9.9.9-test" {
		t.Fatalf("version = %q", got)
	}
}
