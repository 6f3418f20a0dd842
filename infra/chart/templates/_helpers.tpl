{{/* Labels every object of the chart carries (Kubernetes recommended labels). */}}
{{- define "dynamo-fn.labels" -}}
app.kubernetes.io/part-of: dynamo-fn
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | quote }}
{{- end -}}

{{/* The image of every function. */}}
{{- define "dynamo-fn.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/*
The configuration every function reads from its environment (shared/runtime/config.ts):
LOG_LEVEL, LPX_ENABLED, LPX_MODEL_REGISTRY_URL, MODEL_EXPRESS_URL, AISIMULATE_IMAGE; and the settings the chart
forwards for the functions that take them: DGDR_V1BETA2_ENABLED, OPERATOR_VERSION (DGDR
admission's version rules; its default is the same 1.6.1).
*/}}
{{- define "dynamo-fn.env" -}}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
- name: LPX_ENABLED
  value: {{ .Values.lpx.enabled | quote }}
- name: DGDR_V1BETA2_ENABLED
  value: {{ .Values.dgdrV1Beta2.enabled | quote }}
- name: OPERATOR_VERSION
  value: {{ .Values.operatorVersion | quote }}
{{- with .Values.modelRegistryURL }}
- name: LPX_MODEL_REGISTRY_URL
  value: {{ . | quote }}
{{- end }}
{{- with .Values.modelExpressURL }}
- name: MODEL_EXPRESS_URL
  value: {{ . | quote }}
{{- end }}
{{- with .Values.images.aisimulate }}
- name: AISIMULATE_IMAGE
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* The Broker every source sends to. */}}
{{- define "dynamo-fn.brokerRef" -}}
ref:
  apiVersion: eventing.knative.dev/v1
  kind: Broker
  name: {{ .Values.broker.name }}
{{- end -}}

{{/*
One CloudEvents function: its Knative Service (scale to zero), the ApiServerSource of the kinds
it takes (with its own ServiceAccount allowed only get/list/watch on them), one Trigger per kind
(filtered on the kind and on the function, so two functions taking one kind each get their own
copy once), and one resync PingSource per kind. The function's own RBAC is in
templates/<function>/rbac.yaml.
Input: dict "root" $ "name" "reconcile" "kinds" (list of dict "group" "apiVersion" "kind" "resource",
       optional "selector" (a label selector for the ApiServerSource) and "resync" false (no resync
       PingSource: the function has no resync route for the kind))
       "env" (optional list of extra container env entries)
       "ticks" (optional list of dict "name" "schedule" "kind"; kind is one of kinds, whose Trigger
       delivers the tick).
*/}}
{{- define "dynamo-fn.function" -}}
{{- $root := .root -}}
{{- $name := .name -}}
{{- $cfg := index $root.Values $name -}}
{{- $fullName := printf "dynamo-%s" $name -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $fullName }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "dynamo-fn.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
---
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: {{ $fullName }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "dynamo-fn.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
    # Only the Broker calls the function: no public route.
    networking.knative.dev/visibility: cluster-local
spec:
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {{ $fullName }}
        app.kubernetes.io/part-of: dynamo-fn
        app.kubernetes.io/component: {{ $name }}
      annotations:
        autoscaling.knative.dev/class: kpa.autoscaling.knative.dev
        autoscaling.knative.dev/min-scale: {{ $cfg.minScale | quote }}
        autoscaling.knative.dev/max-scale: {{ $cfg.maxScale | quote }}
        autoscaling.knative.dev/target: {{ $cfg.target | quote }}
    spec:
      serviceAccountName: {{ $fullName }}
      containerConcurrency: {{ $cfg.containerConcurrency }}
      timeoutSeconds: {{ $cfg.timeoutSeconds }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ $name }}
          image: {{ include "dynamo-fn.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          # The function's V8 startup snapshot (npm run build: dist/bundles/<function>.blob, built
          # from its own bundle, with only what the function reaches, by the image's Node.js):
          # its modules are evaluated when the process starts, no TypeScript transpiler. `--`
          # ends node's options (shared/cli/function-snapshot.ts, functionSnapshotArgs).
          # /nodejs/bin/node is the image's Node.js (infra/image/build.sh links it too).
          command: [/nodejs/bin/node, --snapshot-blob, /app/dist/bundles/{{ $name }}.blob, --]
          ports:
            - name: http1
              containerPort: 8080
          env:
            {{- include "dynamo-fn.env" $root | nindent 12 }}
            - name: RESYNC_CONCURRENCY
              value: {{ $cfg.resyncConcurrency | quote }}
            # The V8 heap pinned as admission's, so RSS stays under the memory limit
            # (test/integration/memory.test.ts).
            - name: NODE_OPTIONS
              value: {{ $root.Values.functionNodeOptions | quote }}
            {{- with .env }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          readinessProbe:
            httpGet:
              path: /readyz
          livenessProbe:
            httpGet:
              path: /healthz
          resources:
            {{- toYaml $cfg.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- with .volumeMounts }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
      volumes:
        # The root filesystem is read-only; Node.js and its libraries may still write to /tmp.
        - name: tmp
          emptyDir:
            sizeLimit: 64Mi
        {{- with .volumes }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
---
# The ApiServerSource adapter's identity: watch only the kinds this function takes.
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ $fullName }}-source
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "dynamo-fn.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: {{ $fullName }}-source
  labels:
    {{- include "dynamo-fn.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
rules:
  {{- range .kinds }}
  - apiGroups: [{{ .group | quote }}]
    resources: [{{ .resource }}]
    verbs: [get, list, watch]
  {{- end }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: {{ $fullName }}-source
  labels:
    {{- include "dynamo-fn.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: {{ $fullName }}-source
subjects:
  - kind: ServiceAccount
    name: {{ $fullName }}-source
    namespace: {{ $root.Release.Namespace }}
---
# Changes of the kinds this function takes, as Reference-mode CloudEvents (the function reads
# the object itself), from one cluster-wide watch per kind (empty namespaceSelector).
apiVersion: sources.knative.dev/v1
kind: ApiServerSource
metadata:
  name: {{ $fullName }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "dynamo-fn.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  mode: Reference
  serviceAccountName: {{ $fullName }}-source
  namespaceSelector: {}
  resources:
    {{- range .kinds }}
    - apiVersion: {{ .apiVersion }}
      kind: {{ .kind }}
      {{- with .selector }}
      selector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
    {{- end }}
  ceOverrides:
    extensions:
      dynamofunction: {{ $name }}
  sink:
    {{- include "dynamo-fn.brokerRef" $root | nindent 4 }}
{{- $triggered := dict }}
{{- range .kinds }}
{{- if ne (toString .resync) "false" }}
---
# The resync of {{ .kind }}: covers what ApiServerSource never delivers (nothing on start,
# nothing across a relist gap; ../shared/upstream-notes/knative.md §1.5).
apiVersion: sources.knative.dev/v1
kind: PingSource
metadata:
  name: {{ $fullName }}-{{ .kind | lower }}-resync
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "dynamo-fn.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  schedule: {{ $root.Values.resync.schedule | quote }}
  contentType: application/json
  data: "{}"
  ceOverrides:
    extensions:
      kind: {{ .kind }}
      apiversion: {{ .apiVersion }}
      dynamofunction: {{ $name }}
  sink:
    {{- include "dynamo-fn.brokerRef" $root | nindent 4 }}
{{- end }}
{{- /* One Trigger per kind, however many source entries (selectors) it has. */ -}}
{{- if not (hasKey $triggered .kind) }}
{{- $_ := set $triggered .kind true }}
---
# Both the API events and the resync ping of {{ .kind }} carry kind={{ .kind }} and this function.
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: {{ $fullName }}-{{ .kind | lower }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "dynamo-fn.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  broker: {{ $root.Values.broker.name }}
  filter:
    attributes:
      kind: {{ .kind }}
      dynamofunction: {{ $name }}
  subscriber:
    ref:
      apiVersion: serving.knative.dev/v1
      kind: Service
      name: {{ $fullName }}
{{- end }}
{{- end }}
{{- range .ticks }}
---
# Ticks for time-based work ({{ .name }}): the function acts on the recheckAt its decisions return.
apiVersion: sources.knative.dev/v1
kind: PingSource
metadata:
  name: {{ $fullName }}-{{ .name }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "dynamo-fn.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $name }}
spec:
  schedule: {{ .schedule | quote }}
  contentType: application/json
  data: "{}"
  ceOverrides:
    extensions:
      kind: {{ .kind }}
      dynamofunction: {{ $name }}
  sink:
    {{- include "dynamo-fn.brokerRef" $root | nindent 4 }}
{{- end }}
{{- end -}}
