// Package deps pins the modules the project has chosen (ARCHITECTURE.md) while
// the packages that use them are written. It is removed once every module is
// imported by real code.
package deps

import (
	_ "github.com/cloudflare/circl/sign/mldsa/mldsa87"
	_ "github.com/go-jose/go-jose/v4"
	_ "github.com/gowebpki/jcs"
	_ "github.com/hashicorp/vault/api"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "go.opentelemetry.io/otel"
	_ "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	_ "go.opentelemetry.io/otel/sdk/trace"
	_ "golang.org/x/sys/unix"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/client-go/kubernetes"
	_ "sigs.k8s.io/yaml"
)
