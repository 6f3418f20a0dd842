/**
 * How a Run's Job hands AISimulate's results to the publisher: the Job's output step. After
 * `aisimulate recommend` exits 0, the same container runs a short Python program (the Dynamo
 * image ships the `kubernetes` client: `ai-dynamo` requires it) that writes
 * `<output-dir>/recommendation.json`, reduced to what the publisher reads, into the ConfigMap
 * `<run>-aisimulate-output` (key `recommendation.json`), labelled `nvidia.com/dgdr-run-uid` and controller-owned by the Run, so
 * it goes with the Run. The publisher reads it once the Job completed.
 *
 * Why this shape: upstream's v1beta1 profiling Job relays its results the same way, into the
 * ConfigMap `dgdr-output-<name>` through its `output-copier` sidecar (upstream-notes/profiler.md
 * §1.3); upstream's v1beta2 Job has a publisher sidecar with API access (profiler.md §4). Here the
 * step runs after AISimulate in one container instead of a sidecar that polls the pod, so it
 * needs neither `kubectl` nor read access to pods, and it runs only when AISimulate succeeded:
 * an AISimulate failure fails the Job (and the Run, `JobFailed`) with nothing written. The pod
 * runs as the `dgdr-profiling-job` ServiceAccount, whose role may write ConfigMaps.
 *
 * Never over another's object: a ConfigMap of that name that the Run does not control makes the
 * step fail (the Job fails), and the publisher ignores it. No I/O here.
 * @module
 */
import { LABEL_DGDR_RUN_UID, RUN_OUTPUT_CONFIGMAP_SUFFIX, RUN_OUTPUT_RECOMMENDATION_KEY } from '../../api/index.js';
import { shortenName } from '../dgd/names.js';
import { controllerUidOf } from './observed.js';

/** The env vars the output step reads (set on the AISimulate container by renderRunJob). */
export const ENV_RUN_NAME = 'RUN_NAME';
export const ENV_RUN_UID = 'RUN_UID';
/** From the downward API (`metadata.namespace`). */
export const ENV_POD_NAMESPACE = 'POD_NAMESPACE';
export const ENV_RUN_OUTPUT_CONFIGMAP = 'RUN_OUTPUT_CONFIGMAP';
export const ENV_RUN_OUTPUT_DIR = 'RUN_OUTPUT_DIR';
/** The output step's Python source, run as `python3 -c "$RUN_OUTPUT_STEP"`. */
export const ENV_RUN_OUTPUT_STEP = 'RUN_OUTPUT_STEP';

/** ConfigMap names are DNS subdomains: at most 253 characters (apimachinery `DNS1123SubdomainMaxLength`). */
const MAX_NAME_LENGTH = 253;

/** The Run's results ConfigMap: `<run>-aisimulate-output`, shortened with a hash to 253 characters. Pure. */
export function runOutputConfigMapName(runName: string): string {
  return shortenName(`${runName}${RUN_OUTPUT_CONFIGMAP_SUFFIX}`, MAX_NAME_LENGTH);
}

/**
 * The output step's Python program. It reads `$RUN_OUTPUT_DIR/recommendation.json`, keeps what
 * the publisher reads (`schema_version`, `views`, `counts`, and per feasible candidate
 * `candidate_id`, `status`, the scalar `config` fields, `metrics`, `used_gpus`, `score`: a full
 * file outgrows a ConfigMap's 1 MiB within a few dozen candidates), and creates the ConfigMap
 * `$RUN_OUTPUT_CONFIGMAP` in `$POD_NAMESPACE` with it as compact JSON under
 * `recommendation.json`, the label `nvidia.com/dgdr-run-uid: $RUN_UID` and a controller owner
 * reference to the Run (`$RUN_NAME`, `$RUN_UID`); when it exists and the Run controls it (a
 * retried pod), replaces it; when it exists and the Run does not, exits 1 naming it. Credentials:
 * the pod's ServiceAccount, else `$KUBECONFIG` (a run outside a cluster). Errors go to stderr as
 * one `ERROR:` line with exit 1 (the pod's termination message is the log's tail).
 * Out: the program text (deterministic). Pure.
 */
export function renderRunOutputStep(): string {
  return `import json, os, sys
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from kubernetes.config.config_exception import ConfigException

def fail(message):
    print("ERROR: " + message, file=sys.stderr)
    sys.exit(1)

run_name = os.environ["${ENV_RUN_NAME}"]
run_uid = os.environ["${ENV_RUN_UID}"]
namespace = os.environ["${ENV_POD_NAMESPACE}"]
name = os.environ["${ENV_RUN_OUTPUT_CONFIGMAP}"]
path = os.path.join(os.environ["${ENV_RUN_OUTPUT_DIR}"], "${RUN_OUTPUT_RECOMMENDATION_KEY}")
try:
    with open(path, encoding="utf-8") as f:
        recommendation = json.load(f)
except (OSError, ValueError) as e:
    fail("cannot read %s: %s" % (path, e))
# Only what the publisher reads: a full recommendation.json (~25 KB per candidate) outgrows a
# ConfigMap's 1 MiB within a few dozen candidates.
def reduce(c):
    config = {k: v for k, v in (c.get("config") or {}).items() if not isinstance(v, (dict, list))}
    return {k: v for k, v in {"candidate_id": c.get("candidate_id"), "status": c.get("status"), "config": config, "metrics": c.get("metrics"), "used_gpus": c.get("used_gpus"), "score": c.get("score")}.items() if v is not None}
text = json.dumps({
    "schema_version": recommendation.get("schema_version"),
    "views": recommendation.get("views"),
    "counts": recommendation.get("counts"),
    "candidates": [reduce(c) for c in recommendation.get("candidates") or [] if c.get("status") == "feasible"],
}, separators=(",", ":"))
try:
    config.load_incluster_config()
except ConfigException:
    config.load_kube_config()
body = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {
        "name": name,
        "namespace": namespace,
        "labels": {"${LABEL_DGDR_RUN_UID}": run_uid},
        "ownerReferences": [{"apiVersion": "nvidia.com/v1beta2", "kind": "DynamoGraphDeploymentRun", "name": run_name, "uid": run_uid, "controller": True, "blockOwnerDeletion": True}],
    },
    "data": {"${RUN_OUTPUT_RECOMMENDATION_KEY}": text},
}
api = client.CoreV1Api()
try:
    try:
        api.create_namespaced_config_map(namespace, body)
    except ApiException as e:
        if e.status != 409:
            raise
        existing = api.read_namespaced_config_map(name, namespace)
        owners = existing.metadata.owner_references or []
        if not any(o.controller and o.uid == run_uid for o in owners):
            fail("ConfigMap %s/%s exists and is not controlled by DynamoGraphDeploymentRun %s; it is left untouched" % (namespace, name, run_name))
        body["metadata"]["resourceVersion"] = existing.metadata.resource_version
        api.replace_namespaced_config_map(name, namespace, body)
except ApiException as e:
    fail("cannot write ConfigMap %s/%s: HTTP %s: %s" % (namespace, name, e.status, e.reason))
print("Saved %s to ConfigMap %s/%s" % ("${RUN_OUTPUT_RECOMMENDATION_KEY}", namespace, name))
`;
}

/** What the publisher found of the Job's results. */
export type RunOutput =
  | { readonly kind: 'Missing' }
  /** A ConfigMap of that name the Run does not control: never read (DESIGN.md "Writes", never adopt). */
  | { readonly kind: 'NotOurs' }
  | { readonly kind: 'Found'; readonly recommendationJson: string };

/**
 * Reads the results ConfigMap: `recommendation.json` when the ConfigMap exists, is controlled
 * by the Run (`runUid`) and has the key; else Missing or NotOurs. Pure.
 */
export function readRunOutput(configMap: Readonly<Record<string, unknown>> | undefined, runUid: string): RunOutput {
  if (configMap === undefined) return { kind: 'Missing' };
  if (controllerUidOf(configMap) !== runUid) return { kind: 'NotOurs' };
  const data = configMap['data'];
  const text = typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[RUN_OUTPUT_RECOMMENDATION_KEY] : undefined;
  return typeof text === 'string' ? { kind: 'Found', recommendationJson: text } : { kind: 'Missing' };
}
