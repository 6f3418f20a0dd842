/**
 * The profiling Job's `output-copier` sidecar script: relays the profiler's progress and results
 * from `/data` into the ConfigMap `dgdr-output-<name>`, which the profile function reads.
 *
 * Behaviour (upstream deploy/operator/internal/controller/dynamographdeploymentrequest_controller.go
 * `sidecarScriptTemplate`, as recorded in ../shared/upstream-notes/profiler.md §1.3; our own text):
 * 1. no `kubectl` in the image: an error naming spec.overrides.profilingJob, exit 1;
 * 2. every 10 s, while the `profiler` container is not terminated, relay `phase`/`message` of
 *    `/data/profiler_status.yaml` into the ConfigMap when the phase changed; a line every 300 s;
 * 3. then wait up to 120 s for the status file and, by `status:` —
 *    `success`: data phase, message, `profiler_status: success`, `final_config.yaml`, `profiler_status.yaml`; exit 0;
 *    `failed`: data phase, message, `profiler_status: failed`, `profiler_error`, `profiler_status.yaml`; exit 0
 *    (the function reads the failure from the ConfigMap); `running` or other: exit 1.
 * Every ConfigMap carries the labels `dgdr.nvidia.com/name`, `dgdr.nvidia.com/namespace`,
 * `nvidia.com/managed-by: dynamo-operator` and a controller owner reference to the DGDR.
 * Ours (issue 20): before each write, a ConfigMap of that name that exists and is not controlled by
 * the DGDR's uid is left untouched and the script exits 1 naming it (the function reads only what
 * the request controls; `kubectl apply` would otherwise merge into it).
 * `profiler_error` keeps only the first line of a folded YAML `error:` (as upstream); the function
 * reads the whole error from the `profiler_status.yaml` key instead (profiler.md §1.3 "Pitfall").
 * @module
 */

/** What the script is rendered for. */
export interface OutputCopierParams {
  readonly configMapName: string;
  readonly namespace: string;
  readonly dgdrName: string;
  readonly dgdrUid: string;
  /** The profiler's output directory (`/data`). */
  readonly outputPath: string;
}

/** Single-quotes a value for POSIX sh. Pure. */
function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'"'"'`)}'`;
}

/**
 * Renders the sidecar's `/bin/sh -c` script.
 * In: names and the output path. Out: the script text (deterministic). Pure.
 */
export function renderOutputCopierScript(params: OutputCopierParams): string {
  const header = [
    `CM_NAME=${shellQuote(params.configMapName)}`,
    `NAMESPACE=${shellQuote(params.namespace)}`,
    `DGDR_NAME=${shellQuote(params.dgdrName)}`,
    `DGDR_UID=${shellQuote(params.dgdrUid)}`,
    `OUT=${shellQuote(params.outputPath)}`,
  ].join('\n');
  return `set -e
set -o pipefail
${header}
STATUS_FILE="$OUT/profiler_status.yaml"
if ! command -v kubectl >/dev/null 2>&1; then
  echo "ERROR: kubectl not found in the output-copier image. The image set for the output-copier container through spec.overrides.profilingJob must contain kubectl." >&2
  exit 1
fi
indent() { sed 's/^/    /' "$1"; }
quote() { printf '%s' "$1" | tr -d '"' | tr -d "'"; }
write_cm() {
  # $1: the data block (already indented by two spaces)
  # Never write over a ConfigMap of that name this request does not control (issue 20): the function would not read it.
  FOUND=$(kubectl get configmap "$CM_NAME" -n "$NAMESPACE" --ignore-not-found -o jsonpath='{.metadata.name}/{.metadata.ownerReferences[?(@.controller==true)].uid}') || { echo "ERROR: cannot read ConfigMap $NAMESPACE/$CM_NAME" >&2; exit 1; }
  if [ -n "$FOUND" ] && [ "$FOUND" != "$CM_NAME/$DGDR_UID" ]; then
    echo "ERROR: ConfigMap $NAMESPACE/$CM_NAME exists and is not controlled by DynamoGraphDeploymentRequest $DGDR_NAME; it is left untouched" >&2
    exit 1
  fi
  cat <<CMEOF | kubectl apply -f -
apiVersion: v1
kind: ConfigMap
metadata:
  name: $CM_NAME
  namespace: $NAMESPACE
  labels:
    dgdr.nvidia.com/name: $DGDR_NAME
    dgdr.nvidia.com/namespace: $NAMESPACE
    nvidia.com/managed-by: dynamo-operator
  ownerReferences:
  - apiVersion: nvidia.com/v1beta1
    kind: DynamoGraphDeploymentRequest
    name: $DGDR_NAME
    uid: $DGDR_UID
    controller: true
    blockOwnerDeletion: true
data:
$1
CMEOF
}
read_key() { grep "^$1:" "$STATUS_FILE" 2>/dev/null | head -n 1 | sed "s/^$1: *//" | tr -d '"' | tr -d "'" || true; }
LAST_PHASE=""
relay_phase() {
  [ -f "$STATUS_FILE" ] || return 0
  PHASE=$(read_key phase)
  MESSAGE=$(read_key message)
  if [ -n "$PHASE" ] && [ "$PHASE" != "$LAST_PHASE" ]; then
    write_cm "  phase: \\"$PHASE\\"
  message: \\"$MESSAGE\\"" >/dev/null
    LAST_PHASE="$PHASE"
  fi
}
ELAPSED=0
while true; do
  STATE=$(kubectl get pod "$HOSTNAME" -n "$NAMESPACE" -o jsonpath='{.status.containerStatuses[?(@.name=="profiler")].state}' 2>/dev/null || true)
  case "$STATE" in *terminated*) break ;; esac
  relay_phase || true
  sleep 10
  ELAPSED=$((ELAPSED + 10))
  if [ $((ELAPSED % 300)) -eq 0 ]; then echo "Still waiting... ($((ELAPSED / 60)) minutes elapsed)"; fi
done
relay_phase || true
WAITED=0
while [ ! -f "$STATUS_FILE" ]; do
  if [ "$WAITED" -ge 120 ]; then echo "ERROR: Status file not found after 120s" >&2; exit 1; fi
  sleep 2
  WAITED=$((WAITED + 2))
done
STATUS=$(read_key status)
FINAL_PHASE=$(read_key phase)
FINAL_MESSAGE=$(read_key message)
STATUS_BLOCK="  profiler_status.yaml: |
$(indent "$STATUS_FILE")"
case "$STATUS" in
  success)
    write_cm "  phase: \\"$FINAL_PHASE\\"
  message: \\"$FINAL_MESSAGE\\"
  profiler_status: \\"success\\"
  final_config.yaml: |
$(indent "$OUT/final_config.yaml")
$STATUS_BLOCK"
    echo "Saved profiling output to ConfigMap $CM_NAME"
    exit 0 ;;
  failed)
    ERROR=$(read_key error)
    write_cm "  phase: \\"$FINAL_PHASE\\"
  message: \\"$FINAL_MESSAGE\\"
  profiler_status: \\"failed\\"
  profiler_error: \\"$(quote "\${ERROR:-$FINAL_MESSAGE}")\\"
$STATUS_BLOCK"
    echo "Saved profiler failure to ConfigMap $CM_NAME"
    exit 0 ;;
  running) echo "ERROR: Profiler still running (unexpected)" >&2; exit 1 ;;
  *) echo "ERROR: Unknown status: $STATUS" >&2; exit 1 ;;
esac
`;
}
