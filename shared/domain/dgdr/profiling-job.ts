/**
 * The profiling Job: exactly the upstream operator <-> Job contract, so the stock
 * `dynamo-planner:<version>` image runs unchanged, then `spec.overrides.profilingJob` merged by
 * upstream's allow-list, then the output-copier API-access fix, then the override tool.
 *
 * Source: ../shared/upstream-notes/profiler.md §1.1-§1.4 (every name and value below);
 * dgdr.md §2.1-§2.2; upstream deploy/operator/internal/controller/dynamographdeploymentrequest_controller.go
 * `createProfilingJob` and profiling_job_overrides.go; dgdr-reference "Overrides" (profilingJob),
 * "Lifecycle" (backoffLimit: 0).
 * @module
 */
import {
  DGDR_KIND,
  DGDR_V1BETA1,
  LABEL_APP,
  LABEL_DGDR,
  LABEL_DGDR_NAME,
  LABEL_DGDR_NAMESPACE,
  LABEL_MANAGED_BY,
  LABEL_VALUE_DYNAMO_OPERATOR,
  LABEL_VALUE_DYNAMO_PROFILER,
  type Dgdr,
  type DgdrSpec,
} from '../../api/index.js';
import { isObject } from '../admission/common.js';
import { DGDR_DEFAULTS } from './admission.js';
import { renderOutputCopierScript } from './output-copier.js';

export const PROFILER_CONTAINER = 'profiler';
export const OUTPUT_COPIER_CONTAINER = 'output-copier';
export const OUTPUT_COPIER_IMAGE = 'bitnami/kubectl:latest';
export const PROFILING_SERVICE_ACCOUNT = 'dgdr-profiling-job';
export const IMAGE_PULL_SECRET = 'nvcr-imagepullsecret';
export const HF_TOKEN_SECRET = 'hf-token-secret';
export const PROFILING_OUTPUT_VOLUME = 'profiling-output';
export const PROFILING_OUTPUT_PATH = '/data';
export const MODEL_CACHE_VOLUME = 'model-cache';
export const OVERRIDE_TOOL_VOLUME = 'dgd-override-tool';
export const OVERRIDE_TOOL_INSTALLER = 'dgd-override-installer';
export const OVERRIDE_TOOL_DIR = '/opt/dynamo/bin';
export const OVERRIDE_TOOL_PATH = '/opt/dynamo/bin/dgd-apply-overrides';
export const OUTPUT_COPIER_API_ACCESS_VOLUME = 'output-copier-kube-api-access';
/** Pod-template label keys an override may not change (upstream-notes/dgdr.md §2.2). */
export const PROTECTED_POD_LABELS: readonly string[] = [LABEL_APP, LABEL_DGDR, LABEL_DGDR_NAME, LABEL_DGDR_NAMESPACE, LABEL_MANAGED_BY];

/** `profile-<dgdrName>` (upstream `getProfilingJobName`). Pure. */
export function profilingJobName(dgdrName: string): string {
  return `profile-${dgdrName}`;
}

/** `dgdr-output-<dgdrName>`: the ConfigMap the output-copier writes (upstream-notes/profiler.md §1.3). Pure. */
export function outputConfigMapName(dgdrName: string): string {
  return `dgdr-output-${dgdrName}`;
}

/** What the Job needs besides the DGDR. */
export interface ProfilingJobConfig {
  /** The image carrying `/dgd-apply-overrides` (our operator image); required when `spec.overrides.dgd` is set. */
  readonly operatorImage: string | undefined;
  /** Endpoints added to the profiler's env when configured (upstream `AddStandardEnvVars`). */
  readonly standardEnv: readonly { readonly name: string; readonly value: string }[];
}

export type ProfilingJobResult = { readonly ok: true; readonly job: Record<string, unknown> } | { readonly ok: false; readonly message: string };

type Obj = Record<string, unknown>;

/**
 * Builds the profiling Job for a DGDR whose spec has been defaulted and enriched with hardware.
 * In: the DGDR (metadata.name, namespace, uid; the whole spec), the config.
 * Out: the Job (batch/v1) to create: name `profile-<dgdr>`, labels `app: dynamo-profiler`,
 * `dgdr: <dgdr>`, `nvidia.com/managed-by: dynamo-operator`, a controller owner reference to the
 * DGDR, `backoffLimit: 0`, pod `serviceAccountName: dgdr-profiling-job`, `restartPolicy: Never`,
 * security context 1000/1000/1000 non-root, pull secret `nvcr-imagepullsecret`; containers
 * `profiler` (`python -m dynamo.profiler --config <spec JSON> --output-dir /data`, working dir
 * `/workspace`, env HUGGING_FACE_HUB_TOKEN from `hf-token-secret`/HF_TOKEN, DGDR_NAME, DGDR_NAMESPACE,
 * DGDR_UID) and `output-copier`; volumes `profiling-output` (emptyDir) and `model-cache` (PVC,
 * read-only) when set.
 * Failures: `{ ok: false }` with upstream's messages when `spec.image` is empty, or when
 * `spec.overrides.dgd` is set and no operator image is configured.
 * Source: upstream-notes/profiler.md §1.1-§1.4. Pure.
 * @example
 * const result = buildProfilingJob(dgdr, { operatorImage: undefined, standardEnv: [] });
 */
export function buildProfilingJob(dgdr: Dgdr, config: ProfilingJobConfig): ProfilingJobResult {
  const name = dgdr.metadata.name ?? '';
  const namespace = dgdr.metadata.namespace ?? '';
  const uid = dgdr.metadata.uid ?? '';
  const spec = dgdr.spec;
  if (spec.image === undefined || spec.image === '') {
    return { ok: false, message: 'spec.image is required but not set; ensure the defaulting webhook ran or set spec.image explicitly' };
  }
  const profiler: Obj = {
    name: PROFILER_CONTAINER,
    image: spec.image,
    command: ['python', '-m', 'dynamo.profiler'],
    args: ['--config', JSON.stringify(spec), '--output-dir', PROFILING_OUTPUT_PATH],
    workingDir: '/workspace',
    env: [
      { name: 'HUGGING_FACE_HUB_TOKEN', valueFrom: { secretKeyRef: { name: HF_TOKEN_SECRET, key: 'HF_TOKEN' } } },
      { name: 'DGDR_NAME', value: name },
      { name: 'DGDR_NAMESPACE', value: namespace },
      { name: 'DGDR_UID', value: uid },
      ...config.standardEnv.map((e) => ({ name: e.name, value: e.value })),
    ],
    volumeMounts: [{ name: PROFILING_OUTPUT_VOLUME, mountPath: PROFILING_OUTPUT_PATH }, ...modelCacheMounts(spec)],
  };
  const outputCopier: Obj = {
    name: OUTPUT_COPIER_CONTAINER,
    image: OUTPUT_COPIER_IMAGE,
    command: ['/bin/sh', '-c'],
    args: [renderOutputCopierScript({ configMapName: outputConfigMapName(name), namespace, dgdrName: name, dgdrUid: uid, outputPath: PROFILING_OUTPUT_PATH })],
    volumeMounts: [{ name: PROFILING_OUTPUT_VOLUME, mountPath: PROFILING_OUTPUT_PATH, readOnly: true }],
    // Ours (issue 20): the script's own error (e.g. no kubectl in an overridden image) becomes the
    // container's termination message, so the request's failure names it.
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
  const podSpec: Obj = {
    serviceAccountName: PROFILING_SERVICE_ACCOUNT,
    restartPolicy: 'Never',
    securityContext: { runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 },
    imagePullSecrets: [{ name: IMAGE_PULL_SECRET }],
    containers: [profiler, outputCopier],
    volumes: [{ name: PROFILING_OUTPUT_VOLUME, emptyDir: {} }, ...modelCacheVolumes(spec)],
  };
  const template: Obj = { spec: podSpec };
  const jobSpec: Obj = { backoffLimit: 0, template };
  applyProfilingJobOverrides(jobSpec, spec.overrides?.profilingJob);
  ensureOutputCopierKubeApiAccess(podSpec);
  if (spec.overrides?.dgd !== undefined) {
    if (config.operatorImage === undefined || config.operatorImage === '') return { ok: false, message: 'operator image must be configured when a DGD override is present' };
    ensureDgdOverrideTool(podSpec, config.operatorImage);
  }
  return {
    ok: true,
    job: {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: profilingJobName(name),
        namespace,
        labels: { [LABEL_APP]: LABEL_VALUE_DYNAMO_PROFILER, [LABEL_DGDR]: name, [LABEL_MANAGED_BY]: LABEL_VALUE_DYNAMO_OPERATOR },
        ownerReferences: [{ apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, name, uid, controller: true, blockOwnerDeletion: true }],
      },
      spec: jobSpec,
    },
  };
}

function modelCacheMounts(spec: DgdrSpec): Obj[] {
  const cache = spec.modelCache;
  if (cache?.pvcName === undefined || cache.pvcName === '') return [];
  return [{ name: MODEL_CACHE_VOLUME, mountPath: cache.pvcMountPath ?? DGDR_DEFAULTS.pvcMountPath, readOnly: true }];
}

function modelCacheVolumes(spec: DgdrSpec): Obj[] {
  const cache = spec.modelCache;
  if (cache?.pvcName === undefined || cache.pvcName === '') return [];
  return [{ name: MODEL_CACHE_VOLUME, persistentVolumeClaim: { claimName: cache.pvcName, readOnly: true } }];
}

const JOB_SCALARS = ['backoffLimit', 'activeDeadlineSeconds', 'ttlSecondsAfterFinished', 'completions', 'parallelism', 'suspend'] as const;
const POD_REPLACED_WHEN_NON_EMPTY = ['tolerations', 'nodeSelector', 'topologySpreadConstraints'] as const;
const POD_REPLACED_WHEN_SET = ['affinity', 'priorityClassName', 'serviceAccountName', 'runtimeClassName', 'dnsPolicy', 'dnsConfig', 'terminationGracePeriodSeconds', 'automountServiceAccountToken'] as const;

function isNonEmpty(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isObject(value)) return Object.keys(value).length > 0;
  return value !== undefined && value !== null;
}

/** Merges named entries: the same name replaces in place, new names are appended (base order kept). */
function mergeByName(base: unknown, override: unknown): Obj[] {
  const out = Array.isArray(base) ? (base as Obj[]).map((e) => ({ ...e })) : [];
  if (!Array.isArray(override)) return out;
  for (const entry of override as unknown[]) {
    if (!isObject(entry)) continue;
    const index = out.findIndex((e) => e['name'] === entry['name']);
    if (index === -1) out.push(structuredClone(entry));
    else out[index] = structuredClone(entry);
  }
  return out;
}

/**
 * Merges `spec.overrides.profilingJob` (a batch/v1 JobSpec) into the Job spec, in place, by
 * upstream's allow-list: JobSpec scalars replaced; pod labels merged except the protected keys;
 * annotations merged; tolerations/nodeSelector/topologySpreadConstraints replaced when non-empty;
 * affinity, priorityClassName, serviceAccountName, runtimeClassName, dnsPolicy, dnsConfig,
 * terminationGracePeriodSeconds, automountServiceAccountToken replaced when set; imagePullSecrets
 * unioned by name (generated first); securityContext merged field by field; volumes and
 * initContainers merged by name; the `profiler` container (or the first unnamed entry) gets image,
 * resources and securityContext replaced, env and volumeMounts merged by name, envFrom appended;
 * `output-copier` may change only image and resources. Everything else is ignored.
 * Source: upstream-notes/dgdr.md §2.2 (profiling_job_overrides.go `applyProfilingJobOverrides`).
 */
export function applyProfilingJobOverrides(jobSpec: Obj, override: Readonly<Obj> | undefined): void {
  if (override === undefined) return;
  for (const key of JOB_SCALARS) if (override[key] !== undefined && override[key] !== null) jobSpec[key] = override[key];
  const template = jobSpec['template'] as Obj;
  const podSpec = template['spec'] as Obj;
  const overrideTemplate = isObject(override['template']) ? override['template'] : {};
  const overrideMeta = isObject(overrideTemplate['metadata']) ? overrideTemplate['metadata'] : {};
  if (isObject(overrideMeta['labels'])) {
    const labels = Object.fromEntries(Object.entries(overrideMeta['labels']).filter(([k]) => !PROTECTED_POD_LABELS.includes(k)));
    if (Object.keys(labels).length > 0) template['metadata'] = { ...(template['metadata'] as Obj | undefined), labels: { ...((template['metadata'] as Obj | undefined)?.['labels'] as Obj | undefined), ...labels } };
  }
  if (isObject(overrideMeta['annotations'])) {
    template['metadata'] = { ...(template['metadata'] as Obj | undefined), annotations: { ...((template['metadata'] as Obj | undefined)?.['annotations'] as Obj | undefined), ...overrideMeta['annotations'] } };
  }
  const overridePod = isObject(overrideTemplate['spec']) ? overrideTemplate['spec'] : {};
  for (const key of POD_REPLACED_WHEN_NON_EMPTY) if (isNonEmpty(overridePod[key])) podSpec[key] = structuredClone(overridePod[key]);
  for (const key of POD_REPLACED_WHEN_SET) if (overridePod[key] !== undefined && overridePod[key] !== null) podSpec[key] = structuredClone(overridePod[key]);
  if (Array.isArray(overridePod['imagePullSecrets'])) {
    const secrets = [...(podSpec['imagePullSecrets'] as Obj[])];
    for (const secret of overridePod['imagePullSecrets'] as unknown[]) {
      if (isObject(secret) && !secrets.some((s) => s['name'] === secret['name'])) secrets.push({ ...secret });
    }
    podSpec['imagePullSecrets'] = secrets;
  }
  if (isObject(overridePod['securityContext'])) {
    const merged = { ...(podSpec['securityContext'] as Obj) };
    for (const [key, value] of Object.entries(overridePod['securityContext'])) if (value !== undefined && value !== null) merged[key] = structuredClone(value);
    podSpec['securityContext'] = merged;
  }
  if (Array.isArray(overridePod['volumes'])) podSpec['volumes'] = mergeByName(podSpec['volumes'], overridePod['volumes']);
  if (Array.isArray(overridePod['initContainers'])) podSpec['initContainers'] = mergeByName(podSpec['initContainers'], overridePod['initContainers']);
  if (Array.isArray(overridePod['containers'])) mergeContainers(podSpec['containers'] as Obj[], overridePod['containers'] as unknown[]);
}

function mergeContainers(containers: Obj[], overrides: readonly unknown[]): void {
  const profiler = containers.find((c) => c['name'] === PROFILER_CONTAINER);
  const copier = containers.find((c) => c['name'] === OUTPUT_COPIER_CONTAINER);
  const entries = overrides.filter(isObject);
  const profilerOverride = entries.find((c) => c['name'] === PROFILER_CONTAINER) ?? entries.find((c) => c['name'] === undefined || c['name'] === '');
  if (profiler !== undefined && profilerOverride !== undefined) {
    if (typeof profilerOverride['image'] === 'string' && profilerOverride['image'] !== '') profiler['image'] = profilerOverride['image'];
    if (hasResources(profilerOverride['resources'])) profiler['resources'] = structuredClone(profilerOverride['resources']);
    if (isObject(profilerOverride['securityContext'])) profiler['securityContext'] = structuredClone(profilerOverride['securityContext']);
    if (Array.isArray(profilerOverride['env'])) profiler['env'] = mergeByName(profiler['env'], profilerOverride['env']);
    if (Array.isArray(profilerOverride['volumeMounts'])) profiler['volumeMounts'] = mergeByName(profiler['volumeMounts'], profilerOverride['volumeMounts']);
    if (Array.isArray(profilerOverride['envFrom'])) profiler['envFrom'] = [...((profiler['envFrom'] as unknown[] | undefined) ?? []), ...structuredClone(profilerOverride['envFrom'])];
  }
  const copierOverride = entries.find((c) => c['name'] === OUTPUT_COPIER_CONTAINER);
  if (copier !== undefined && copierOverride !== undefined) {
    if (typeof copierOverride['image'] === 'string' && copierOverride['image'] !== '') copier['image'] = copierOverride['image'];
    if (hasResources(copierOverride['resources'])) copier['resources'] = structuredClone(copierOverride['resources']);
  }
}

function hasResources(value: unknown): boolean {
  return isObject(value) && (isNonEmpty(value['requests']) || isNonEmpty(value['limits']) || isNonEmpty(value['claims']));
}

/**
 * When the pod sets `automountServiceAccountToken: false`, gives only the output-copier the API
 * access it needs to write its ConfigMap: a projected volume `output-copier-kube-api-access` (token
 * expiring after 3600 s, `kube-root-ca.crt` as `ca.crt`, the downward-API `namespace`) mounted at
 * `/var/run/secrets/kubernetes.io/serviceaccount`. In place.
 * Source: upstream-notes/profiler.md §1.4 `ensureOutputCopierKubeAPIAccess`.
 */
export function ensureOutputCopierKubeApiAccess(podSpec: Obj): void {
  if (podSpec['automountServiceAccountToken'] !== false) return;
  podSpec['volumes'] = mergeByName(podSpec['volumes'], [
    {
      name: OUTPUT_COPIER_API_ACCESS_VOLUME,
      projected: {
        sources: [
          { serviceAccountToken: { path: 'token', expirationSeconds: 3600 } },
          { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
      },
    },
  ]);
  const copier = (podSpec['containers'] as Obj[]).find((c) => c['name'] === OUTPUT_COPIER_CONTAINER);
  if (copier !== undefined) {
    copier['volumeMounts'] = mergeByName(copier['volumeMounts'], [{ name: OUTPUT_COPIER_API_ACCESS_VOLUME, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true }]);
  }
}

/**
 * Installs the `dgd-apply-overrides` tool for the profiler when `spec.overrides.dgd` is set: an
 * emptyDir `dgd-override-tool`, an initContainer `dgd-override-installer` (the operator image,
 * `/dgd-apply-overrides --install-to /opt/dynamo/bin/dgd-apply-overrides`, hardened security
 * context), a read-only mount at `/opt/dynamo/bin` and `DYNAMO_DGD_APPLY_OVERRIDES_BIN` on the
 * profiler. In place.
 * Source: upstream-notes/profiler.md §1.4 `ensureDGDOverrideTool`.
 */
export function ensureDgdOverrideTool(podSpec: Obj, operatorImage: string): void {
  podSpec['volumes'] = mergeByName(podSpec['volumes'], [{ name: OVERRIDE_TOOL_VOLUME, emptyDir: {} }]);
  podSpec['initContainers'] = mergeByName(podSpec['initContainers'], [
    {
      name: OVERRIDE_TOOL_INSTALLER,
      image: operatorImage,
      imagePullPolicy: 'IfNotPresent',
      command: ['/dgd-apply-overrides'],
      args: ['--install-to', OVERRIDE_TOOL_PATH],
      volumeMounts: [{ name: OVERRIDE_TOOL_VOLUME, mountPath: OVERRIDE_TOOL_DIR }],
      securityContext: {
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        runAsUser: 1000,
        runAsGroup: 1000,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      },
    },
  ]);
  const profiler = (podSpec['containers'] as Obj[]).find((c) => c['name'] === PROFILER_CONTAINER);
  if (profiler !== undefined) {
    profiler['volumeMounts'] = mergeByName(profiler['volumeMounts'], [{ name: OVERRIDE_TOOL_VOLUME, mountPath: OVERRIDE_TOOL_DIR, readOnly: true }]);
    profiler['env'] = mergeByName(profiler['env'], [{ name: 'DYNAMO_DGD_APPLY_OVERRIDES_BIN', value: OVERRIDE_TOOL_PATH }]);
  }
}

/** The ClusterRole a profiling Job's service account is bound to (infra/profile/rbac.yaml). */
export const PROFILING_JOB_CLUSTER_ROLE = 'dynamo-dgdr-profiling-job';

/**
 * The service account `dgdr-profiling-job` and its RoleBinding to the ClusterRole
 * `dynamo-dgdr-profiling-job` in a request's namespace, which the profile function creates when
 * missing (never changing existing ones), as upstream's cluster-wide mode does with
 * `EnsureServiceAccountWithRBAC(ns, "dgdr-profiling-job", ...)`.
 * Source: upstream-notes/profiler.md §1.1; dgdr.md §2.1 "RBAC". Pure.
 */
export function profilingJobRbac(namespace: string): readonly Obj[] {
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: PROFILING_SERVICE_ACCOUNT, namespace, labels: { [LABEL_MANAGED_BY]: LABEL_VALUE_DYNAMO_OPERATOR } } },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: PROFILING_SERVICE_ACCOUNT, namespace, labels: { [LABEL_MANAGED_BY]: LABEL_VALUE_DYNAMO_OPERATOR } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: PROFILING_JOB_CLUSTER_ROLE },
      subjects: [{ kind: 'ServiceAccount', name: PROFILING_SERVICE_ACCOUNT, namespace }],
    },
  ];
}
