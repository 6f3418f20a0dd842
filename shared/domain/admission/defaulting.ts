/**
 * DGD defaulting: what the mutating webhook adds before validation. The shell diffs the input
 * against the result to produce the JSON Patch.
 *
 * Defaults (and only these):
 * - `spec.components[*].replicas`: 1 when omitted, except for LPX components, where omitted
 *   replicas mean an external scaler owns live capacity (upstream-notes/dgd.md §2.3 `replicas`;
 *   dgd-reference "Grove rollout budget overrides": "omit them to let an external scaler manage").
 * - `providerOverride.target` when omitted, at root (`PodCliqueSet`), component (resolved from the
 *   component shape, see `componentOverrideTarget`) and role scope (`PodCliqueTemplateSpec`):
 *   "Omit target; admission resolves it from the component shape" (dgd-reference).
 *
 * Never added: a `providerOverride` that is absent, or availability fields (`minAvailable`,
 * `rollingUpdate`) in a topology-only override: "An omitted minimum resolves to 1 during
 * rendering; admission leaves an absent providerOverride absent and does not add availability
 * fields to a topology-only override" (dgd-reference "Configure native minimum availability").
 * The older upstream materialization of `minAvailable: 1` (upstream-notes/dgd.md §3.3) is not done.
 *
 * The input may not be schema-valid yet (mutating admission runs before the API server's schema
 * validation), so every default applies only where the surrounding shape is the expected one.
 * @module
 */
import {
  ANNOTATION_ENABLE_GROVE,
  ANNOTATION_OPERATOR_ORIGIN_VERSION,
  ANNOTATION_WORKLOAD_PROVIDER,
  COMPONENT_NAME_PATTERN,
  COMPONENT_TYPES,
  ComponentSchema,
  DGD_V1ALPHA1,
  DGD_V1BETA1,
  WORKLOAD_PROVIDER_COMPONENT,
  WORKLOAD_PROVIDER_GROVE,
  convertDgdV1Alpha1,
  type Component,
} from '../../api/index.js';
import { componentOverrideTarget } from '../dgd/availability.js';
import { isObject } from './common.js';

/** Target of a root-scope providerOverride (upstream-notes/dgd.md §2.2). */
export const ROOT_OVERRIDE_TARGET = 'PodCliqueSet';
/** Target of a role-scope providerOverride (upstream-notes/dgd.md §2.3). */
export const ROLE_OVERRIDE_TARGET = 'PodCliqueTemplateSpec';

/**
 * Defaults a DynamoGraphDeployment of either served version.
 * In: any object (`nvidia.com/v1beta1` or `nvidia.com/v1alpha1`; anything else is returned as
 * is). Out: the defaulted object. The input is never modified: every object on the way to a
 * default is copied (copy-on-write), and unchanged subtrees are shared with the input, so treat
 * both as immutable (the shell diffs them; an identical subtree is skipped at once).
 * Failures: none (shapes it does not understand are left alone for validation to report).
 * Source: dgd-reference "Configure native minimum availability", "Grove rollout budget
 * overrides"; upstream-notes/dgd.md §2.3, §3.3. Pure.
 */
export function defaultDgd<T>(object: T): T {
  if (!isObject(object)) return object;
  if (object['apiVersion'] === DGD_V1ALPHA1) return defaultV1Alpha1(object) as T;
  const spec = object['spec'];
  if (!isObject(spec)) return object;
  let nextSpec = withDefaultTarget(spec, 'providerOverride', ROOT_OVERRIDE_TARGET);
  const components = spec['components'];
  if (Array.isArray(components)) {
    const next = components.map((c: unknown) => (isObject(c) ? defaultComponent(c, c) : c));
    if (next.some((c, i) => c !== components[i])) nextSpec = { ...nextSpec, components: next };
  }
  return (nextSpec === spec ? object : { ...object, spec: nextSpec }) as T;
}

/**
 * Defaults one component: `holder` carries `replicas` and `providerOverride` (the component
 * itself, or a v1alpha1 service); `shape` is the v1beta1 view that decides the type and the
 * override target. Out: `holder` itself when nothing changed, else a changed copy.
 */
function defaultComponent(holder: Record<string, unknown>, shape: unknown): Record<string, unknown> {
  let out = holder;
  const isLpx = isObject(shape) && shape['type'] === 'lpx';
  if (!isLpx && holder['replicas'] === undefined) out = { ...out, replicas: 1 };
  if (needsTarget(holder['providerOverride'])) {
    const component = typedComponent(shape);
    if (component !== undefined) out = withDefaultTarget(out, 'providerOverride', componentOverrideTarget(component));
  }
  const roles = holder['roles'];
  if (Array.isArray(roles)) {
    const next = roles.map((role: unknown) => (isObject(role) ? withDefaultTarget(role, 'providerOverride', ROLE_OVERRIDE_TARGET) : role));
    if (next.some((r, i) => r !== roles[i])) out = { ...out, roles: next };
  }
  return out;
}

function needsTarget(override: unknown): override is Record<string, unknown> {
  return isObject(override) && (override['target'] === undefined || override['target'] === '');
}

/** `parent` with `parent[key].target` set when that override lacks one; `parent` itself otherwise. */
function withDefaultTarget(parent: Record<string, unknown>, key: string, target: string): Record<string, unknown> {
  const override = parent[key];
  return needsTarget(override) ? { ...parent, [key]: { ...override, target } } : parent;
}

/** The fields that decide a component's Grove shape (and so its override target). */
const ComponentShapeSchema = ComponentSchema.pick({ name: true, type: true, multinode: true, experimental: true });

/**
 * The component's shape as the domain types it (multinode's nodeCount defaulted to 2, as the CRD
 * does), or undefined when malformed: `ComponentSchema.pick({ name, type, multinode, experimental })`'s
 * parse, read off the plain object when it is plainly well-formed. Pure.
 */
export function typedComponent(shape: unknown): Component | undefined {
  const plain = plainComponentShape(shape);
  if (plain !== undefined) return plain;
  const parsed = ComponentShapeSchema.safeParse(shape);
  return parsed.success ? parsed.data : undefined;
}

const KNOWN_COMPONENT_TYPES: ReadonlySet<unknown> = new Set(COMPONENT_TYPES);
const MAX_INT32 = 2_147_483_647;

/**
 * The shape read off the plain object when it is plainly one {@link ComponentShapeSchema}
 * accepts (the common case: a valid name, a known type or none, no `experimental`, `multinode`
 * absent or a whole `nodeCount` from 2 or none), with what that parse gives for these fields
 * (nodeCount defaulted to 2); undefined for anything else, which zod then decides (so a
 * malformed shape still gets no target). Pure.
 */
function plainComponentShape(shape: unknown): Component | undefined {
  if (!isObject(shape) || shape['experimental'] !== undefined) return undefined;
  const name = shape['name'];
  const type = shape['type'];
  if (typeof name !== 'string' || name.length < 1 || name.length > 63 || !COMPONENT_NAME_PATTERN.test(name)) return undefined;
  if (type !== undefined && !KNOWN_COMPONENT_TYPES.has(type)) return undefined;
  const typed = (type === undefined ? { name } : { name, type }) as Component;
  const multinode = shape['multinode'];
  if (multinode === undefined) return typed;
  if (!isObject(multinode)) return undefined;
  // Only an absent nodeCount is defaulted (`null` is not a number to zod either).
  const nodeCount = multinode['nodeCount'] === undefined ? 2 : multinode['nodeCount'];
  if (typeof nodeCount !== 'number' || !Number.isInteger(nodeCount) || nodeCount < 2 || nodeCount > MAX_INT32) return undefined;
  return { ...typed, multinode: { nodeCount } };
}

/**
 * v1alpha1: the same defaults on `spec.services[<name>]`, deciding each from the converted
 * v1beta1 component of that name (type from `componentType`/`subComponentType`, target from
 * the component shape).
 */
function defaultV1Alpha1(object: Record<string, unknown>): Record<string, unknown> {
  const spec = object['spec'];
  if (!isObject(spec)) return object;
  let nextSpec = withDefaultTarget(spec, 'providerOverride', ROOT_OVERRIDE_TARGET);
  const services = spec['services'];
  const converted = isObject(services) ? convertDgdV1Alpha1(object) : undefined;
  if (isObject(services) && converted?.ok === true) {
    const convertedSpec = converted.object['spec'];
    const components = isObject(convertedSpec) && Array.isArray(convertedSpec['components']) ? (convertedSpec['components'] as unknown[]) : [];
    const byName = new Map<unknown, unknown>(components.filter(isObject).map((c) => [c['name'], c]));
    const next = Object.fromEntries(Object.entries(services).map(([name, service]) => [name, isObject(service) ? defaultComponent(service, byName.get(name)) : service]));
    if (Object.keys(next).some((name) => next[name] !== services[name])) nextSpec = { ...nextSpec, services: next };
  }
  return nextSpec === spec ? object : { ...object, spec: nextSpec };
}

/** One RFC 6902 operation of a defaulting patch (only `add` and `replace` are ever made). */
export interface DefaultingOperation {
  readonly op: 'add' | 'replace';
  readonly path: string;
  readonly value: unknown;
}

/**
 * The JSON Patch of {@link defaultDgd} (and, on CREATE, `stampDgdCreateAnnotations` with
 * `stampVersion`) for a v1beta1 DGD, recorded as each default is set: the very operations, in the
 * very order, that `jsonpatch.compare(object, defaulted)` gives (fast-json-patch walks each
 * object's keys last to first and appends the keys it added after them), without copying the
 * object or diffing it. The same rules and values as {@link defaultDgd}; test/unit/admission-defaulting-patch.test.ts
 * checks both agree on every corpus DGD and on generated shapes.
 * In: the request's object, untouched; `stampVersion`, the origin version to stamp on CREATE
 * (undefined on UPDATE). Out: the operations (empty when nothing is defaulted), or undefined when
 * `object` is not a v1beta1 DGD (the caller then diffs {@link defaultDgd}'s result). Reads only
 * fixed paths: nothing recurses over the object's depth. Pure.
 */
export function defaultingPatch(object: unknown, stampVersion: string | undefined): DefaultingOperation[] | undefined {
  if (!isObject(object) || object['apiVersion'] !== DGD_V1BETA1) return undefined;
  const operations: DefaultingOperation[] = [];
  const keys = Object.keys(object);
  for (let k = keys.length - 1; k >= 0; k -= 1) {
    const key = keys[k];
    if (key === 'spec') specOperations(object['spec'], operations);
    else if (key === 'metadata' && stampVersion !== undefined) metadataOperations(object['metadata'], stampVersion, operations);
  }
  if (stampVersion !== undefined && !Object.hasOwn(object, 'metadata')) operations.push({ op: 'add', path: '/metadata', value: { annotations: stampedAnnotations({}, stampVersion) } });
  return operations;
}

function specOperations(spec: unknown, operations: DefaultingOperation[]): void {
  if (!isObject(spec)) return;
  const keys = Object.keys(spec);
  for (let k = keys.length - 1; k >= 0; k -= 1) {
    const key = keys[k];
    if (key === 'providerOverride') targetOperation(spec['providerOverride'], '/spec/providerOverride', ROOT_OVERRIDE_TARGET, operations);
    else if (key === 'components') {
      const components = spec['components'];
      if (!Array.isArray(components)) continue;
      for (let i = components.length - 1; i >= 0; i -= 1) {
        const component: unknown = components[i];
        if (isObject(component)) componentOperations(component, `/spec/components/${i}`, operations);
      }
    }
  }
}

/** {@link defaultComponent}'s defaults of one v1beta1 component, as operations. */
function componentOperations(component: Record<string, unknown>, path: string, operations: DefaultingOperation[]): void {
  const keys = Object.keys(component);
  for (let k = keys.length - 1; k >= 0; k -= 1) {
    const key = keys[k];
    if (key === 'providerOverride') {
      if (!needsTarget(component['providerOverride'])) continue;
      const typed = typedComponent(component);
      if (typed !== undefined) targetOperation(component['providerOverride'], `${path}/providerOverride`, componentOverrideTarget(typed), operations);
    } else if (key === 'roles') {
      const roles = component['roles'];
      if (!Array.isArray(roles)) continue;
      for (let j = roles.length - 1; j >= 0; j -= 1) {
        const role: unknown = roles[j];
        if (isObject(role)) targetOperation(role['providerOverride'], `${path}/roles/${j}/providerOverride`, ROLE_OVERRIDE_TARGET, operations);
      }
    }
  }
  if (component['type'] !== 'lpx' && component['replicas'] === undefined) operations.push({ op: 'add', path: `${path}/replicas`, value: 1 });
}

/** `override.target` set to `target` when the override lacks one (an empty target is replaced). */
function targetOperation(override: unknown, path: string, target: string, operations: DefaultingOperation[]): void {
  if (!needsTarget(override)) return;
  operations.push({ op: Object.hasOwn(override, 'target') ? 'replace' : 'add', path: `${path}/target`, value: target });
}

/** The annotations `stampDgdCreateAnnotations` writes over `before` (./metadata-annotations.ts). */
function stampedAnnotations(before: Record<string, unknown>, stampVersion: string): Record<string, unknown> {
  const annotations: Record<string, unknown> = { ...before, [ANNOTATION_WORKLOAD_PROVIDER]: workloadProvider(before) };
  if (!(ANNOTATION_OPERATOR_ORIGIN_VERSION in before)) annotations[ANNOTATION_OPERATOR_ORIGIN_VERSION] = stampVersion;
  return annotations;
}

function workloadProvider(annotations: Record<string, unknown>): string {
  const enableGrove = annotations[ANNOTATION_ENABLE_GROVE];
  return typeof enableGrove === 'string' && enableGrove.toLowerCase() === 'false' ? WORKLOAD_PROVIDER_COMPONENT : WORKLOAD_PROVIDER_GROVE;
}

const PROVIDER_PATH = `/metadata/annotations/${ANNOTATION_WORKLOAD_PROVIDER.replace(/~/g, '~0').replace(/\//g, '~1')}`;
const ORIGIN_PATH = `/metadata/annotations/${ANNOTATION_OPERATOR_ORIGIN_VERSION.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** The CREATE stamp's operations under an existing `metadata` key. */
function metadataOperations(metadata: unknown, stampVersion: string, operations: DefaultingOperation[]): void {
  if (!isObject(metadata)) {
    // Not an object (null, a string, an array): the stamp replaces it with one holding only the annotations.
    operations.push({ op: 'replace', path: '/metadata', value: { annotations: stampedAnnotations({}, stampVersion) } });
    return;
  }
  if (!Object.hasOwn(metadata, 'annotations')) {
    operations.push({ op: 'add', path: '/metadata/annotations', value: stampedAnnotations({}, stampVersion) });
    return;
  }
  const before = metadata['annotations'];
  if (!isObject(before)) {
    operations.push({ op: 'replace', path: '/metadata/annotations', value: stampedAnnotations({}, stampVersion) });
    return;
  }
  const provider = workloadProvider(before);
  const hasProvider = Object.hasOwn(before, ANNOTATION_WORKLOAD_PROVIDER);
  if (hasProvider && before[ANNOTATION_WORKLOAD_PROVIDER] !== provider) operations.push({ op: 'replace', path: PROVIDER_PATH, value: provider });
  if (!hasProvider) operations.push({ op: 'add', path: PROVIDER_PATH, value: provider });
  if (!(ANNOTATION_OPERATOR_ORIGIN_VERSION in before)) operations.push({ op: 'add', path: ORIGIN_PATH, value: stampVersion });
}
