package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

const chartDir = "../charts/mcp-executor"

// helmBin finds helm: on PATH, else where scripts/test.sh installs it ($MCP_EXECUTOR_TOOLS_DIR/bin, by
// default ~/.cache/mcp-executor-tools/bin), else in ~/go/bin.
func helmBin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("helm"); err == nil {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatalf("helm is not on PATH, and the home folder to look in is unknown: %v", err)
	}
	tools := os.Getenv("MCP_EXECUTOR_TOOLS_DIR")
	if tools == "" {
		tools = filepath.Join(home, ".cache", "mcp-executor-tools")
	}
	for _, p := range []string{filepath.Join(tools, "bin", "helm"), filepath.Join(home, "go", "bin", "helm")} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("helm is not on PATH, in %s or in ~/go/bin: run ./scripts/test.sh setup, which installs helm v3.22.0", filepath.Join(tools, "bin"))
	return ""
}

// render runs `helm template` with the given values files and --set pairs.
func render(t *testing.T, valueFiles []string, sets ...string) (string, error) {
	t.Helper()
	args := []string{"template", "agent", chartDir, "--namespace", "agents", "--kube-version", "1.37.2"}
	for _, f := range valueFiles {
		args = append(args, "-f", f)
	}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	cmd := exec.Command(helmBin(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("helm template: %w: %s", err, errb.String())
	}
	return out.String(), nil
}

// objects holds the rendered documents decoded strictly into their k8s.io/api types.
type objects struct {
	deployments  []*appsv1.Deployment
	cronJobs     []*batchv1.CronJob
	configMaps   []*corev1.ConfigMap
	sas          []*corev1.ServiceAccount
	pvcs         []*corev1.PersistentVolumeClaim
	pods         []*corev1.Pod
	roles        []*rbacv1.Role
	roleBindings []*rbacv1.RoleBinding
	netpols      []*networkingv1.NetworkPolicy
	policies     []*admissionregistrationv1.ValidatingAdmissionPolicy
	secrets      []*corev1.Secret
	all          []map[string]any
}

var docSplit = regexp.MustCompile(`(?m)^---\s*$`)

// decodeStrict turns every document into its typed object, refusing any member the type lacks.
func decodeStrict(t *testing.T, manifest string) objects {
	t.Helper()
	var o objects
	for _, doc := range docSplit.Split(manifest, -1) {
		if strings.TrimSpace(stripComments(doc)) == "" {
			continue
		}
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatalf("document is not YAML: %v\n%s", err, doc)
		}
		var head struct{ Kind string }
		if err := json.Unmarshal(js, &head); err != nil {
			t.Fatal(err)
		}
		var generic map[string]any
		_ = json.Unmarshal(js, &generic)
		o.all = append(o.all, generic)
		var target any
		switch head.Kind {
		case "Deployment":
			v := &appsv1.Deployment{}
			o.deployments, target = append(o.deployments, v), v
		case "CronJob":
			v := &batchv1.CronJob{}
			o.cronJobs, target = append(o.cronJobs, v), v
		case "ConfigMap":
			v := &corev1.ConfigMap{}
			o.configMaps, target = append(o.configMaps, v), v
		case "ServiceAccount":
			v := &corev1.ServiceAccount{}
			o.sas, target = append(o.sas, v), v
		case "PersistentVolumeClaim":
			v := &corev1.PersistentVolumeClaim{}
			o.pvcs, target = append(o.pvcs, v), v
		case "Pod":
			v := &corev1.Pod{}
			o.pods, target = append(o.pods, v), v
		case "Role":
			v := &rbacv1.Role{}
			o.roles, target = append(o.roles, v), v
		case "RoleBinding":
			v := &rbacv1.RoleBinding{}
			o.roleBindings, target = append(o.roleBindings, v), v
		case "NetworkPolicy":
			v := &networkingv1.NetworkPolicy{}
			o.netpols, target = append(o.netpols, v), v
		case "ValidatingAdmissionPolicy":
			v := &admissionregistrationv1.ValidatingAdmissionPolicy{}
			o.policies, target = append(o.policies, v), v
		case "Secret":
			v := &corev1.Secret{}
			o.secrets, target = append(o.secrets, v), v
		case "ValidatingAdmissionPolicyBinding":
			target = &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
		default:
			t.Fatalf("unexpected kind %q in the rendered chart", head.Kind)
		}
		dec := json.NewDecoder(bytes.NewReader(js))
		dec.DisallowUnknownFields()
		if err := dec.Decode(target); err != nil {
			t.Fatalf("%s does not decode strictly into its k8s.io/api type: %v", head.Kind, err)
		}
	}
	return o
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func container(t *testing.T, cs []corev1.Container, name string) corev1.Container {
	t.Helper()
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no container %q", name)
	return corev1.Container{}
}

// hardened checks a container's security context against the chart's rules.
func hardened(t *testing.T, where string, c corev1.Container) {
	t.Helper()
	sc := c.SecurityContext
	if sc == nil {
		t.Fatalf("%s: container %s has no securityContext", where, c.Name)
	}
	switch {
	case sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot:
		t.Errorf("%s/%s: runAsNonRoot not true", where, c.Name)
	case sc.RunAsUser == nil || *sc.RunAsUser == 0:
		t.Errorf("%s/%s: runAsUser unset or root", where, c.Name)
	case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Errorf("%s/%s: root file system not read-only", where, c.Name)
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Errorf("%s/%s: privilege escalation allowed", where, c.Name)
	case sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(sc.Capabilities.Add) > 0:
		t.Errorf("%s/%s: capabilities not exactly drop ALL", where, c.Name)
	}
	if c.Resources.Requests == nil || c.Resources.Limits == nil {
		t.Errorf("%s/%s: resources requests and limits must be set", where, c.Name)
	}
}

func volumeByName(vs []corev1.Volume, name string) *corev1.Volume {
	for i := range vs {
		if vs[i].Name == name {
			return &vs[i]
		}
	}
	return nil
}

// secretish reports whether a volume carries a secret or a token.
func secretish(v corev1.Volume) bool {
	if v.Secret != nil {
		return true
	}
	if v.Projected != nil {
		for _, s := range v.Projected.Sources {
			if s.ServiceAccountToken != nil || s.Secret != nil {
				return true
			}
		}
	}
	return false
}

// checkInvariants holds a rendering to the chart's security promises.
func checkInvariants(t *testing.T, o objects) {
	t.Helper()
	if len(o.deployments) != 1 {
		t.Fatalf("want one Deployment, got %d", len(o.deployments))
	}
	d := o.deployments[0]
	spec := d.Spec.Template.Spec
	if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
		t.Error("the pod must not auto-mount a service-account token")
	}
	if spec.ShareProcessNamespace != nil && *spec.ShareProcessNamespace {
		t.Error("the pod must not share a process namespace")
	}
	agent := container(t, spec.Containers, "agent")
	exe := container(t, spec.InitContainers, "executor")
	install := container(t, spec.InitContainers, "install-bridge")
	if exe.RestartPolicy == nil || *exe.RestartPolicy != corev1.ContainerRestartPolicyAlways {
		t.Error("the executor must be a native sidecar (initContainers with restartPolicy Always)")
	}
	for _, c := range []corev1.Container{agent, exe, install} {
		hardened(t, "deployment", c)
	}
	if *agent.SecurityContext.RunAsUser == *exe.SecurityContext.RunAsUser {
		t.Error("the agent and the executor must run as different users")
	}
	// The agent has no token, no secret, no copy/state volume, no secret env.
	for _, m := range agent.VolumeMounts {
		v := volumeByName(spec.Volumes, m.Name)
		if v == nil {
			t.Fatalf("agent mounts unknown volume %s", m.Name)
		}
		if secretish(*v) || m.Name == "state" || m.Name == "settings" || strings.Contains(m.MountPath, "serviceaccount") {
			t.Errorf("the agent must not mount %s (%s)", m.Name, m.MountPath)
		}
	}
	for _, e := range agent.Env {
		// The one Secret the agent reads: its own bearer token for the executor's HTTP endpoint.
		if e.Name == "MCP_EXECUTOR_TOKEN" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Key == "token" {
			continue
		}
		if e.ValueFrom != nil && (e.ValueFrom.SecretKeyRef != nil) {
			t.Errorf("the agent's env %s comes from a Secret", e.Name)
		}
	}
	if len(agent.EnvFrom) > 0 {
		t.Error("the agent must take no envFrom")
	}
	var exeToken, exeState bool
	for _, m := range exe.VolumeMounts {
		if m.Name == "sa-token" {
			exeToken = true
		}
		if m.Name == "state" {
			exeState = true
		}
	}
	if !exeToken || !exeState {
		t.Errorf("the executor must mount the projected token (%v) and the state volume (%v)", exeToken, exeState)
	}
	// Both sides share the socket volume; the agent gets the bridge binary read-only.
	if !slices.ContainsFunc(agent.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "socket" }) {
		t.Error("the agent must mount the socket volume")
	}
	// The CronJob mounts the state read-only and is hardened too.
	for _, cj := range o.cronJobs {
		ps := cj.Spec.JobTemplate.Spec.Template.Spec
		if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
			t.Error("the compare CronJob must not auto-mount a token")
		}
		c := container(t, ps.Containers, "compare")
		hardened(t, "cronjob", c)
		var ro bool
		for _, m := range c.VolumeMounts {
			if m.Name == "state" {
				ro = m.ReadOnly
			}
		}
		v := volumeByName(ps.Volumes, "state")
		if !ro || v == nil || v.PersistentVolumeClaim == nil || !v.PersistentVolumeClaim.ReadOnly {
			t.Error("the compare CronJob must mount the copy read-only")
		}
		if !slices.Contains(c.Args, "compare") {
			t.Errorf("the CronJob runs %v, want compare", c.Args)
		}
	}
	// RBAC: get on named Secrets only; besides, only ApprovalRequests (no wildcard verb).
	for _, r := range o.roles {
		for _, rule := range r.Rules {
			if slices.Equal(rule.APIGroups, []string{"executor.prova.red"}) {
				for _, res := range rule.Resources {
					if res != "approvalrequests" && res != "approvalrequests/status" {
						t.Errorf("role %s rule %+v: only ApprovalRequests in this group", r.Name, rule)
					}
				}
				if slices.Contains(rule.Verbs, "*") {
					t.Errorf("role %s rule %+v: no wildcard verb", r.Name, rule)
				}
				continue
			}
			if !slices.Equal(rule.Verbs, []string{"get"}) || len(rule.ResourceNames) == 0 ||
				!slices.Equal(rule.Resources, []string{"secrets"}) {
				t.Errorf("role %s rule %+v: only get on named secrets is allowed", r.Name, rule)
			}
		}
	}
	for _, p := range o.pods {
		hardened(t, "test pod", container(t, p.Spec.Containers, "check"))
	}
}

func TestChartDefaults(t *testing.T) {
	out, err := render(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	o := decodeStrict(t, out)
	checkInvariants(t, o)
	if len(o.cronJobs) != 1 || len(o.pvcs) != 1 || len(o.pods) != 1 {
		t.Fatalf("defaults: want a CronJob, a PVC and a test pod; got %d, %d, %d", len(o.cronJobs), len(o.pvcs), len(o.pods))
	}
	if len(o.roles) != 0 {
		t.Error("with keys from Vault no Role is needed")
	}
	// The settings handed to the executor carry the Vault block the chart fills in.
	var settings map[string]any
	if err := json.Unmarshal([]byte(o.configMaps[0].Data["executor.json"]), &settings); err != nil {
		t.Fatalf("executor.json is not JSON: %v", err)
	}
	vault, _ := settings["vault"].(map[string]any)
	if vault == nil || vault["auth"] == nil {
		t.Fatalf("executor.json has no vault block: %v", settings)
	}
	// The approval queue is on the executor's volume, not in the read-only
	// folder of the settings (where the executor could not make it).
	approvals, _ := settings["approvals"].(map[string]any)
	if approvals == nil || approvals["queue"] != "/var/lib/mcp-executor/approvals" {
		t.Fatalf("executor.json's approvals.queue is not on the executor's volume: %v", settings["approvals"])
	}
	out, err = render(t, nil, "executor.settings.approvals.queue=/var/lib/mcp-executor/held")
	if err != nil {
		t.Fatal(err)
	}
	if o := decodeStrict(t, out); !strings.Contains(o.configMaps[0].Data["executor.json"], `"queue": "/var/lib/mcp-executor/held"`) {
		t.Fatalf("a queue the values name was not kept:\n%s", o.configMaps[0].Data["executor.json"])
	}
}

func TestChartValueSets(t *testing.T) {
	cases := []struct {
		name  string
		sets  []string
		check func(t *testing.T, o objects)
	}{
		{"secrets with role", []string{"keys.source=secrets", "keys.secrets={exec-keys,server-token}"}, func(t *testing.T, o objects) {
			if len(o.roles) != 1 || len(o.roleBindings) != 1 {
				t.Fatalf("want a Role and RoleBinding, got %d, %d", len(o.roles), len(o.roleBindings))
			}
			if got := o.roles[0].Rules[0].ResourceNames; !slices.Equal(got, []string{"exec-keys", "server-token"}) {
				t.Errorf("role names %v", got)
			}
		}},
		{"emptyDir state without compare", []string{"state.type=emptyDir", "compare.enabled=false"}, func(t *testing.T, o objects) {
			if len(o.cronJobs) != 0 || len(o.pvcs) != 0 {
				t.Error("no CronJob and no PVC expected")
			}
		}},
		{"network policy and otel", []string{"networkPolicy.enabled=true", "otel.endpoint=http://collector:4318"}, func(t *testing.T, o objects) {
			if len(o.netpols) != 1 {
				t.Fatal("want a NetworkPolicy")
			}
			exe := container(t, o.deployments[0].Spec.Template.Spec.InitContainers, "executor")
			if !slices.ContainsFunc(exe.Env, func(e corev1.EnvVar) bool {
				return e.Name == "OTEL_EXPORTER_OTLP_ENDPOINT" && e.Value == "http://collector:4318"
			}) {
				t.Error("OTEL_EXPORTER_OTLP_ENDPOINT not passed to the executor")
			}
		}},
		{"otel values and scrape annotations", []string{"otel.tracesSampler=parentbased_traceidratio", "otel.tracesSamplerArg=0.25",
			"otel.resourceAttributes=team=agents", "otel.metricExportInterval=15000"}, func(t *testing.T, o objects) {
			exe := container(t, o.deployments[0].Spec.Template.Spec.InitContainers, "executor")
			for name, want := range map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25",
				"OTEL_RESOURCE_ATTRIBUTES": "team=agents", "OTEL_METRIC_EXPORT_INTERVAL": "15000"} {
				if !slices.ContainsFunc(exe.Env, func(e corev1.EnvVar) bool { return e.Name == name && e.Value == want }) {
					t.Errorf("%s=%s not passed to the executor: %v", name, want, exe.Env)
				}
			}
			if slices.ContainsFunc(exe.Env, func(e corev1.EnvVar) bool {
				return e.Name == "OTEL_EXPORTER_OTLP_ENDPOINT" || e.Name == "OTEL_TRACES_EXPORTER"
			}) {
				t.Error("no endpoint or exporter was set, yet one is passed")
			}
			a := o.deployments[0].Spec.Template.Annotations
			if a["prometheus.io/scrape"] != "true" || a["prometheus.io/path"] != "/metrics" || a["prometheus.io/port"] != "8081" {
				t.Errorf("scrape annotations: %v", a)
			}
		}},
		{"no scrape annotations", []string{"metrics.scrapeAnnotations=false"}, func(t *testing.T, o objects) {
			if _, ok := o.deployments[0].Spec.Template.Annotations["prometheus.io/scrape"]; ok {
				t.Error("scrape annotations with metrics.scrapeAnnotations=false")
			}
		}},
		{"existing secret for settings", []string{"executor.existingSecret=my-settings"}, func(t *testing.T, o objects) {
			if len(o.configMaps) != 0 {
				t.Error("no ConfigMap expected with existingSecret")
			}
			v := volumeByName(o.deployments[0].Spec.Template.Spec.Volumes, "settings")
			if v == nil || v.Secret == nil || v.Secret.SecretName != "my-settings" {
				t.Error("settings must come from the existing Secret")
			}
		}},
		{"approvals in kubernetes", []string{"approvals.kubernetes.enabled=true", "approvals.kubernetes.approvers[0].kind=User",
			"approvals.kubernetes.approvers[0].name=alice"}, func(t *testing.T, o objects) {
			// The executor's Role: ask (create), read, take down; never update and never the status.
			var executor, approver *rbacv1.Role
			for _, r := range o.roles {
				switch r.Name {
				case "agent-mcp-executor-approval-requests":
					executor = r
				case "agent-mcp-executor-approver":
					approver = r
				}
			}
			if executor == nil || approver == nil {
				t.Fatalf("want the executor's and the approver's Roles, got %d Roles", len(o.roles))
			}
			for _, rule := range executor.Rules {
				if slices.Contains(rule.Resources, "approvalrequests/status") || slices.ContainsFunc(rule.Verbs, func(v string) bool { return v == "update" || v == "patch" || v == "*" }) {
					t.Errorf("the executor's Role may answer: %+v", rule)
				}
			}
			if !slices.ContainsFunc(approver.Rules, func(r rbacv1.PolicyRule) bool {
				return slices.Contains(r.Resources, "approvalrequests/status") && slices.Contains(r.Verbs, "patch")
			}) {
				t.Errorf("the approver's Role cannot patch the status: %+v", approver.Rules)
			}
			if !slices.ContainsFunc(o.roleBindings, func(b *rbacv1.RoleBinding) bool {
				return b.RoleRef.Name == approver.Name && len(b.Subjects) == 1 && b.Subjects[0].Name == "alice"
			}) {
				t.Error("the approver Role is not bound to alice")
			}
			if len(o.policies) != 1 || !strings.Contains(o.policies[0].Spec.Validations[0].Expression, "request.userInfo.username") {
				t.Error("want the admission policy that makes answeredBy the caller")
			}
			if !strings.Contains(o.configMaps[0].Data["executor.json"], `"namespace": "agents"`) {
				t.Errorf("the settings lack approvals.kubernetes.namespace:\n%s", o.configMaps[0].Data["executor.json"])
			}
		}},
		{"http on the pod's loopback", []string{"executor.http.enabled=true", "executor.http.port=8090", "executor.http.path=/agent/mcp"}, func(t *testing.T, o objects) {
			spec := o.deployments[0].Spec.Template.Spec
			exe := container(t, spec.InitContainers, "executor")
			url := "http://127.0.0.1:8090/agent/mcp"
			if i := slices.Index(exe.Args, url); i < 1 || exe.Args[i-1] != "--listen" || !slices.Contains(exe.Args, "--token-file") ||
				!slices.Contains(exe.Args, "unix:/run/mcp-executor/executor.sock") {
				t.Errorf("the executor's args: %v", exe.Args)
			}
			for _, p := range exe.Ports {
				if p.ContainerPort == 8090 {
					t.Error("the loopback port is declared as a container port")
				}
			}
			agent := container(t, spec.Containers, "agent")
			var urlOK, tokenOK bool
			for _, e := range agent.Env {
				urlOK = urlOK || (e.Name == "MCP_EXECUTOR_URL" && e.Value == url)
				tokenOK = tokenOK || (e.Name == "MCP_EXECUTOR_TOKEN" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil &&
					e.ValueFrom.SecretKeyRef.Name == "agent-mcp-executor-http-token" && e.ValueFrom.SecretKeyRef.Key == "token")
			}
			if !urlOK || !tokenOK {
				t.Errorf("the agent's env: %+v", agent.Env)
			}
			for _, m := range agent.VolumeMounts {
				if m.Name == "http-token" {
					t.Error("the agent mounts the token volume (it gets the token in its environment only)")
				}
			}
			if len(o.secrets) != 1 || o.secrets[0].Name != "agent-mcp-executor-http-token" || len(o.secrets[0].Data["token"]) < 32 {
				t.Fatalf("want the chart's token Secret with a random token: %+v", o.secrets)
			}
		}},
		{"http with a token secret of the values", []string{"executor.http.enabled=true", "executor.http.tokenSecret=agent-http-token"}, func(t *testing.T, o objects) {
			if len(o.secrets) != 0 {
				t.Error("the chart made a token Secret though the values name one")
			}
			v := volumeByName(o.deployments[0].Spec.Template.Spec.Volumes, "http-token")
			if v == nil || v.Secret == nil || v.Secret.SecretName != "agent-http-token" {
				t.Error("the token must come from the Secret the values name")
			}
		}},
		{"no http by default", nil, func(t *testing.T, o objects) {
			exe := container(t, o.deployments[0].Spec.Template.Spec.InitContainers, "executor")
			if slices.Contains(exe.Args, "--token-file") || len(o.secrets) != 0 {
				t.Error("HTTP is served by default")
			}
		}},
		{"example values", nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var files []string
			if tc.name == "example values" {
				files = []string{"values-example.yaml"}
			}
			out, err := render(t, files, tc.sets...)
			if err != nil {
				t.Fatal(err)
			}
			o := decodeStrict(t, out)
			checkInvariants(t, o)
			if tc.check != nil {
				tc.check(t, o)
			}
		})
	}
}

func TestChartRefusesBadValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets []string
		want string
	}{
		{"same uid", []string{"agent.runAsUser=65532"}, "must differ"},
		{"root agent", []string{"agent.runAsUser=0"}, "runAsUser"},
		{"unknown key", []string{"executor.privileged=true"}, "privileged"},
		{"bad key source", []string{"keys.source=plaintext"}, "source"},
		{"bad pull policy", []string{"executor.image.pullPolicy=Sometimes"}, "pullPolicy"},
		{"bad secret name", []string{"keys.secrets={Not_A_Name}"}, "secrets"},
		{"compare without pvc", []string{"state.type=emptyDir"}, "compare.enabled needs state.type=pvc"},
		{"bad issuer thumbprint", []string{"executor.settings.agent.issuerKeys={short}"}, "issuerKeys"},
		{"http port below 1024", []string{"executor.http.enabled=true", "executor.http.port=80"}, "port"},
		{"http path with a query", []string{"executor.http.enabled=true", "executor.http.path=/mcp?x=1"}, "path"},
		{"http token secret not a name", []string{"executor.http.enabled=true", "executor.http.tokenSecret=Not_A_Name"}, "tokenSecret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := render(t, nil, tc.sets...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want a refusal mentioning %q, got %v", tc.want, err)
			}
		})
	}
}

func TestHelmLint(t *testing.T) {
	out, err := exec.Command(helmBin(t), "lint", "--strict", chartDir).CombinedOutput()
	if err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "0 chart(s) failed") {
		t.Fatalf("helm lint output: %s", out)
	}
}

// TestGeneratedManifestsCurrent fails when deploy/mcp-executor.yaml is not what generate.sh writes.
func TestGeneratedManifestsCurrent(t *testing.T) {
	out, err := render(t, []string{"values-example.yaml"})
	if err != nil {
		t.Fatal(err)
	}
	want := "# Generated by deploy/generate.sh from charts/mcp-executor with deploy/values-example.yaml; do not edit.\n" + out
	got, err := os.ReadFile("mcp-executor.yaml")
	if err != nil {
		t.Fatalf("reading deploy/mcp-executor.yaml: %v (run deploy/generate.sh)", err)
	}
	if string(got) != want {
		t.Fatal("deploy/mcp-executor.yaml is out of date: run deploy/generate.sh and commit the result")
	}
}
