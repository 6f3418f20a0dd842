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
import { componentOverrideTarget } from '../availability.js';
import { isObject } from './common.js';

/** Target of a root-scope providerOverride (upstream-notes/dgd.md §2.2). */
export const ROOT_OVERRIDE_TARGET = 'PodCliqueSet';
/** Target of a role-scope providerOverride (upstream-notes/dgd.md §2.3). */
export const ROLE_OVERRIDE_TARGET = 'PodCliqueTemplateSpec';

/**
 * Defaults a DynamoGraphDeployment of either served version.
 * In: any object (`nvidia.com/v1beta1` or `nvidia.com/v1alpha1`; anything else is returned as a
 * copy). Out: a defaulted deep copy; the input is never modified. Failures: none (shapes it
 * does not understand are left alone for validation to report).
 * Source: dgd-reference "Configure native minimum availability", "Grove rollout budget
 * overrides"; upstream-notes/dgd.md §2.3, §3.3. Pure.
 */
export function defaultDgd<T>(object: T): T {
  const out = structuredClone(object);
  if (!isObject(out)) return out;
  if (out['apiVersion'] === DGD_V1ALPHA1) {
    defaultV1Alpha1(out);
    return out;
  }
  const spec = out['spec'];
  if (!isObject(spec)) return out;
  defaultTarget(spec['providerOverride'], ROOT_OVERRIDE_TARGET);
  const components = spec['components'];
  if (!Array.isArray(components)) return out;
  for (const component of components) {
    if (isObject(component)) defaultComponent(component, component);
  }
  return out;
}

/**
 * Defaults one component in place. `holder` is the object that carries `replicas` and
 * `providerOverride` (the component itself, or a v1alpha1 service); `shape` is the v1beta1
 * view used to decide the type and the override target.
 */
function defaultComponent(holder: Record<string, unknown>, shape: unknown): void {
  const component = typedComponent(shape);
  const isLpx = isObject(shape) && shape['type'] === 'lpx';
  if (!isLpx && holder['replicas'] === undefined) holder['replicas'] = 1;
  if (component !== undefined) defaultTarget(holder['providerOverride'], componentOverrideTarget(component));
  const roles = holder['roles'];
  if (!Array.isArray(roles)) return;
  for (const role of roles) if (isObject(role)) defaultTarget(role['providerOverride'], ROLE_OVERRIDE_TARGET);
}

function defaultTarget(override: unknown, target: string): void {
  if (!isObject(override)) return;
  if (override['target'] === undefined || override['target'] === '') override['target'] = target;
}

/** The component as the domain types it (multinode's nodeCount defaulted to 2, as the CRD does), or undefined when malformed. */
function typedComponent(shape: unknown): Component | undefined {
  const parsed = ComponentSchema.safeParse(shape);
  return parsed.success ? parsed.data : undefined;
}

/**
 * v1alpha1: the same defaults on `spec.services[<name>]`, deciding each from the converted
 * v1beta1 component of that name (type from `componentType`/`subComponentType`, target from
 * the component shape).
 */
function defaultV1Alpha1(object: Record<string, unknown>): void {
  const spec = object['spec'];
  if (!isObject(spec)) return;
  defaultTarget(spec['providerOverride'], ROOT_OVERRIDE_TARGET);
  const services = spec['services'];
  if (!isObject(services)) return;
  const converted = convertDgdV1Alpha1(object);
  if (!converted.ok) return;
  const convertedSpec = converted.object['spec'];
  const components = isObject(convertedSpec) && Array.isArray(convertedSpec['components']) ? (convertedSpec['components'] as unknown[]) : [];
  const byName = new Map<unknown, unknown>(components.filter(isObject).map((c) => [c['name'], c]));
  for (const [name, service] of Object.entries(services)) {
    if (isObject(service)) defaultComponent(service, byName.get(name));
  }
}
