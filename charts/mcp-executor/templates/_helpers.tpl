{{/* The chart name. */}}
{{- define "mcp-executor.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The full name of the release's resources. */}}
{{- define "mcp-executor.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The four recommended labels plus the chart's. */}}
{{- define "mcp-executor.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "mcp-executor.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "mcp-executor.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcp-executor.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mcp-executor.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mcp-executor.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "mcp-executor.image" -}}
{{ .Values.executor.image.repository }}:{{ .Values.executor.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "mcp-executor.stateClaim" -}}
{{- default (printf "%s-state" (include "mcp-executor.fullname" .)) .Values.state.existingClaim }}
{{- end }}

{{/* The settings volume: owner read only; the kubelet adds read for the pod's fsGroup (it does so for
every file of a Secret or ConfigMap volume), which the executor knows is no wider access: only the
containers that mount the volume reach it. */}}
{{- define "mcp-executor.settingsSource" -}}
{{- if .Values.executor.existingSecret }}
secret:
  secretName: {{ .Values.executor.existingSecret }}
  defaultMode: 0400
{{- else }}
configMap:
  name: {{ include "mcp-executor.fullname" . }}-settings
  defaultMode: 0400
{{- end }}
{{- end }}

{{/* The executor's settings with the chart's Vault or Kubernetes block filled in. */}}
{{- define "mcp-executor.settings" -}}
{{- $s := deepCopy .Values.executor.settings }}
{{- if eq .Values.keys.source "vault" }}
{{- $_ := set $s "vault" (dict "address" .Values.keys.vault.address "auth" (dict "kubernetes" (dict "role" .Values.keys.vault.role "mount" .Values.keys.vault.authMount "tokenFile" "/var/run/secrets/kubernetes.io/serviceaccount/token"))) }}
{{- else if eq .Values.keys.source "secrets" }}
{{- $_ := set $s "kubernetes" (dict) }}
{{- end }}
{{- /* The approval queue lives on the executor's own volume: the settings' folder is a read-only mount. */}}
{{- $a := deepCopy (default (dict) $s.approvals) }}
{{- if not (hasKey $a "queue") }}
{{- $_ := set $a "queue" "/var/lib/mcp-executor/approvals" }}
{{- end }}
{{- $_ := set $s "approvals" $a }}
{{- if .Values.approvals.kubernetes.enabled }}
{{- $_ := set $a "kubernetes" (dict "namespace" (include "mcp-executor.approvalsNamespace" .)) }}
{{- if eq .Values.keys.source "vault" }}
{{- $_ := set $s.vault.auth.kubernetes "tokenFile" "/var/run/secrets/kubernetes.io/serviceaccount/vault-token" }}
{{- end }}
{{- end }}
{{- toPrettyJson $s }}
{{- end }}

{{/* The namespace of the ApprovalRequests. */}}
{{- define "mcp-executor.approvalsNamespace" -}}
{{- default .Release.Namespace .Values.approvals.kubernetes.namespace }}
{{- end }}

{{/* Hardened container security context; the user is passed in. */}}
{{- define "mcp-executor.containerSecurity" -}}
runAsNonRoot: true
runAsUser: {{ .uid }}
runAsGroup: {{ .gid }}
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
privileged: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* The projected service-account token, mounted into the executor alone. */}}
{{- define "mcp-executor.tokenVolume" -}}
- name: sa-token
  projected:
    defaultMode: 0400
    sources:
      {{- if and (eq .Values.keys.source "vault") .Values.approvals.kubernetes.enabled }}
      # Two tokens: one for the API server (ApprovalRequests), one with Vault's audience.
      - serviceAccountToken:
          path: token
          expirationSeconds: 3600
      - serviceAccountToken:
          path: vault-token
          expirationSeconds: 3600
          audience: {{ .Values.keys.vault.audience }}
      {{- else }}
      - serviceAccountToken:
          path: token
          expirationSeconds: 3600
          {{- if eq .Values.keys.source "vault" }}
          audience: {{ .Values.keys.vault.audience }}
          {{- end }}
      {{- end }}
      - configMap:
          name: kube-root-ca.crt
          items:
            - key: ca.crt
              path: ca.crt
      - downwardAPI:
          items:
            - path: namespace
              fieldRef:
                fieldPath: metadata.namespace
{{- end }}

{{- define "mcp-executor.otelEnv" -}}
{{- if .Values.otel.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .Values.otel.endpoint | quote }}
{{- end }}
- name: OTEL_SERVICE_NAME
  value: {{ .Values.otel.serviceName | quote }}
{{- range $name, $value := dict "OTEL_RESOURCE_ATTRIBUTES" .Values.otel.resourceAttributes "OTEL_TRACES_EXPORTER" .Values.otel.tracesExporter "OTEL_METRICS_EXPORTER" .Values.otel.metricsExporter "OTEL_TRACES_SAMPLER" .Values.otel.tracesSampler "OTEL_TRACES_SAMPLER_ARG" .Values.otel.tracesSamplerArg "OTEL_METRIC_EXPORT_INTERVAL" .Values.otel.metricExportInterval }}
{{- if $value }}
- name: {{ $name }}
  value: {{ $value | quote }}
{{- end }}
{{- end }}
{{- with .Values.otel.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The executor's streamable HTTP endpoint on the pod's loopback. */}}
{{- define "mcp-executor.httpURL" -}}
http://127.0.0.1:{{ .Values.executor.http.port }}{{ .Values.executor.http.path }}
{{- end }}

{{/* The Secret holding the HTTP endpoint's bearer token: the values' own, or the chart's. */}}
{{- define "mcp-executor.httpTokenSecret" -}}
{{- .Values.executor.http.tokenSecret | default (printf "%s-http-token" (include "mcp-executor.fullname" .)) }}
{{- end }}
