package redact_test

import (
	"bytes"
	"fmt"

	"github.com/seed-6e06167c/mcp-executor/sidecar/policy/redact"
)

func Example() {
	salt := bytes.Repeat([]byte{1}, redact.SaltSize) // in use: redact.NewSalt(), kept in the copy
	r, err := redact.New(salt, redact.Options{ExtendKeys: []string{"client_secret"}})
	if err != nil {
		panic(err)
	}
	args := []byte(`{"url":"postgres://app:s3cr3t@db/app","client_secret":"abc","note":"hello"}`)
	out, err := r.JSON(args)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	// The auditor who holds the original shows it was that value.
	fmt.Println(redact.Verify(salt, "abc", "[REDACTED:key:"+redact.Tag(salt, "abc")+"]"))
	// Output:
	// {"url":"postgres://app:[REDACTED:connection-string:c353779d]@db/app","client_secret":"[REDACTED:key:f138dfb9]","note":"hello"}
	// true
}
