package deploy

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"sort"
	"testing"
)

// exportedMetrics are the Prometheus names of the executor's metrics as /metrics serves them (the
// OTel names of sidecar/telemetry.go, dots as underscores, counters with _total, seconds and bytes
// histograms with their unit); sidecar's TestMetricsOnHealthAddress reads most of them from a
// running executor.
var exportedMetrics = []string{
	"mcp_executor_calls_total",
	"mcp_executor_call_server_duration_seconds",
	"mcp_executor_call_executor_duration_seconds",
	"mcp_executor_fsync_duration_seconds",
	"mcp_executor_book_entries_total",
	"mcp_executor_book_bytes_total",
	"mcp_executor_copy_lines_total",
	"mcp_executor_calls_in_flight",
	"mcp_executor_bytes_in_flight",
	"mcp_executor_calls_waiting_approval",
	"mcp_executor_not_taken_total",
	"mcp_executor_signer_errors_total",
	"mcp_executor_signer_duration_seconds",
	"mcp_executor_server_lines_dropped_total",
}

var metricName = regexp.MustCompile(`mcp_executor_[a-z_]+`)

// The Grafana dashboard is JSON Grafana reads (title, uid, panels with Prometheus targets), every
// query names only metrics the executor serves, and every metric is on some panel.
func TestGrafanaDashboard(t *testing.T) {
	data, err := os.ReadFile("grafana/mcp-executor.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("the dashboard needs a title, a uid and panels: %+v", d)
	}
	used := map[string]bool{}
	for _, p := range d.Panels {
		if p.Title == "" || len(p.Targets) == 0 {
			t.Errorf("panel %q has no title or no query", p.Title)
		}
		for _, tg := range p.Targets {
			names := metricName.FindAllString(tg.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: query %q names no metric of the executor", p.Title, tg.Expr)
			}
			for _, n := range names {
				for _, suffix := range []string{"_bucket", "_count", "_sum"} {
					if len(n) > len(suffix) && n[len(n)-len(suffix):] == suffix {
						n = n[:len(n)-len(suffix)]
					}
				}
				if !slices.Contains(exportedMetrics, n) {
					t.Errorf("panel %q: %s is not a metric the executor serves", p.Title, n)
				}
				used[n] = true
			}
		}
	}
	var missing []string
	for _, n := range exportedMetrics {
		if !used[n] {
			missing = append(missing, n)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("metrics on no panel: %v", missing)
	}
}
