package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// telemetry is what setupTelemetry made: the /metrics handler and the function that flushes and stops
// the providers.
type telemetry struct {
	metrics  http.Handler
	shutdown func(context.Context) error
}

// setupTelemetry installs the OpenTelemetry SDK the packages' API calls reach:
//   - traces: an OTLP/HTTP exporter when the standard OTEL_* variables name an endpoint (or
//     OTEL_TRACES_EXPORTER=otlp); otherwise the global no-op tracer stays and no span leaves the process;
//   - metrics: always a Prometheus reader on a registry of our own, served as /metrics on serve's
//     --health address (pulled, never pushed); and an OTLP/HTTP exporter when an endpoint is named
//     (or OTEL_METRICS_EXPORTER=otlp).
//
// OTEL_SDK_DISABLED=true turns all of it off.
func setupTelemetry(ctx context.Context) (telemetry, error) {
	t := telemetry{shutdown: func(context.Context) error { return nil }}
	if os.Getenv("OTEL_SDK_DISABLED") == "true" {
		return t, nil
	}
	res, err := telemetryResource(ctx)
	if err != nil {
		return t, err
	}
	var shutdowns []func(context.Context) error
	t.shutdown = func(ctx context.Context) error {
		var errs []error
		for _, f := range shutdowns {
			errs = append(errs, f(ctx))
		}
		return errors.Join(errs...)
	}
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))

	if otlpWanted("TRACES") {
		exporter, err := otlptracehttp.New(ctx)
		if err != nil {
			return t, fmt.Errorf("the OTLP trace exporter: %w", err)
		}
		provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
		otel.SetTracerProvider(provider)
		shutdowns = append(shutdowns, provider.Shutdown)
	}

	registry := prometheus.NewRegistry()
	promReader, err := otelprom.New(otelprom.WithRegisterer(registry))
	if err != nil {
		return t, fmt.Errorf("the Prometheus metrics reader: %w", err)
	}
	opts := []sdkmetric.Option{sdkmetric.WithResource(res), sdkmetric.WithReader(promReader)}
	if otlpWanted("METRICS") {
		exporter, err := otlpmetrichttp.New(ctx)
		if err != nil {
			return t, fmt.Errorf("the OTLP metric exporter: %w", err)
		}
		opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exporter)))
	}
	provider := sdkmetric.NewMeterProvider(opts...)
	otel.SetMeterProvider(provider)
	shutdowns = append(shutdowns, provider.Shutdown)
	t.metrics = promhttp.HandlerFor(registry, promhttp.HandlerOpts{})
	return t, nil
}

// otlpWanted reports whether the OTEL_* variables ask for OTLP export of a signal (TRACES, METRICS):
// an endpoint named for it or for all, or OTEL_<signal>_EXPORTER=otlp; never when it is "none".
func otlpWanted(signal string) bool {
	exporter := os.Getenv("OTEL_" + signal + "_EXPORTER")
	if exporter == "none" {
		return false
	}
	return exporter == "otlp" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" ||
		os.Getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != ""
}

// telemetryResource names the service (mcp-executor unless OTEL_SERVICE_NAME says otherwise) and
// takes OTEL_RESOURCE_ATTRIBUTES.
func telemetryResource(ctx context.Context) (*resource.Resource, error) {
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName("mcp-executor")))
	if err != nil {
		return nil, fmt.Errorf("the OpenTelemetry resource: %w", err)
	}
	envRes, err := resource.New(ctx, resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("the OpenTelemetry resource from OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	if res, err = resource.Merge(res, envRes); err != nil {
		return nil, fmt.Errorf("the OpenTelemetry resource: %w", err)
	}
	return res, nil
}
