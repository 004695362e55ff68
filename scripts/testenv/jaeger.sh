#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# jaeger.sh: Jaeger all-in-one (v2, built on the OpenTelemetry collector, traces kept in memory) on
# 127.0.0.1, for the tests of the executor's spans.
#
# usage: jaeger.sh build|start|stop|env|status
#   build   build jaeger into $TOOLS_DIR/jaeger-$VERSION/jaeger, unless it is there (about 3 min)
#   start   build, start it in the background, wait until its query API answers, print the lines below
#   stop    stop it
#   env     print the export lines: MCP_EXECUTOR_TEST_OTLP_ENDPOINT (OTLP/HTTP, http://127.0.0.1:4318),
#           JAEGER_OTLP_GRPC (127.0.0.1:4317), JAEGER_QUERY_URL (http://127.0.0.1:16686, with
#           /api/traces/<trace id> and /api/services)
#   status  exit 0 when it runs and answers
#
# The OTLP endpoint is not printed as OTEL_EXPORTER_OTLP_ENDPOINT: that would make every executor a test
# starts send its spans here, where only the trace tests should. The ports are Jaeger's own defaults;
# its built-in configuration listens on every address for the query API and on more ports than the
# tests use, so start gives it one of its own (config below).
#
# Variables (optional): MCP_EXECUTOR_TOOLS_DIR, JAEGER_TEST_VERSION (v1.76.0), GO.
#
# The build: jaeger's go.mod has replace lines, which `go install jaeger@v` refuses; the command is built
# as a tool of a throw-away module instead.
set -euo pipefail
TESTENV_NAME=jaeger
. "$(dirname "$0")/lib.sh"

VERSION="${JAEGER_TEST_VERSION:-v1.76.0}"
BIN="$TOOLS_DIR/jaeger-$VERSION/jaeger"
STATE="$RUN_DIR/jaeger"
QUERY=http://127.0.0.1:16686

build() {
	[ -x "$BIN" ] && return 0
	local src
	src="$(dirname "$BIN")/src"
	say "building jaeger $VERSION (about 3 to 5 min on 2 cores)"
	rm -rf "$src"
	mkdir -p "$src"
	printf 'module jaegerbin\n\ngo 1.26\n' >"$src/go.mod"
	(cd "$src" && go_build_env "$GO" get -tool "github.com/jaegertracing/jaeger/cmd/jaeger@$VERSION" &&
		go_build_env "$GO" build -ldflags "-s -w" -o "$BIN.part" github.com/jaegertracing/jaeger/cmd/jaeger)
	mv "$BIN.part" "$BIN"
	rm -rf "$src"
}

# config FILE: the all-in-one pipeline (OTLP in, memory storage, the query API), every listener on
# 127.0.0.1 and no metrics listener of the collector's own.
config() {
	cat >"$1" <<'YAML'
service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:16686
    grpc:
      endpoint: 127.0.0.1:16685
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:4317
      http:
        endpoint: 127.0.0.1:4318
processors:
  batch:
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
YAML
}

answers() { curl -fsS --max-time 2 "$QUERY/api/services" >/dev/null 2>&1; }

print_env() {
	echo "export MCP_EXECUTOR_TEST_OTLP_ENDPOINT=http://127.0.0.1:4318"
	echo "export JAEGER_OTLP_GRPC=127.0.0.1:4317"
	echo "export JAEGER_QUERY_URL=$QUERY"
}

start() {
	locked build-jaeger build
	mkdir -p "$STATE"
	if alive "$STATE/jaeger.pid"; then
		answers || die "jaeger (pid $(cat "$STATE/jaeger.pid")) runs but does not answer; see $STATE/jaeger.log"
		print_env
		return 0
	fi
	ports_free 4317 4318 16685 16686
	config "$STATE/config.yaml"
	daemon "$STATE/jaeger.pid" "$STATE/jaeger.log" --dir "$STATE" "$BIN" --config "$STATE/config.yaml"
	wait_until jaeger "$STATE/jaeger.pid" "$STATE/jaeger.log" 60 answers || { stop; exit 1; }
	say "jaeger $VERSION: OTLP on 127.0.0.1:4317 and :4318, query on $QUERY"
	print_env
}

stop() { stop_pid "$STATE/jaeger.pid"; }

case "${1:-}" in
build) locked build-jaeger build ;;
start) start ;;
stop) stop ;;
env) print_env ;;
status) alive "$STATE/jaeger.pid" && answers ;;
*) usage "$0 build|start|stop|env|status" ;;
esac
