{{/* labels are the labels of every object: its name, and Helm's. */}}
{{- define "envoy-injector.labels" -}}
app.kubernetes.io/name: envoy-injector
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}

{{/* caBundle is the value given, else the one in the cluster, so that an
upgrade does not take away what hack/injector-certs.sh or cert-manager set. */}}
{{- define "envoy-injector.caBundle" -}}
{{- if .Values.webhook.caBundle -}}
{{ .Values.webhook.caBundle }}
{{- else -}}
{{- $existing := lookup "admissionregistration.k8s.io/v1" "MutatingWebhookConfiguration" "" "envoy-injector" -}}
{{- if $existing -}}
{{ (index $existing.webhooks 0).clientConfig.caBundle | default "" }}
{{- end -}}
{{- end -}}
{{- end }}

{{/* memoryLimit is the container's memory limit: the memory budget of the
requests (--memory-budget) and the program's own baseline, in Mi. */}}
{{- define "envoy-injector.memoryLimit" -}}
{{- if lt (int .Values.memory.budgetMi) 109 -}}
{{- fail "memory.budgetMi must be at least 109: the largest review (3 MiB) costs 100 MiB, beside 8 MiB for requests that have not sent their bodies" -}}
{{- end -}}
{{ add .Values.memory.budgetMi .Values.memory.baselineMi }}Mi
{{- end }}

{{/* goMemLimit is GOMEMLIMIT: the memory limit less the 48 MiB the program
holds outside the Go heap (its mapped code, the runtime's own), which the Go
runtime does not count against GOMEMLIMIT. */}}
{{- define "envoy-injector.goMemLimit" -}}
{{ sub (add .Values.memory.budgetMi .Values.memory.baselineMi) 48 }}MiB
{{- end }}
