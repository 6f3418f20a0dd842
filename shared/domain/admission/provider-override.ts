/**
 * providerOverride admission: apiVersion, the target resolved from the scope and component
 * shape, value ownership per target, typed topology versus native topology overrides, and the
 * immutability of apiVersion and target.
 *
 * Scopes: the graph root (`spec.providerOverride`, target `PodCliqueSet`), a component
 * (`PodCliqueTemplateSpec` standalone, `PodCliqueScalingGroupConfig` for scaling-group and LPX
 * components) and a multinode role (`PodCliqueTemplateSpec`). LPX-specific refusals (root override
 * beside LPX, LPX roles, shared drafts, LPX topology) are in ./lpx.ts and take precedence: those
 * overrides are not checked again here.
 *
 * Not checked, by decision: the upstream identity steps 1-3 (an override-capable context, and
 * the controller-materialized `nvidia.com/workload-provider` naming Grove,
 * upstream-notes/dgd.md §3.2). This control plane always renders DGD components through Grove.
 *
 * Source: ../shared/reference/dgd-reference.txt "ProviderOverride", "Configure native minimum
 * availability", "Grove rollout budget overrides"; upstream-notes/dgd.md §2.3, §3.2.
 * @module
 */
import { GROVE_API_VERSION, TopologyConstraintSchema, type Component, type FieldIssue, type ProviderOverride } from '../../api/index.js';
import { componentOverrideTarget, type ProviderOverrideTarget } from '../dgd/availability.js';
import { isMultinode } from '../dgd/names.js';
import { componentPath, isDeepEqual, isObject, isPositiveInt32, isSharedDraft, quoteList, type AdmissionContext } from './common.js';
import { ROLE_OVERRIDE_TARGET, ROOT_OVERRIDE_TARGET } from './defaulting.js';

/** Text for a key the target does not let users write (upstream-notes/dgd.md §3.2 step 7). */
export const OWNERSHIP_DETAIL = 'is Dynamo-owned or not enabled for provider override';
/** Text for an override that writes topology beside the typed topology API (upstream-notes/dgd.md §3.2 step 11). */
export const TYPED_TOPOLOGY_DETAIL =
  'cannot be combined with spec.topologyConstraint or components[].topologyConstraint; use either the typed topology API or provider-native Grove topology overrides';
/** A role-scope budget (upstream-notes/dgd.md §3.2 step 9). */
export const ROLE_BUDGET_DETAIL = "member cliques use the owning component's rollingUpdate budget";
/**
 * A graph-root budget. Upstream gives only the role-scope text; the root has no member cliques,
 * so this wording names where the budget goes ("Set the budget on the component, never on its
 * member roles or the graph root", dgd-reference).
 */
export const ROOT_BUDGET_DETAIL = 'the rollingUpdate budget is set per component in spec.components[*].providerOverride, never on the graph root';

/**
 * validateProviderOverrides: every providerOverride of the DGD (root, components, roles) for
 * apiVersion, target and value ownership; then typed topology versus topology overrides; then,
 * on UPDATE, apiVersion and target immutability.
 * Failures (paths under the override, e.g. `spec.components[1].providerOverride`):
 * - NotSupported `.apiVersion` (supported: "grove.io/v1alpha1");
 * - Forbidden (override) when role scope is used on a non-multinode component;
 * - Required `.target` "must be defaulted from the provider context"; Invalid `.target` "must
 *   match the provider-context target "<T>"";
 * - Forbidden `.value.<key>` {@link OWNERSHIP_DETAIL}; Required `.value` "topologyConstraint,
 *   minAvailable or rollingUpdate is required"; Required/Invalid native `minAvailable` ("is
 *   required", "must be a positive 32-bit integer"); `rollingUpdate` holding only
 *   `maxUnavailable` ("is required", "must be a positive 32-bit integer");
 * - role/root: Forbidden `.value.spec.minAvailable` "minAvailable (N) belongs to the owning
 *   component"; Forbidden `.value.rollingUpdate` {@link ROLE_BUDGET_DETAIL} / {@link ROOT_BUDGET_DETAIL};
 * - Forbidden at the topology path {@link TYPED_TOPOLOGY_DETAIL} ("A budget-only override can
 *   coexist with typed topology constraints; an override that also writes topologyConstraint
 *   retains the existing restriction", dgd-reference);
 * - Invalid `.apiVersion` / `.target` "field is immutable" (UPDATE).
 * Source: dgd-reference "ProviderOverride", "Grove rollout budget overrides"; upstream-notes/dgd.md §3.2. Pure.
 */
export function validateProviderOverrides(ctx: AdmissionContext): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const { spec } = ctx.dgd;
  const hasLpx = spec.components.some((c) => c.type === 'lpx');
  const hasTypedTopology = spec.topologyConstraint !== undefined || spec.components.some((c) => c.topologyConstraint !== undefined);

  if (spec.providerOverride !== undefined && !hasLpx) {
    const at = 'spec.providerOverride';
    const identity = validateIdentity(spec.providerOverride, at, ROOT_OVERRIDE_TARGET);
    issues.push(...identity);
    if (identity.length === 0) {
      issues.push(...validateRootValue(spec.providerOverride.value, `${at}.value`));
      const template = childObject(childObject(spec.providerOverride.value, 'spec'), 'template');
      if (hasTypedTopology && template?.['topologyConstraint'] != null) {
        issues.push({ path: `${at}.value.spec.template.topologyConstraint`, type: 'Forbidden', detail: TYPED_TOPOLOGY_DETAIL });
      }
    }
  }

  spec.components.forEach((component, index) => {
    const cp = componentPath(index);
    const override = component.providerOverride;
    if (override !== undefined && !isSharedDraft(ctx, index)) {
      const at = `${cp}.providerOverride`;
      const target = componentOverrideTarget(component);
      const identity = validateIdentity(override, at, target);
      issues.push(...identity);
      if (identity.length === 0) {
        issues.push(...validateComponentValue(override.value, `${at}.value`, target));
        if (hasTypedTopology && component.type !== 'lpx' && override.value['topologyConstraint'] != null) {
          issues.push({ path: `${at}.value.topologyConstraint`, type: 'Forbidden', detail: TYPED_TOPOLOGY_DETAIL });
        }
      }
    }
    if (component.type === 'lpx') return;
    (component.roles ?? []).forEach((role, roleIndex) => {
      if (role.providerOverride === undefined) return;
      const at = `${cp}.roles[${roleIndex}].providerOverride`;
      if (!isMultinode(component)) {
        issues.push({ path: at, type: 'Forbidden', detail: 'role-scope provider overrides require a multinode component' });
        return;
      }
      const identity = validateIdentity(role.providerOverride, at, ROLE_OVERRIDE_TARGET);
      issues.push(...identity);
      if (identity.length > 0) return;
      issues.push(...validateRoleValue(role.providerOverride.value, `${at}.value`));
      if (hasTypedTopology && role.providerOverride.value['topologyConstraint'] != null) {
        issues.push({ path: `${at}.value.topologyConstraint`, type: 'Forbidden', detail: TYPED_TOPOLOGY_DETAIL });
      }
    });
  });

  issues.push(...validateOverrideIdentityImmutable(ctx));
  return issues;
}

/** apiVersion, then the target against the one the scope resolves to; the first failure stops the override's checks. */
function validateIdentity(override: ProviderOverride, at: string, expected: ProviderOverrideTarget): FieldIssue[] {
  if (override.apiVersion !== GROVE_API_VERSION) {
    return [{ path: `${at}.apiVersion`, type: 'NotSupported', value: override.apiVersion, detail: `supported values: ${quoteList([GROVE_API_VERSION])}` }];
  }
  if (override.target === undefined || override.target === '') return [{ path: `${at}.target`, type: 'Required', detail: 'must be defaulted from the provider context' }];
  if (override.target !== expected) return [{ path: `${at}.target`, type: 'Invalid', value: override.target, detail: `must match the provider-context target "${expected}"` }];
  return [];
}

function childObject(node: unknown, key: string): Record<string, unknown> | undefined {
  if (!isObject(node)) return undefined;
  const child = node[key];
  return isObject(child) ? child : undefined;
}

function schemaMismatch(path: string, target: string, what: string, value: unknown): FieldIssue {
  return { path, type: 'Invalid', value, detail: `does not match the registered ${target} schema: ${what}` };
}

function forbiddenKeys(node: Record<string, unknown>, at: string, allowed: readonly string[]): FieldIssue[] {
  return Object.keys(node)
    .filter((key) => !allowed.includes(key))
    .map((key) => ({ path: `${at}.${key}`, type: 'Forbidden' as const, detail: OWNERSHIP_DETAIL }));
}

/** A Grove topologyConstraint, decoded into its registered type. */
function validateTopology(value: unknown, at: string, target: string): FieldIssue[] {
  if (!isObject(value)) return [schemaMismatch(at, target, 'topologyConstraint must be an object', value)];
  const parsed = TopologyConstraintSchema.safeParse(value);
  if (parsed.success) return [];
  return parsed.error.issues.map((issue) => schemaMismatch(at, target, `topologyConstraint${issue.path.map((p) => `.${String(p)}`).join('')}: ${issue.message}`, value));
}

/**
 * A native minimum: present and a positive int32 ("The effective minimum must be a positive
 * integer", dgd-reference; upstream-notes/dgd.md §3.2 step 7).
 */
export function validateNativeMinimumValue(value: unknown, at: string): FieldIssue[] {
  if (value === undefined || value === null) return [{ path: at, type: 'Required', detail: 'is required' }];
  if (!isPositiveInt32(value)) return [{ path: at, type: 'Invalid', value, detail: 'must be a positive 32-bit integer' }];
  return [];
}

/** `rollingUpdate`: an object with only `maxUnavailable`, a positive int32 ("Only maxUnavailable is enabled in this subtree", dgd-reference). */
function validateRollingUpdateValue(value: unknown, at: string, target: string): FieldIssue[] {
  if (!isObject(value)) return [schemaMismatch(at, target, 'rollingUpdate must be an object', value)];
  const issues = forbiddenKeys(value, at, ['maxUnavailable']);
  const budget = value['maxUnavailable'];
  if (budget === undefined || budget === null) issues.push({ path: `${at}.maxUnavailable`, type: 'Required', detail: 'is required' });
  else if (!isPositiveInt32(budget)) issues.push({ path: `${at}.maxUnavailable`, type: 'Invalid', value: budget, detail: 'must be a positive 32-bit integer' });
  return issues;
}

/** Root (`PodCliqueSet`): only `spec.template.topologyConstraint`, and it is required. */
function validateRootValue(value: Record<string, unknown>, at: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const key of Object.keys(value)) {
    if (key === 'spec') continue;
    if (key === 'rollingUpdate') issues.push({ path: `${at}.rollingUpdate`, type: 'Forbidden', detail: ROOT_BUDGET_DETAIL });
    else if (key === 'minAvailable') issues.push({ path: `${at}.minAvailable`, type: 'Forbidden', detail: `minAvailable (${JSON.stringify(value[key])}) belongs to the owning component` });
    else issues.push({ path: `${at}.${key}`, type: 'Forbidden', detail: OWNERSHIP_DETAIL });
  }
  const spec = value['spec'];
  if (spec === undefined || spec === null) return [...issues, { path: `${at}.spec.template.topologyConstraint`, type: 'Required', detail: 'is required' }];
  if (!isObject(spec)) return [...issues, schemaMismatch(`${at}.spec`, ROOT_OVERRIDE_TARGET, 'spec must be an object', spec)];
  for (const key of Object.keys(spec)) {
    if (key === 'template') continue;
    if (key === 'minAvailable') issues.push({ path: `${at}.spec.minAvailable`, type: 'Forbidden', detail: `minAvailable (${JSON.stringify(spec[key])}) belongs to the owning component` });
    else issues.push({ path: `${at}.spec.${key}`, type: 'Forbidden', detail: OWNERSHIP_DETAIL });
  }
  const template = spec['template'];
  if (template === undefined || template === null) return [...issues, { path: `${at}.spec.template.topologyConstraint`, type: 'Required', detail: 'is required' }];
  if (!isObject(template)) return [...issues, schemaMismatch(`${at}.spec.template`, ROOT_OVERRIDE_TARGET, 'template must be an object', template)];
  issues.push(...forbiddenKeys(template, `${at}.spec.template`, ['topologyConstraint']));
  const topology = template['topologyConstraint'];
  if (topology === undefined || topology === null) issues.push({ path: `${at}.spec.template.topologyConstraint`, type: 'Required', detail: 'is required' });
  else issues.push(...validateTopology(topology, `${at}.spec.template.topologyConstraint`, ROOT_OVERRIDE_TARGET));
  return issues;
}

/**
 * Component scope: `topologyConstraint`, the native minimum (`spec.minAvailable` for
 * `PodCliqueTemplateSpec`, `minAvailable` for `PodCliqueScalingGroupConfig`) and `rollingUpdate`.
 */
function validateComponentValue(value: Record<string, unknown>, at: string, target: ProviderOverrideTarget): FieldIssue[] {
  const isScalingGroup = target === 'PodCliqueScalingGroupConfig';
  const allowed = isScalingGroup ? ['topologyConstraint', 'minAvailable', 'rollingUpdate'] : ['topologyConstraint', 'spec', 'rollingUpdate'];
  const issues = forbiddenKeys(value, at, allowed);
  if (!allowed.some((key) => value[key] !== undefined)) issues.push({ path: at, type: 'Required', detail: 'topologyConstraint, minAvailable or rollingUpdate is required' });
  if (value['topologyConstraint'] !== undefined) issues.push(...validateTopology(value['topologyConstraint'], `${at}.topologyConstraint`, target));
  if (isScalingGroup && 'minAvailable' in value) issues.push(...validateNativeMinimumValue(value['minAvailable'], `${at}.minAvailable`));
  if (!isScalingGroup && 'spec' in value) {
    const spec = value['spec'];
    if (!isObject(spec)) issues.push(schemaMismatch(`${at}.spec`, target, 'spec must be an object', spec));
    else {
      issues.push(...forbiddenKeys(spec, `${at}.spec`, ['minAvailable']));
      issues.push(...validateNativeMinimumValue(spec['minAvailable'], `${at}.spec.minAvailable`));
    }
  }
  if ('rollingUpdate' in value) issues.push(...validateRollingUpdateValue(value['rollingUpdate'], `${at}.rollingUpdate`, target));
  return issues;
}

/** Role scope (`PodCliqueTemplateSpec` of a member clique): topology only ("Root and multinode role overrides remain topology-only", dgd-reference). */
function validateRoleValue(value: Record<string, unknown>, at: string): FieldIssue[] {
  const issues = forbiddenKeys(value, at, ['topologyConstraint', 'spec', 'rollingUpdate']);
  if (Object.keys(value).length === 0) issues.push({ path: at, type: 'Required', detail: 'topologyConstraint is required' });
  if (value['topologyConstraint'] !== undefined) issues.push(...validateTopology(value['topologyConstraint'], `${at}.topologyConstraint`, ROLE_OVERRIDE_TARGET));
  const spec = value['spec'];
  if (spec !== undefined) {
    if (!isObject(spec)) issues.push(schemaMismatch(`${at}.spec`, ROLE_OVERRIDE_TARGET, 'spec must be an object', spec));
    else {
      issues.push(...forbiddenKeys(spec, `${at}.spec`, ['minAvailable']));
      if ('minAvailable' in spec) issues.push({ path: `${at}.spec.minAvailable`, type: 'Forbidden', detail: `minAvailable (${JSON.stringify(spec['minAvailable'])}) belongs to the owning component` });
    }
  }
  if ('rollingUpdate' in value) issues.push({ path: `${at}.rollingUpdate`, type: 'Forbidden', detail: ROLE_BUDGET_DETAIL });
  return issues;
}

/** UPDATE: apiVersion and target of an override present before and after are immutable (upstream-notes/dgd.md §3.2 step 10). */
function validateOverrideIdentityImmutable(ctx: AdmissionContext): FieldIssue[] {
  if (ctx.old === undefined) return [];
  const issues: FieldIssue[] = [];
  const compare = (before: ProviderOverride | undefined, after: ProviderOverride | undefined, at: string): void => {
    if (before === undefined || after === undefined) return;
    if (before.apiVersion !== after.apiVersion) issues.push({ path: `${at}.apiVersion`, type: 'Invalid', value: after.apiVersion, detail: 'field is immutable' });
    if (before.target !== undefined && !isDeepEqual(before.target, after.target)) issues.push({ path: `${at}.target`, type: 'Invalid', value: after.target ?? null, detail: 'field is immutable' });
  };
  compare(ctx.old.spec.providerOverride, ctx.dgd.spec.providerOverride, 'spec.providerOverride');
  ctx.dgd.spec.components.forEach((component, index) => {
    const old: Component | undefined = ctx.oldComponents.get(component.name);
    if (old === undefined) return;
    compare(old.providerOverride, component.providerOverride, `${componentPath(index)}.providerOverride`);
    (component.roles ?? []).forEach((role, roleIndex) => {
      const oldRole = old.roles?.find((r) => r.name === role.name);
      compare(oldRole?.providerOverride, role.providerOverride, `${componentPath(index)}.roles[${roleIndex}].providerOverride`);
    });
  });
  return issues;
}
