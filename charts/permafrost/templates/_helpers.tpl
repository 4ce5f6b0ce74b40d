{{/* Names and labels shared by every template. */}}
{{- define "permafrost.fullname" -}}
{{- printf "%s-permafrost" .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}

{{- define "permafrost.labels" -}}
app.kubernetes.io/name: permafrost
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "permafrost.selector" -}}
app.kubernetes.io/name: permafrost
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "permafrost.image" -}}
{{- printf "%s/permafrost-%s:%s" .root.Values.image.registry .component (.root.Values.image.tag | default .root.Chart.AppVersion) -}}
{{- end -}}

{{- define "permafrost.secretName" -}}
{{- .Values.auth.existingSecret | default (printf "%s-auth" (include "permafrost.fullname" .)) -}}
{{- end -}}

{{- define "permafrost.serviceAccountName" -}}
{{- .Values.serviceAccount.name | default (printf "%s-operator" (include "permafrost.fullname" .)) -}}
{{- end -}}

{{/* Environment every Permafrost container gets: the JWT secret, logs as JSON, extras. */}}
{{- define "permafrost.commonEnv" -}}
- name: PERMAFROST_JWT_SECRET
  valueFrom:
    secretKeyRef:
      name: {{ include "permafrost.secretName" . }}
      key: jwt-secret
- name: PERMAFROST_LOG_FORMAT
  value: json
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "permafrost.envMap" -}}
{{- range $k, $v := . }}
- name: {{ $k }}
  value: {{ $v | quote }}
{{- end }}
{{- end -}}

{{- define "permafrost.pod" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}

{{- define "permafrost.containerSecurity" -}}
securityContext:
  allowPrivilegeEscalation: false
  capabilities:
    drop: ["ALL"]
{{- end -}}
