{{/* labels are the labels of every object: its name, and Helm's. */}}
{{- define "network-controller.labels" -}}
app.kubernetes.io/name: network-controller
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
{{- end }}
