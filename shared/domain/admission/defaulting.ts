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
import { ComponentSchema, DGD_V1ALPHA1, convertDgdV1Alpha1, type Component } from '../../api/index.js';
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

/** The component's shape as the domain types it (multinode's nodeCount defaulted to 2, as the CRD does), or undefined when malformed. */
function typedComponent(shape: unknown): Component | undefined {
  const parsed = ComponentShapeSchema.safeParse(shape);
  return parsed.success ? parsed.data : undefined;
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
