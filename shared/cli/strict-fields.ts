/**
 * Strict field checking of CLI input, as the API server's strict field validation
 * (`fieldValidation=Strict`, kubectl's default `--validate=strict`) reports it:
 * `unknown field "spec.components[0].replcas"`, one entry per unknown field.
 *
 * DGD fields are checked against our CRD's structural schema (generated from the zod schemas,
 * shared/api/crd.ts). Where that schema keeps an embedded Kubernetes type open (a component's
 * `podTemplate`, the graph `env`), the fields are checked against the Kubernetes types' own
 * field lists from `@kubernetes/client-node` (the published `V1PodTemplateSpec` model), as
 * upstream's CRD, which embeds the full PodTemplateSpec schema, makes the API server do.
 * v1alpha1 objects are checked against the v1alpha1 fields this control plane reads
 * (upstream-notes/dgd.md §2.1), with `extraPodSpec` checked as a PodSpec and
 * `extraPodSpec.mainContainer` as a Container. Provider-native fragments
 * (`providerOverride.value`) and other preserved subtrees stay open, as the CRD keeps them.
 *
 * Pure; never throws on any input.
 * @module
 */
import * as k8s from '@kubernetes/client-node';
import { DGD_KIND, DGD_V1ALPHA1, DGD_V1BETA1, DGDR_KIND, DGDR_V1BETA1, dynamoGraphDeploymentCrd, dynamoGraphDeploymentRequestCrd } from '../api/index.js';

type Json = Record<string, unknown>;
interface SchemaNode {
  readonly type?: string;
  readonly properties?: Readonly<Record<string, SchemaNode>>;
  readonly items?: SchemaNode;
  readonly additionalProperties?: SchemaNode | boolean;
  readonly 'x-kubernetes-preserve-unknown-fields'?: boolean;
}

/** Open subtrees of our CRD that hold a Kubernetes core type, by property name. */
const EMBEDDED_CORE_TYPES: Readonly<Record<string, string>> = { podTemplate: 'V1PodTemplateSpec', env: 'V1EnvVar' };

interface AttributeType {
  readonly baseName: string;
  readonly type: string;
}
type ModelClass = { getAttributeTypeMap(): AttributeType[] };

function modelOf(typeName: string): ModelClass | undefined {
  const candidate = (k8s as unknown as Record<string, unknown>)[typeName];
  return typeof candidate === 'function' && typeof (candidate as Partial<ModelClass>).getAttributeTypeMap === 'function' ? (candidate as unknown as ModelClass) : undefined;
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const join = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);

/** Unknown fields of `value` against a client-node type string (`V1PodSpec`, `Array<V1Container>`, maps, primitives). */
function unknownCoreFields(value: unknown, typeName: string, path: string, out: string[]): void {
  const array = /^Array<(.+)>$/.exec(typeName);
  if (array !== null) {
    if (Array.isArray(value)) value.forEach((item, i) => unknownCoreFields(item, array[1] ?? '', `${path}[${i}]`, out));
    return;
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(typeName);
  if (map !== null) {
    if (isObject(value)) for (const [key, item] of Object.entries(value)) unknownCoreFields(item, map[1] ?? '', `${path}[${key}]`, out);
    return;
  }
  const model = modelOf(typeName);
  if (model === undefined || !isObject(value)) return;
  const attributes = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  for (const [key, item] of Object.entries(value)) {
    const type = attributes.get(key);
    if (type === undefined) out.push(join(path, key));
    else unknownCoreFields(item, type, join(path, key), out);
  }
}

/** Unknown fields of `value` against a structural schema node; open nodes switch to core types by name. */
function unknownSchemaFields(value: unknown, node: SchemaNode | undefined, path: string, key: string, out: string[]): void {
  if (node === undefined) return;
  if (node['x-kubernetes-preserve-unknown-fields'] === true) {
    const core = EMBEDDED_CORE_TYPES[key];
    if (core === undefined) return;
    if (Array.isArray(value)) value.forEach((item, i) => unknownCoreFields(item, core, `${path}[${i}]`, out));
    else unknownCoreFields(value, core, path, out);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => unknownSchemaFields(item, node.items, `${path}[${i}]`, key, out));
    return;
  }
  if (!isObject(value)) return;
  if (node.properties !== undefined) {
    for (const [field, item] of Object.entries(value)) {
      const child = node.properties[field];
      if (child === undefined) out.push(join(path, field));
      else unknownSchemaFields(item, child, join(path, field), field, out);
    }
    return;
  }
  if (isObject(node.additionalProperties)) {
    for (const [field, item] of Object.entries(value)) unknownSchemaFields(item, node.additionalProperties, `${path}[${field}]`, key, out);
  }
}

type CrdShape = { spec: { versions: { name: string; schema: { openAPIV3Schema: { properties: Record<string, SchemaNode> } } }[] } };

/** The v1beta1 spec schema of a CRD of ours, computed once per call (pure, cheap). */
function v1beta1SpecSchema(crd: Record<string, unknown> = dynamoGraphDeploymentCrd()): SchemaNode | undefined {
  return (crd as CrdShape).spec.versions.find((v) => v.name === 'v1beta1')?.schema.openAPIV3Schema.properties['spec'];
}

/** v1alpha1 component (service) fields: upstream `DynamoComponentDeploymentSharedSpec` (upstream-notes/dgd.md §2.1, §2.3). */
const V1ALPHA1_SERVICE_FIELDS = new Set([
  'annotations', 'autoscaling', 'checkpoint', 'compilationCache', 'componentType', 'dynamoNamespace', 'envFromSecret', 'envs', 'eppConfig', 'experimental',
  'extraPodMetadata', 'extraPodSpec', 'failover', 'frontendSidecar', 'globalDynamoNamespace', 'gpuMemoryService', 'ingress', 'labels', 'livenessProbe',
  'lpx', 'minAvailable', 'modelRef', 'multinode', 'providerOverride', 'pvc', 'readinessProbe', 'replicas', 'resources', 'roles', 'runtimeVersionOverride',
  'scalingAdapter', 'sharedMemory', 'subComponentType', 'topologyConstraint', 'volumeMounts',
]);
/** v1alpha1 graph spec fields (upstream-notes/dgd.md §2.1). */
const V1ALPHA1_SPEC_FIELDS = new Set(['annotations', 'backendFramework', 'envs', 'experimental', 'labels', 'priorityClassName', 'providerOverride', 'pvcs', 'restart', 'services', 'topologyConstraint']);

function unknownV1alpha1Fields(spec: unknown, out: string[]): void {
  if (!isObject(spec)) return;
  for (const [field, value] of Object.entries(spec)) {
    if (!V1ALPHA1_SPEC_FIELDS.has(field)) out.push(`spec.${field}`);
    else if (field === 'envs') unknownCoreFields(value, 'Array<V1EnvVar>', 'spec.envs', out);
  }
  const services = spec['services'];
  if (!isObject(services)) return;
  for (const [name, service] of Object.entries(services)) {
    if (!isObject(service)) continue;
    const at = `spec.services[${name}]`;
    for (const [field, value] of Object.entries(service)) {
      if (!V1ALPHA1_SERVICE_FIELDS.has(field)) out.push(`${at}.${field}`);
      else if (field === 'envs') unknownCoreFields(value, 'Array<V1EnvVar>', `${at}.envs`, out);
      else if (field === 'livenessProbe' || field === 'readinessProbe') unknownCoreFields(value, 'V1Probe', `${at}.${field}`, out);
      else if (field === 'extraPodSpec' && isObject(value)) {
        const { mainContainer, ...podSpec } = value;
        unknownCoreFields(podSpec, 'V1PodSpec', `${at}.extraPodSpec`, out);
        unknownCoreFields(mainContainer, 'V1Container', `${at}.extraPodSpec.mainContainer`, out);
      }
    }
  }
}

/**
 * The unknown fields of a DynamoGraphDeployment, as paths the API server prints (dotted, list
 * positions `[i]`, map keys `[key]`), in document order. `metadata` is checked as ObjectMeta.
 * Objects of other kinds or versions give none. Pure.
 */
export function unknownDgdFields(object: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  if (object['kind'] !== DGD_KIND) return out;
  for (const field of Object.keys(object)) {
    if (!['apiVersion', 'kind', 'metadata', 'spec', 'status'].includes(field)) out.push(field);
  }
  unknownCoreFields(object['metadata'], 'V1ObjectMeta', 'metadata', out);
  if (object['apiVersion'] === DGD_V1BETA1) unknownSchemaFields(object['spec'], v1beta1SpecSchema(), 'spec', 'spec', out);
  else if (object['apiVersion'] === DGD_V1ALPHA1) unknownV1alpha1Fields(object['spec'], out);
  return out;
}

/**
 * The unknown fields of a v1beta1 DynamoGraphDeploymentRequest against our DGDR CRD's v1beta1
 * schema (what `kubectl apply`'s default strict field validation refuses), as
 * {@link unknownDgdFields} words them; open subtrees (`spec.overrides.dgd`,
 * `spec.overrides.profilingJob`) are not descended. Other kinds or versions give none. Pure.
 */
export function unknownDgdrFields(object: Readonly<Record<string, unknown>>): string[] {
  const out: string[] = [];
  if (object['kind'] !== DGDR_KIND || object['apiVersion'] !== DGDR_V1BETA1) return out;
  for (const field of Object.keys(object)) {
    if (!['apiVersion', 'kind', 'metadata', 'spec', 'status'].includes(field)) out.push(field);
  }
  unknownCoreFields(object['metadata'], 'V1ObjectMeta', 'metadata', out);
  unknownSchemaFields(object['spec'], v1beta1SpecSchema(dynamoGraphDeploymentRequestCrd()), 'spec', 'spec', out);
  return out;
}

/** The API server's wording of one unknown field (strict field validation). */
export function formatUnknownField(path: string): string {
  return `unknown field "${path}"`;
}
