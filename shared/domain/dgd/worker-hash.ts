/**
 * The shared worker-generation hash: the first 8 hex characters of SHA-256 over the canonical
 * JSON of the worker-class components (worker, prefill, decode). Carried by the label
 * `nvidia.com/dynamo-worker-hash` and env `DYN_NAMESPACE_WORKER_SUFFIX` on worker pod templates,
 * so that a pod-template edit to one worker rolls every worker (dgd-reference "Grove update strategy").
 *
 * Canonical JSON reproduces Go's encoding/json output for the upstream input
 * (`ComputeDGDWorkersSpecHash`, upstream-notes/dgd.md §4.3): struct fields in Go declaration
 * order for the Kubernetes types a pod template is made of, map keys sorted, `metadata:{}`
 * and `resources:{}` emitted as Go emits empty structs. Objects of types not listed here fall
 * back to sorted keys (Go map order). Excluded by construction: replicas, minAvailable,
 * providerOverride, scalingAdapter, modelRef, eppConfig and topology, so moving a minimum,
 * changing a budget, replicas or the strategy annotation never rolls the workers. The
 * component `type` is not hashed either (it is immutable), which keeps the upstream golden
 * value `2bc34b39`. As upstream does today (`applyDGDSpecDefaultsToWorkerHashInput`,
 * `TestComputeDGDWorkersSpecHashTracksDGDSpecMetadata`), the graph's `spec.annotations`,
 * `spec.labels` and `spec.env` are folded into each worker pod template at low priority, and
 * `nvidia.com/dynamo-component-class: worker` is added when the graph has an EPP, so graph
 * metadata that reaches the worker pods rolls them.
 * @module
 */
import { hash } from 'node:crypto';
import { LABEL_COMPONENT_CLASS, MAIN_CONTAINER_NAME, WORKER_CLASS_TYPES, type Component, type Dgd, type EnvVar, type PodTemplateSpec } from '../../api/index.js';
import { cloneJson } from '../clone.js';

export const WORKER_HASH_VERSION = 'dgd-worker-rollout-v2';

/** A Go struct's JSON field order, and which fields Go emits even when empty. */
export interface GoStruct {
  readonly fields: readonly string[];
  /** Nested struct types by field (for objects), or element struct types (for lists). */
  readonly types?: Readonly<Record<string, GoType>>;
  /** Fields emitted as `{}` when absent (non-pointer structs). */
  readonly alwaysObject?: readonly string[];
  /** Only the listed fields are serialized (the hash's own selection of component fields). */
  readonly closed?: boolean;
}
export type GoType =
  | 'PodTemplateSpec' | 'ObjectMeta' | 'PodSpec' | 'Container' | 'ContainerPort' | 'EnvFromSource' | 'EnvVar'
  | 'EnvVarSource' | 'ResourceRequirements' | 'VolumeMount' | 'Probe' | 'Toleration' | 'Volume' | 'WorkerComponent';

/** The Go types the canonical JSON knows, by name (exported for the serializer's reference test). */
export const STRUCTS: Readonly<Record<GoType, GoStruct>> = {
  PodTemplateSpec: { fields: ['metadata', 'spec'], types: { metadata: 'ObjectMeta', spec: 'PodSpec' }, alwaysObject: ['metadata', 'spec'] },
  ObjectMeta: {
    fields: ['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields'],
  },
  PodSpec: {
    fields: ['volumes', 'initContainers', 'containers', 'ephemeralContainers', 'restartPolicy', 'terminationGracePeriodSeconds', 'activeDeadlineSeconds', 'dnsPolicy', 'nodeSelector', 'serviceAccountName', 'serviceAccount', 'automountServiceAccountToken', 'nodeName', 'hostNetwork', 'hostPID', 'hostIPC', 'shareProcessNamespace', 'securityContext', 'imagePullSecrets', 'hostname', 'subdomain', 'affinity', 'schedulerName', 'tolerations', 'hostAliases', 'priorityClassName', 'priority', 'dnsConfig', 'readinessGates', 'runtimeClassName', 'enableServiceLinks', 'preemptionPolicy', 'overhead', 'topologySpreadConstraints', 'setHostnameAsFQDN', 'os', 'hostUsers', 'schedulingGates', 'resourceClaims', 'resources', 'hostnameOverride'],
    types: { volumes: 'Volume', initContainers: 'Container', containers: 'Container', tolerations: 'Toleration' },
  },
  Container: {
    fields: ['name', 'image', 'command', 'args', 'workingDir', 'ports', 'envFrom', 'env', 'resources', 'resizePolicy', 'restartPolicy', 'restartPolicyRules', 'volumeMounts', 'volumeDevices', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle', 'terminationMessagePath', 'terminationMessagePolicy', 'imagePullPolicy', 'securityContext', 'stdin', 'stdinOnce', 'tty'],
    types: { ports: 'ContainerPort', envFrom: 'EnvFromSource', env: 'EnvVar', resources: 'ResourceRequirements', volumeMounts: 'VolumeMount', livenessProbe: 'Probe', readinessProbe: 'Probe', startupProbe: 'Probe' },
    alwaysObject: ['resources'],
  },
  ContainerPort: { fields: ['name', 'hostPort', 'containerPort', 'protocol', 'hostIP'] },
  EnvFromSource: { fields: ['prefix', 'configMapRef', 'secretRef'] },
  EnvVar: { fields: ['name', 'value', 'valueFrom'], types: { valueFrom: 'EnvVarSource' } },
  EnvVarSource: { fields: ['fieldRef', 'resourceFieldRef', 'configMapKeyRef', 'secretKeyRef', 'fileKeyRef'] },
  ResourceRequirements: { fields: ['limits', 'requests', 'claims'] },
  VolumeMount: { fields: ['name', 'readOnly', 'recursiveReadOnly', 'mountPath', 'subPath', 'mountPropagation', 'subPathExpr'] },
  Probe: { fields: ['exec', 'httpGet', 'tcpSocket', 'grpc', 'initialDelaySeconds', 'timeoutSeconds', 'periodSeconds', 'successThreshold', 'failureThreshold', 'terminationGracePeriodSeconds'] },
  Toleration: { fields: ['key', 'operator', 'value', 'effect', 'tolerationSeconds'] },
  Volume: {
    fields: ['name', 'hostPath', 'emptyDir', 'gcePersistentDisk', 'awsElasticBlockStore', 'gitRepo', 'secret', 'nfs', 'iscsi', 'glusterfs', 'persistentVolumeClaim', 'rbd', 'flexVolume', 'cinder', 'cephfs', 'flocker', 'downwardAPI', 'fc', 'azureFile', 'configMap', 'vsphereVolume', 'quobyte', 'azureDisk', 'photonPersistentDisk', 'projected', 'portworxVolume', 'scaleIO', 'storageos', 'csi', 'ephemeral', 'image'],
  },
  WorkerComponent: {
    fields: ['globalDynamoNamespace', 'podTemplate', 'multinode', 'sharedMemorySize', 'frontendSidecar', 'compilationCache', 'experimental'],
    types: { podTemplate: 'PodTemplateSpec' },
    closed: true,
  },
};

/** A struct's layout prepared once for the serializer: quoted keys, and lookups as Sets. */
interface CompiledStruct {
  readonly fields: readonly string[];
  readonly quotedFields: readonly string[];
  /** Each field's position in `fields`. */
  readonly position: ReadonlyMap<string, number>;
  /** The type of the field at each position. */
  readonly types: readonly (GoType | undefined)[];
  /** Positions of the fields emitted as `{}` when empty. */
  readonly alwaysObject: readonly number[];
  readonly closed: boolean;
}

const COMPILED: ReadonlyMap<GoType, CompiledStruct> = new Map(
  (Object.entries(STRUCTS) as [GoType, GoStruct][]).map(([type, struct]) => [
    type,
    {
      fields: struct.fields,
      quotedFields: struct.fields.map((field) => JSON.stringify(field)),
      position: new Map(struct.fields.map((field, index) => [field, index])),
      types: struct.fields.map((field) => struct.types?.[field]),
      alwaysObject: (struct.alwaysObject ?? []).map((field) => struct.fields.indexOf(field)),
      closed: struct.closed === true,
    },
  ]),
);

/**
 * Serializes `value` as Go's encoding/json would for the given struct type: known fields in
 * declaration order then any unknown fields sorted, empty values omitted except the
 * always-emitted structs, map keys sorted. Pure.
 *
 * Built as one string with no intermediate arrays: it runs over every worker pod template on
 * every render (issue 17 item 4), and its output, hence the hash, must never change.
 */
export function canonicalJson(value: unknown, type?: GoType): string {
  if (typeof value === 'string') return quote(value);
  if (Array.isArray(value)) {
    let out = '[';
    for (let index = 0; index < value.length; index += 1) out += (index === 0 ? '' : ',') + canonicalJson(value[index], type);
    return `${out}]`;
  }
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const record = value as Record<string, unknown>;
  const struct = type === undefined ? undefined : COMPILED.get(type);
  // Walk the keys the object has (a few), not every field its Go type declares (up to 41).
  const known: number[] = [];
  const unknown: string[] = [];
  for (const key in record) {
    if (!Object.prototype.hasOwnProperty.call(record, key)) continue;
    const position = struct?.position.get(key);
    if (position !== undefined) insertSorted(known, position);
    else if (struct?.closed !== true) unknown.push(key);
  }
  // No `slice` or `join` of the pieces: either would flatten the string at every level.
  let out = '{';
  let separator = '';
  if (struct !== undefined) {
    for (const position of struct.alwaysObject) if (!known.includes(position)) insertSorted(known, position);
    for (const position of known) {
      const field = record[struct.fields[position] ?? ''];
      const nested = struct.types[position];
      if (!isEmpty(field)) out += `${separator}${struct.quotedFields[position] ?? ''}:${canonicalJson(field, nested)}`;
      else if (struct.alwaysObject.includes(position)) out += `${separator}${struct.quotedFields[position] ?? ''}:${canonicalJson({}, nested)}`;
      else continue;
      separator = ',';
    }
  }
  if (unknown.length > 1) unknown.sort();
  for (const key of unknown) {
    const field = record[key];
    if (isEmpty(field)) continue;
    out += `${separator}${quote(key)}:${canonicalJson(field)}`;
    separator = ',';
  }
  return `${out}}`;
}

/** Characters JSON.stringify escapes (controls, quote, backslash) or checks (surrogates). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** `JSON.stringify` of a string, without its call for the common string that needs no escape. */
function quote(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`;
}

/** Inserts `value` into an ascending list (a few items: cheaper than a sort). */
function insertSorted(list: number[], value: number): void {
  let index = list.length;
  while (index > 0 && (list[index - 1] ?? 0) > value) index -= 1;
  list.splice(index, 0, value);
}

/** Go's omitempty: absent, null, false, 0, "", and empty lists or maps. */
function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value !== 'object') return false;
  for (const key in value) if (Object.prototype.hasOwnProperty.call(value, key)) return false;
  return true;
}

/** The worker-class components of a DGD, by name. */
export function workerComponents(dgd: Pick<Dgd, 'spec'>): Component[] {
  return dgd.spec.components.filter((c) => c.type !== undefined && WORKER_CLASS_TYPES.includes(c.type));
}

/**
 * The hash input: `{version, backendFramework?, workers: {<name>: <hashed fields>}}` with
 * worker names sorted. Pure.
 */
export function workerHashInput(dgd: Pick<Dgd, 'spec'>): string {
  const workers = workerComponents(dgd)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((c) => `${JSON.stringify(c.name)}:${canonicalJson(withGraphDefaults(c, dgd), 'WorkerComponent')}`);
  const backend = dgd.spec.backendFramework === undefined ? '' : `"backendFramework":${JSON.stringify(dgd.spec.backendFramework)},`;
  return `{"version":${JSON.stringify(WORKER_HASH_VERSION)},${backend}"workers":{${workers.join(',')}}}`;
}

/**
 * A worker component with the graph's pod metadata and env folded into its pod template at
 * low priority (authored values win; env merged by name and sorted), plus the EPP component
 * class label. Source: upstream `api/v1beta1/worker_hash.go` `applyDGDSpecDefaultsToWorkerHashInput`. Pure.
 */
export function withGraphDefaults(component: Component, dgd: Pick<Dgd, 'spec'>): Component {
  const { annotations, labels, env } = dgd.spec;
  const hasEpp = dgd.spec.components.some((c) => c.type === 'epp');
  if (Object.keys(annotations ?? {}).length === 0 && Object.keys(labels ?? {}).length === 0 && (env ?? []).length === 0 && !hasEpp) return component;
  const template: PodTemplateSpec = cloneJson(component.podTemplate ?? {});
  const metadata = { ...(template.metadata ?? {}) };
  if (Object.keys(annotations ?? {}).length > 0) metadata.annotations = { ...annotations, ...(metadata.annotations ?? {}) };
  if (Object.keys(labels ?? {}).length > 0) metadata.labels = { ...labels, ...(metadata.labels ?? {}) };
  if (hasEpp) metadata.labels = { ...(metadata.labels ?? {}), [LABEL_COMPONENT_CLASS]: 'worker' };
  template.metadata = metadata;
  if ((env ?? []).length > 0) {
    const spec = { ...(template.spec ?? {}) };
    const containers = [...(spec.containers ?? [])];
    let index = containers.findIndex((c) => c.name === MAIN_CONTAINER_NAME);
    if (index < 0) {
      containers.unshift({ name: MAIN_CONTAINER_NAME });
      index = 0;
    }
    const main = containers[index] ?? { name: MAIN_CONTAINER_NAME };
    const byName = new Map<string, EnvVar>();
    for (const item of [...(env ?? []), ...(main.env ?? [])]) byName.set(item.name, item);
    containers[index] = { ...main, env: [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
    spec.containers = containers;
    template.spec = spec;
  }
  return { ...component, podTemplate: template };
}

/**
 * The worker-generation hash of a DGD: first 8 hex characters of SHA-256 over
 * {@link workerHashInput}. Same workers -> same hash. Pure.
 */
export function computeWorkerHash(dgd: Pick<Dgd, 'spec'>): string {
  return hash('sha256', workerHashInput(dgd), 'hex').slice(0, 8);
}
