package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Which OTEL_* variables ask for OTLP export of a signal.
func TestOTLPWanted(t *testing.T) {
	cases := []struct {
		env             map[string]string
		traces, metrics bool
	}{
		{nil, false, false},
		{map[string]string{"OTEL_SERVICE_NAME": "x", "OTEL_RESOURCE_ATTRIBUTES": "a=b"}, false, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://c:4318/v1/metrics"}, false, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_METRICS_EXPORTER": "none"}, true, false},
	}
	all := []string{"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"}
	for _, c := range cases {
		for _, k := range all {
			t.Setenv(k, c.env[k])
		}
		if got := otlpWanted("TRACES"); got != c.traces {
			t.Errorf("%v: traces %v, want %v", c.env, got, c.traces)
		}
		if got := otlpWanted("METRICS"); got != c.metrics {
			t.Errorf("%v: metrics %v, want %v", c.env, got, c.metrics)
		}
	}
}

// With no OTEL_* variable, setupTelemetry installs no trace SDK (the API's no-op stays) and a
// /metrics handler that serves the Prometheus text of the global meter's instruments.
func TestSetupTelemetryWithoutOTEL(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
		"OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_SDK_DISABLED"} {
		t.Setenv(k, "")
	}
	tel, err := setupTelemetry(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tel.shutdown(context.Background()) }()
	if _, isSDK := otel.GetTracerProvider().(*sdktrace.TracerProvider); isSDK {
		t.Error("a trace SDK was installed with no OTEL_* variable")
	}
	c, err := otel.Meter("test").Int64Counter("test.things")
	if err != nil {
		t.Fatal(err)
	}
	c.Add(context.Background(), 2)
	rr := httptest.NewRecorder()
	tel.metrics.ServeHTTP(rr, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(rr.Body.String(), "test_things_total") {
		t.Errorf("/metrics does not serve the meter's counter:\n%s", rr.Body.String())
	}
}
