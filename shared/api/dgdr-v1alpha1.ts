/**
 * DynamoGraphDeploymentRequest `nvidia.com/v1alpha1` <-> `nvidia.com/v1beta1` (the hub): a pure
 * converter for the conversion webhook, on plain objects. v1alpha1 keeps SLA, workload and model
 * cache in the opaque `spec.profilingConfig.config` blob; v1beta1 has typed fields. Fields with
 * no counterpart round-trip through annotations, so a v1alpha1 object read back is the one written.
 *
 * Mapping (upstream deploy/operator/api/v1alpha1/dynamographdeploymentrequest_conversion.go, the
 * field table in its header; our code):
 * - `model`, `backend`, `autoApply` (v1alpha1 bool, default true) 1:1; `useMocker` <->
 *   `features.mocker.enabled`; `profilingConfig.profilerImage` (else `deploymentOverrides.workersImage`) -> `image`;
 * - blob `sla.{ttft,itl}` <-> `sla.{ttft,itl}`, blob `sla.{isl,osl}` <-> `workload.{isl,osl}`, blob
 *   `deployment.modelCache.{pvcName,modelPathInPvc,pvcMountPath}` <-> `modelCache.*`, blob `planner` <->
 *   `features.planner`; the whole blob kept in annotation `nvidia.com/dgdr-profiling-config`
 *   (structured v1beta1 fields win on the way back);
 * - `profilingConfig.resources` / `tolerations` <-> `overrides.profilingJob.template.spec.containers[0].resources` / `tolerations`;
 * - annotations for the rest: `enableGpuDiscovery`, `profilingConfig.configMapRef`, `profilingConfig.outputPVC`,
 *   `deploymentOverrides.{name,namespace,labels,annotations,workersImage}` (upstream drops workersImage), status `backend`, `profilingResults`, `deployment`;
 * - status: `state` <-> `phase` (`Ready` with a created deployment is `Deployed`; `DeploymentDeleted` reads
 *   as `Ready`; `Deployed` writes as `Ready`), `generatedDeployment` <-> `profilingResults.selectedConfig`,
 *   `deployment.name` <-> `dgdName`, conditions and observedGeneration 1:1; `profilingJobName` in an annotation;
 * - the whole v1beta1 spec in annotation `nvidia.com/dgdr-spec` while read as v1alpha1; back in v1beta1 it is
 *   the base the v1alpha1 fields are written over.
 * @module
 */
import { DGDR_KIND, DGDR_V1ALPHA1, DGDR_V1BETA1 } from './dgdr.js';
import { DGDR_V1BETA2 } from './dgdr-v1beta2.js';
import { convertDgdrV1Beta1ToV1Beta2, convertDgdrV1Beta2ToV1Beta1, convertDgdrV1Beta2ViewBetweenV1Alpha1AndV1Beta1, isDgdrV1Beta2View } from './dgdr-v1beta2-conversion.js';

type Obj = Record<string, unknown>;

export const ANNOTATION_DGDR_PROFILING_CONFIG = 'nvidia.com/dgdr-profiling-config';
export const ANNOTATION_DGDR_CONFIG_MAP_REF = 'nvidia.com/dgdr-config-map-ref';
export const ANNOTATION_DGDR_OUTPUT_PVC = 'nvidia.com/dgdr-output-pvc';
export const ANNOTATION_DGDR_ENABLE_GPU_DISCOVERY = 'nvidia.com/dgdr-enable-gpu-discovery';
export const ANNOTATION_DGDR_DEPLOYMENT_OVERRIDES = 'nvidia.com/dgdr-deployment-overrides';
export const ANNOTATION_DGDR_STATUS_BACKEND = 'nvidia.com/dgdr-status-backend';
export const ANNOTATION_DGDR_PROFILING_RESULTS = 'nvidia.com/dgdr-profiling-results';
export const ANNOTATION_DGDR_DEPLOYMENT_STATUS = 'nvidia.com/dgdr-deployment-status';
export const ANNOTATION_DGDR_PROFILING_JOB_NAME = 'nvidia.com/dgdr-profiling-job-name';
/** The whole v1beta1 spec, kept while an object is read as v1alpha1, so v1beta1-only fields (hardware, searchStrategy, ...) survive a v1alpha1 write-back (upstream's structural preservation annotation, upstream-notes/dgdr.md §2.1). */
export const ANNOTATION_DGDR_SPEC = 'nvidia.com/dgdr-spec';

export type DgdrConversionResult = { readonly ok: true; readonly object: Obj } | { readonly ok: false; readonly message: string };

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
const obj = (value: unknown): Obj => (isObj(value) ? value : {});
const str = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** Drops undefined members and empty objects, so converted objects carry no empty stubs. */
function compact(value: Obj): Obj {
  const out: Obj = {};
  for (const [key, member] of Object.entries(value)) {
    if (member === undefined) continue;
    if (isObj(member) && Object.keys(member).length === 0) continue;
    out[key] = member;
  }
  return out;
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** v1alpha1 `state` -> v1beta1 `phase` (upstream `dgdrStateToPhase`). Pure. */
export function dgdrStateToPhase(state: unknown, deployment: unknown): string {
  switch (state) {
    case 'Profiling':
      return 'Profiling';
    case 'Ready':
      return obj(deployment)['created'] === true ? 'Deployed' : 'Ready';
    case 'Deploying':
      return 'Deploying';
    case 'DeploymentDeleted':
      return 'Ready';
    case 'Failed':
      return 'Failed';
    default:
      return 'Pending';
  }
}

/** v1beta1 `phase` -> v1alpha1 `state` (upstream `dgdrPhaseToState`; Deployed is lossy as Ready). Pure. */
export function dgdrPhaseToState(phase: unknown): string {
  switch (phase) {
    case 'Profiling':
    case 'Ready':
    case 'Deploying':
    case 'Failed':
      return phase;
    case 'Deployed':
      return 'Ready';
    default:
      return 'Pending';
  }
}

/** A v1alpha1 DGDR to v1beta1. Failures: a `profilingConfig.config` that is not an object. Pure. */
export function convertDgdrToV1Beta1(alpha: Readonly<Obj>): DgdrConversionResult {
  const spec = obj(alpha['spec']);
  const profiling = obj(spec['profilingConfig']);
  const overrides = obj(spec['deploymentOverrides']);
  const metadata = structuredClone(obj(alpha['metadata']));
  const annotations: Record<string, string> = { ...(obj(metadata['annotations']) as Record<string, string>) };
  const blobValue = profiling['config'];
  if (blobValue !== undefined && !isObj(blobValue)) return { ok: false, message: 'spec.profilingConfig.config: Invalid value: must be an object' };
  const blob = obj(blobValue);
  const sla = obj(blob['sla']);
  const cache = obj(obj(blob['deployment'])['modelCache']);
  const planner = blob['planner'];
  const isNativeV1Beta1 = annotations[ANNOTATION_DGDR_SPEC] !== undefined && annotations[ANNOTATION_DGDR_PROFILING_CONFIG] === undefined;
  // A request written in v1alpha1 keeps its whole blob; one written in v1beta1 rebuilds it from its typed fields.
  if (blobValue !== undefined && !isNativeV1Beta1) annotations[ANNOTATION_DGDR_PROFILING_CONFIG] = JSON.stringify(blobValue);
  if (spec['enableGpuDiscovery'] === true) annotations[ANNOTATION_DGDR_ENABLE_GPU_DISCOVERY] = 'true';
  if (isObj(profiling['configMapRef'])) annotations[ANNOTATION_DGDR_CONFIG_MAP_REF] = JSON.stringify(profiling['configMapRef']);
  if (str(profiling['outputPVC']) !== undefined) annotations[ANNOTATION_DGDR_OUTPUT_PVC] = String(profiling['outputPVC']);
  // workersImage has no v1beta1 field (upstream drops it); it is kept here with the other overrides.
  const deploymentOverrides = compact({ name: str(overrides['name']), namespace: str(overrides['namespace']), labels: overrides['labels'], annotations: overrides['annotations'], workersImage: str(overrides['workersImage']) });
  if (Object.keys(deploymentOverrides).length > 0) annotations[ANNOTATION_DGDR_DEPLOYMENT_OVERRIDES] = JSON.stringify(deploymentOverrides);
  const resources = isObj(profiling['resources']) ? profiling['resources'] : undefined;
  const tolerations = Array.isArray(profiling['tolerations']) && profiling['tolerations'].length > 0 ? profiling['tolerations'] : undefined;
  const podSpec = compact({ containers: resources === undefined ? undefined : [{ name: '', resources }], tolerations });
  const preserved = obj(parseJson(annotations[ANNOTATION_DGDR_SPEC]));
  delete annotations[ANNOTATION_DGDR_SPEC];
  const beta: Obj = compact({
    ...preserved,
    model: spec['model'],
    backend: str(spec['backend']),
    image: str(profiling['profilerImage']) ?? str(overrides['workersImage']),
    autoApply: typeof spec['autoApply'] === 'boolean' ? spec['autoApply'] : false,
    workload: compact({ ...obj(preserved['workload']), isl: num(sla['isl']), osl: num(sla['osl']) }),
    sla: compact({ ...obj(preserved['sla']), ttft: num(sla['ttft']), itl: num(sla['itl']) }),
    modelCache: compact({ pvcName: str(cache['pvcName']), pvcModelPath: str(cache['modelPathInPvc']), pvcMountPath: str(cache['pvcMountPath']) }),
    features: compact({ ...obj(preserved['features']), planner: isObj(planner) && Object.keys(planner).length > 0 ? planner : undefined, mocker: spec['useMocker'] === true ? { enabled: true } : undefined }),
    overrides: Object.keys(podSpec).length === 0 ? preserved['overrides'] : compact({ ...obj(preserved['overrides']), profilingJob: { template: { spec: podSpec } } }),
  });
  const status = obj(alpha['status']);
  const deployment = status['deployment'];
  if (str(status['backend']) !== undefined) annotations[ANNOTATION_DGDR_STATUS_BACKEND] = String(status['backend']);
  if (str(status['profilingResults']) !== undefined) annotations[ANNOTATION_DGDR_PROFILING_RESULTS] = String(status['profilingResults']);
  if (isObj(deployment)) annotations[ANNOTATION_DGDR_DEPLOYMENT_STATUS] = JSON.stringify(deployment);
  const betaStatus = alpha['status'] === undefined ? undefined : compact({
    phase: dgdrStateToPhase(status['state'], deployment),
    observedGeneration: status['observedGeneration'],
    conditions: status['conditions'],
    profilingResults: isObj(status['generatedDeployment']) ? { selectedConfig: status['generatedDeployment'] } : undefined,
    dgdName: str(obj(deployment)['name']),
    profilingJobName: annotations[ANNOTATION_DGDR_PROFILING_JOB_NAME],
  });
  const { [ANNOTATION_DGDR_PROFILING_JOB_NAME]: _jobName, ...kept } = annotations;
  const outMetadata = compact({ ...metadata, annotations: Object.keys(kept).length === 0 ? undefined : kept });
  return { ok: true, object: compact({ apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, metadata: outMetadata, spec: beta, status: betaStatus }) };
}

/** A v1beta1 DGDR to v1alpha1 (the stored annotations restore what v1beta1 cannot say). Pure. */
export function convertDgdrToV1Alpha1(beta: Readonly<Obj>): DgdrConversionResult {
  const spec = obj(beta['spec']);
  const metadata = structuredClone(obj(beta['metadata']));
  const annotations: Record<string, string> = { ...(obj(metadata['annotations']) as Record<string, string>) };
  const take = (key: string): string | undefined => {
    const value = annotations[key];
    delete annotations[key];
    return value;
  };
  // Kept (not taken) on the v1alpha1 object: it says the request was written in v1alpha1, so its blob is kept on the way back.
  const blob = obj(parseJson(annotations[ANNOTATION_DGDR_PROFILING_CONFIG]));
  const sla = obj(spec['sla']);
  const workload = obj(spec['workload']);
  if (spec['sla'] !== undefined || spec['workload'] !== undefined) {
    blob['sla'] = compact({ ...obj(blob['sla']), ttft: num(sla['ttft']) ?? obj(blob['sla'])['ttft'], itl: num(sla['itl']) ?? obj(blob['sla'])['itl'], isl: num(workload['isl']) ?? obj(blob['sla'])['isl'], osl: num(workload['osl']) ?? obj(blob['sla'])['osl'] });
  }
  const cache = obj(spec['modelCache']);
  const cacheBlob = compact({ pvcName: str(cache['pvcName']), modelPathInPvc: str(cache['pvcModelPath']), pvcMountPath: str(cache['pvcMountPath']) });
  // Merged over the stored blob, so keys v1beta1 has no field for (older spellings) survive.
  if (Object.keys(cacheBlob).length > 0) blob['deployment'] = { ...obj(blob['deployment']), modelCache: { ...obj(obj(blob['deployment'])['modelCache']), ...cacheBlob } };
  const features = obj(spec['features']);
  if (isObj(features['planner']) && Object.keys(features['planner']).length > 0) blob['planner'] = features['planner'];
  const podSpec = obj(obj(obj(obj(spec['overrides'])['profilingJob'])['template'])['spec']);
  const firstContainer = Array.isArray(podSpec['containers']) ? obj(podSpec['containers'][0]) : {};
  const resources = obj(firstContainer['resources']);
  const hasResources = Object.keys(obj(resources['requests'])).length > 0 || Object.keys(obj(resources['limits'])).length > 0;
  const deploymentOverrides = obj(parseJson(take(ANNOTATION_DGDR_DEPLOYMENT_OVERRIDES)));
  const configMapRef = parseJson(take(ANNOTATION_DGDR_CONFIG_MAP_REF));
  const outputPvc = take(ANNOTATION_DGDR_OUTPUT_PVC);
  const enableGpuDiscovery = take(ANNOTATION_DGDR_ENABLE_GPU_DISCOVERY) === 'true' ? true : undefined;
  const alphaSpec = compact({
    model: spec['model'],
    backend: str(spec['backend']),
    enableGpuDiscovery,
    useMocker: obj(features['mocker'])['enabled'] === true ? true : undefined,
    autoApply: spec['autoApply'] === false ? false : true,
    profilingConfig: compact({
      profilerImage: str(spec['image']),
      config: Object.keys(blob).length === 0 ? undefined : blob,
      configMapRef: isObj(configMapRef) ? configMapRef : undefined,
      outputPVC: outputPvc,
      resources: hasResources ? resources : undefined,
      tolerations: Array.isArray(podSpec['tolerations']) && podSpec['tolerations'].length > 0 ? podSpec['tolerations'] : undefined,
    }),
    deploymentOverrides: compact({ ...deploymentOverrides }),
  });
  const status = obj(beta['status']);
  const backend = take(ANNOTATION_DGDR_STATUS_BACKEND);
  const profilingResults = take(ANNOTATION_DGDR_PROFILING_RESULTS);
  const deploymentStatus = parseJson(take(ANNOTATION_DGDR_DEPLOYMENT_STATUS));
  if (str(status['profilingJobName']) !== undefined) annotations[ANNOTATION_DGDR_PROFILING_JOB_NAME] = String(status['profilingJobName']);
  annotations[ANNOTATION_DGDR_SPEC] = JSON.stringify(spec);
  const deployment = isObj(deploymentStatus) ? deploymentStatus : str(status['dgdName']) === undefined ? undefined : { name: status['dgdName'], created: false };
  const alphaStatus = beta['status'] === undefined ? undefined : compact({
    state: dgdrPhaseToState(status['phase']),
    observedGeneration: status['observedGeneration'],
    conditions: status['conditions'],
    backend,
    profilingResults,
    generatedDeployment: obj(status['profilingResults'])['selectedConfig'],
    deployment,
  });
  const outMetadata = compact({ ...metadata, annotations: Object.keys(annotations).length === 0 ? undefined : annotations });
  return { ok: true, object: compact({ apiVersion: DGDR_V1ALPHA1, kind: DGDR_KIND, metadata: outMetadata, spec: alphaSpec, status: alphaStatus }) };
}

/**
 * Converts a DGDR of any served version (v1alpha1, v1beta1, v1beta2) to `desiredApiVersion`
 * (same version: unchanged); v1beta2 goes through the v1beta1 hub and its conversion views.
 * Failures: an unsupported version on either side; a mixed view (./dgdr-v1beta2-conversion.ts). Pure.
 */
export function convertDgdr(object: Readonly<Obj>, desiredApiVersion: string): DgdrConversionResult {
  const from = object['apiVersion'];
  if (from === desiredApiVersion) return { ok: true, object: structuredClone(object) as Obj };
  // v1beta2 converts through the v1beta1 hub (./dgdr-v1beta2-conversion.ts, reference "Conversion views").
  if (from === DGDR_V1BETA2) {
    const hub = convertDgdrV1Beta2ToV1Beta1(object);
    return !hub.ok || desiredApiVersion === DGDR_V1BETA1 ? hub : convertDgdr(hub.object, desiredApiVersion);
  }
  if (desiredApiVersion === DGDR_V1BETA2) {
    const hub = from === DGDR_V1BETA1 ? { ok: true as const, object } : convertDgdr(object, DGDR_V1BETA1);
    return hub.ok ? convertDgdrV1Beta1ToV1Beta2(hub.object) : hub;
  }
  // A native v1beta2 request's spec.v1beta2 view has no v1alpha1 counterpart: it is carried as is.
  if ((from === DGDR_V1ALPHA1 || from === DGDR_V1BETA1) && (desiredApiVersion === DGDR_V1ALPHA1 || desiredApiVersion === DGDR_V1BETA1) && isDgdrV1Beta2View(object)) {
    return convertDgdrV1Beta2ViewBetweenV1Alpha1AndV1Beta1(object, desiredApiVersion);
  }
  if (from === DGDR_V1ALPHA1 && desiredApiVersion === DGDR_V1BETA1) return convertDgdrToV1Beta1(object);
  if (from === DGDR_V1BETA1 && desiredApiVersion === DGDR_V1ALPHA1) return convertDgdrToV1Alpha1(object);
  return { ok: false, message: `cannot convert ${DGDR_KIND} from ${String(from)} to ${desiredApiVersion}: supported versions are ${DGDR_V1BETA1}, ${DGDR_V1ALPHA1} and ${DGDR_V1BETA2}` };
}
