package deploy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// envValue is the value of the container's env name, and whether it is set.
func envValue(c corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// goMemLimitBytes reads a GOMEMLIMIT value (B, KiB, MiB, GiB).
func goMemLimitBytes(t *testing.T, v string) int64 {
	t.Helper()
	q, err := resource.ParseQuantity(strings.TrimSuffix(v, "B"))
	if err != nil {
		t.Fatalf("GOMEMLIMIT %q: %v", v, err)
	}
	return q.Value()
}

// By default the executor and the compare Job get a GOMEMLIMIT below
// their container's memory limit (the executor's at most half of it: the
// tool server shares the container); an empty goMemLimit sets none.
func TestChartGoMemLimit(t *testing.T) {
	out, err := render(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := decodeStrict(t, out)
	exe := container(t, o.deployments[0].Spec.Template.Spec.InitContainers, "executor")
	cmp := container(t, o.cronJobs[0].Spec.JobTemplate.Spec.Template.Spec.Containers, "compare")
	for _, c := range []struct {
		c        corev1.Container
		fraction float64
	}{{exe, 0.5}, {cmp, 0.9}} {
		v, ok := envValue(c.c, "GOMEMLIMIT")
		if !ok {
			t.Fatalf("%s: no GOMEMLIMIT", c.c.Name)
		}
		limit := c.c.Resources.Limits.Memory().Value()
		if got := goMemLimitBytes(t, v); got <= 0 || float64(got) > c.fraction*float64(limit) {
			t.Errorf("%s: GOMEMLIMIT %s against a memory limit of %d bytes; want at most %.0f%% of it", c.c.Name, v, limit, 100*c.fraction)
		}
	}
	out, err = render(t, nil, "executor.goMemLimit=", "compare.goMemLimit=")
	if err != nil {
		t.Fatal(err)
	}
	o = decodeStrict(t, out)
	exe = container(t, o.deployments[0].Spec.Template.Spec.InitContainers, "executor")
	cmp = container(t, o.cronJobs[0].Spec.JobTemplate.Spec.Template.Spec.Containers, "compare")
	for _, c := range []corev1.Container{exe, cmp} {
		if v, ok := envValue(c, "GOMEMLIMIT"); ok {
			t.Errorf("%s: GOMEMLIMIT %q with goMemLimit empty", c.Name, v)
		}
	}
	if _, err := render(t, nil, "executor.goMemLimit=lots"); err == nil || !strings.Contains(err.Error(), "goMemLimit") {
		t.Errorf("a goMemLimit that is not a size: %v", err)
	}
}
