/**
 * LPX component admission: the `lpx.enabled` gate, the composition of LPX components
 * (independent engines or one shared draft/target pair), roles and their pod templates, replicas,
 * and the LPX topology and provider-override restrictions.
 *
 * Source: ../shared/reference/dgd-reference.txt (LPX gate, "Configure native minimum
 * availability", "Grove rollout budget overrides"); upstream-notes/lpx.md §1.1, §1.3, §5.4;
 * upstream-notes/dgd.md §3.3 "LPX drafts", §3.5 "LPX".
 * @module
 */
import {
  DEFAULT_SCHEDULER_NAME,
  LPX_ROLE_AGENT,
  LPX_ROLE_CONDUCTOR,
  LPX_SCHEDULER_NAME,
  MAIN_CONTAINER_NAME,
  type Component,
  type Dgd,
  type FieldIssue,
  type PodSpec,
} from '../../api/index.js';
import { LPX_LOCAL_PARTITIONS_RULE_MESSAGE, MAX_ATTEMPT_DEADLINE_SECONDS } from '../../api/index.js';
import { parseModelRegistryUrl, resolveBuildUrl } from '../lpx/model-registry.js';
import { componentPath, isDeepEqual, isObject, quoteList, type AdmissionContext, type LpxPair } from './common.js';

export const LPX_GATE_DETAIL = 'LPX components require lpx.enabled=true';
export const LPX_COMPOSITION_DETAIL = 'LPX components must each declare a conductor role or form a shared draft and target pair';
export const LPX_TOPOLOGY_DETAIL = 'LPX does not support Grove topologyConstraint';
/** Largest number of draft model instances in a shared pair (lpx.md §1.1). */
export const MAX_DRAFT_REPLICAS = 8;

const LPX_ROLES: readonly string[] = [LPX_ROLE_CONDUCTOR, LPX_ROLE_AGENT];

function hasConductor(component: Component): boolean {
  return (component.roles ?? []).some((r) => r.name === LPX_ROLE_CONDUCTOR);
}

/**
 * The shared draft/target pair, when the LPX components form one: exactly two LPX components,
 * one with a conductor role (the target, owning the serving endpoint and availability) and one
 * agent-only (the draft). Anything else with an agent-only LPX component is not a pair (see
 * {@link validateLpxComposition}). Source: lpx.md §1.1 "Speculative-decoding pair". Pure.
 */
export function findLpxPair(dgd: Pick<Dgd, 'spec'>): LpxPair | undefined {
  const indices = dgd.spec.components.flatMap((c, i) => (c.type === 'lpx' ? [i] : []));
  if (indices.length !== 2) return undefined;
  const [first, second] = indices as [number, number];
  const firstIsTarget = hasConductor(dgd.spec.components[first] as Component);
  const secondIsTarget = hasConductor(dgd.spec.components[second] as Component);
  if (firstIsTarget === secondIsTarget) return undefined;
  return firstIsTarget ? { targetIndex: first, draftIndex: second } : { targetIndex: second, draftIndex: first };
}

/**
 * validateLpxGate: with `lpx.enabled=false`, "admission rejects new or changed LPX components but
 * permits otherwise valid updates that leave them unchanged, and deletion". A component counts
 * as unchanged when the stored component of the same name is structurally equal (reordering the
 * list does not change it). Deletion never reaches validation.
 * Failures: Forbidden at `spec.components[i].type` {@link LPX_GATE_DETAIL}.
 * Source: dgd-reference (LPX note); lpx.md §1.3 "The lpx.enabled=false gate", §5.4. Pure.
 */
export function validateLpxGate(ctx: Pick<AdmissionContext, 'dgd' | 'config' | 'oldComponents'>): FieldIssue[] {
  if (ctx.config.lpxEnabled) return [];
  return ctx.dgd.spec.components.flatMap((component, index) => {
    if (component.type !== 'lpx') return [];
    const old = ctx.oldComponents.get(component.name);
    if (old !== undefined && isDeepEqual(old, component)) return [];
    return [{ path: `${componentPath(index)}.type`, type: 'Forbidden' as const, detail: LPX_GATE_DETAIL }];
  });
}

/**
 * validateLpxComposition: every LPX component declares a conductor role, or the LPX components
 * are exactly one shared draft (agent only) and its target (agent + conductor).
 * Failures: Forbidden at `spec.components` {@link LPX_COMPOSITION_DETAIL}. Source: lpx.md §1.3. Pure.
 */
export function validateLpxComposition(ctx: Pick<AdmissionContext, 'dgd' | 'lpxPair'>): FieldIssue[] {
  const lpx = ctx.dgd.spec.components.filter((c) => c.type === 'lpx');
  if (lpx.every(hasConductor) || ctx.lpxPair !== undefined) return [];
  return [{ path: 'spec.components', type: 'Forbidden', detail: LPX_COMPOSITION_DETAIL }];
}

/**
 * validateLpxGraph: graph-level settings LPX cannot honour when any component is LPX.
 * Failures: Forbidden at `spec.topologyConstraint` {@link LPX_TOPOLOGY_DETAIL}; at
 * `spec.providerOverride` "LPX does not support Grove topology overrides on the deployment"; at
 * `spec.experimental.kvTransferPolicy` "is not supported when an LPX component is selected".
 * Source: dgd-reference "LPX topology overrides remain unsupported"; lpx.md §1.3 "Topology restrictions". Pure.
 */
export function validateLpxGraph(ctx: Pick<AdmissionContext, 'dgd'>): FieldIssue[] {
  const { spec } = ctx.dgd;
  if (!spec.components.some((c) => c.type === 'lpx')) return [];
  const issues: FieldIssue[] = [];
  if (spec.topologyConstraint !== undefined) issues.push({ path: 'spec.topologyConstraint', type: 'Forbidden', detail: LPX_TOPOLOGY_DETAIL });
  if (spec.providerOverride !== undefined) issues.push({ path: 'spec.providerOverride', type: 'Forbidden', detail: 'LPX does not support Grove topology overrides on the deployment' });
  if (spec.experimental?.['kvTransferPolicy'] !== undefined) {
    issues.push({ path: 'spec.experimental.kvTransferPolicy', type: 'Forbidden', detail: 'is not supported when an LPX component is selected' });
  }
  return issues;
}

/**
 * validateLpxComponent: one LPX component.
 * - `lpx.buildId` non-blank (Required "LPX component requires a buildId");
 * - explicit replicas positive (Invalid "replicas must be positive when type is lpx"); no
 *   `scalingAdapter` (Forbidden "scalingAdapter is not supported when type is lpx");
 * - pod templates only on roles (Invalid at `spec.components[i]` "LPX Pod templates belong to roles");
 * - roles: only `conductor` and `agent`, `agent` required, each with a podTemplate, see {@link validateLpxRoleTemplate};
 * - no typed `topologyConstraint` and no topology in its providerOverride; no role providerOverride;
 * - a shared draft: replicas 1..8, no modelRef, legacy minAvailable omitted or 1, no providerOverride;
 *   its target: replicas 1.
 * Source: dgd-reference ("Explicit LPX DGD replicas remain positive", "A shared LPX draft has no
 * independent availability override", "LPX topology overrides remain unsupported"); lpx.md §1.1, §1.3. Pure.
 */
export function validateLpxComponent(ctx: Pick<AdmissionContext, 'lpxPair'> & Partial<Pick<AdmissionContext, 'config' | 'oldComponents'>>, component: Component, index: number): FieldIssue[] {
  if (component.type !== 'lpx') return validateOrdinarySchedulerName(component, index);
  const at = componentPath(index);
  const old = ctx.oldComponents?.get(component.name);
  const issues: FieldIssue[] = [...validateLpxStanza(component, index), ...validateLegacyLocalPartitions(component, index)];
  if (ctx.config !== undefined && (old === undefined || !isDeepEqual(old.lpx, component.lpx))) issues.push(...validateLpxBuildId(ctx.config.modelRegistryUrl, component, index));
  const isDraft = ctx.lpxPair?.draftIndex === index;
  const isTarget = ctx.lpxPair?.targetIndex === index;

  const buildId = component.lpx?.['buildId'];
  if (component.lpx !== undefined && (typeof buildId !== 'string' || buildId.trim() === '')) {
    issues.push({ path: `${at}.lpx.buildId`, type: 'Required', detail: 'LPX component requires a buildId' });
  }
  if (component.replicas !== undefined) {
    if (isDraft && (component.replicas < 1 || component.replicas > MAX_DRAFT_REPLICAS)) {
      issues.push({ path: `${at}.replicas`, type: 'Invalid', value: component.replicas, detail: `draft replicas must be between 1 and ${MAX_DRAFT_REPLICAS}` });
    } else if (!isDraft && component.replicas === 0) {
      issues.push({ path: `${at}.replicas`, type: 'Invalid', value: 0, detail: 'replicas must be positive when type is lpx' });
    } else if (isTarget && component.replicas !== 1) {
      issues.push({ path: `${at}.replicas`, type: 'Invalid', value: component.replicas, detail: 'shared target replicas must be one' });
    }
  }
  if (component.scalingAdapter !== undefined) issues.push({ path: `${at}.scalingAdapter`, type: 'Forbidden', detail: 'scalingAdapter is not supported when type is lpx' });
  if (component.podTemplate !== undefined) issues.push({ path: at, type: 'Invalid', value: 'object', detail: 'LPX Pod templates belong to roles' });
  if (component.topologyConstraint !== undefined) issues.push({ path: `${at}.topologyConstraint`, type: 'Forbidden', detail: LPX_TOPOLOGY_DETAIL });

  if (isDraft) {
    if (component.modelRef !== undefined) issues.push({ path: `${at}.modelRef`, type: 'Forbidden', detail: 'the shared target owns the serving endpoint' });
    if (component.minAvailable !== undefined && component.minAvailable !== 1) {
      issues.push({ path: `${at}.minAvailable`, type: 'Forbidden', detail: 'draft minAvailable must be omitted or 1; the shared target owns minimum availability' });
    }
    if (component.providerOverride !== undefined) issues.push({ path: `${at}.providerOverride`, type: 'Forbidden', detail: 'shared LPX draft availability belongs to the target component' });
  } else if (component.providerOverride?.value['topologyConstraint'] !== undefined) {
    issues.push({ path: `${at}.providerOverride`, type: 'Forbidden', detail: 'LPX component does not support Grove topology overrides' });
  }

  const roles = component.roles ?? [];
  if (!roles.some((r) => r.name === LPX_ROLE_AGENT)) issues.push({ path: `${at}.roles`, type: 'Required', detail: `must contain the "${LPX_ROLE_AGENT}" role` });
  roles.forEach((role, roleIndex) => {
    const roleAt = `${at}.roles[${roleIndex}]`;
    if (!LPX_ROLES.includes(role.name)) {
      issues.push({ path: `${roleAt}.name`, type: 'NotSupported', value: role.name, detail: `supported values: ${quoteList(LPX_ROLES)}` });
      return;
    }
    if (role.providerOverride !== undefined) issues.push({ path: `${roleAt}.providerOverride`, type: 'Forbidden', detail: 'LPX roles do not support provider overrides' });
    if (role.podTemplate === undefined) {
      issues.push({
        path: `${roleAt}.podTemplate`,
        type: 'Required',
        detail: role.name === LPX_ROLE_CONDUCTOR ? 'LPX conductor requires an explicit podTemplate' : 'the LPX agent role requires a podTemplate',
      });
      return;
    }
    issues.push(...validateLpxRoleTemplate(role.name, role.podTemplate.spec ?? {}, `${roleAt}.podTemplate.spec`));
  });
  return issues;
}

/** Pod-spec fields LPX owns on every role (lpx.md §1.3 "Pod-spec fields that LPX owns"). */
const ROLE_OWNED_FIELDS: readonly (readonly [string, string])[] = [
  ['hostname', 'LPX owns role addressing and placement'],
  ['subdomain', 'LPX owns role addressing and placement'],
  ['nodeName', 'LPX owns role addressing and placement'],
  ['topologySpreadConstraints', 'LPX owns role placement'],
];
/** Pod-spec fields LPX owns on the agent role only. */
const AGENT_OWNED_FIELDS: readonly (readonly [string, string])[] = [
  ['nodeSelector', 'LPX exclusively owns Agent node selection'],
  ['schedulingGates', 'Grove and LPX own Agent scheduling gates'],
  ['resourceClaims', 'node-local LPX Agents cannot use ResourceClaims'],
];

/**
 * validateLpxRoleTemplate: one LPX role's pod spec: a `main` container; a non-empty image on
 * every container and init container; no container named `agent` in the agent role; no `runtime`
 * init container (Dynamo sidecar mode); and none of the fields LPX owns.
 * Failures (under `spec.components[i].roles[j].podTemplate.spec`): Required `.containers`
 * "LPX <role> component requires a "main" runtime container"; Required `.containers[k].image`
 * "must specify a non-empty image"; Forbidden `.containers[k].name` "LPX reserves "agent" for the
 * materialized role container"; Forbidden `.initContainers[k].name` "Dynamo sidecar mode is
 * unsupported for LPX" (our wording); Forbidden at each owned field. Source: lpx.md §1.3. Pure.
 */
export function validateLpxRoleTemplate(role: string, spec: PodSpec, at: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const isAgent = role === LPX_ROLE_AGENT;
  const containers = spec.containers ?? [];
  if (!containers.some((c) => c.name === MAIN_CONTAINER_NAME)) {
    issues.push({ path: `${at}.containers`, type: 'Required', detail: `LPX ${role} component requires a "${MAIN_CONTAINER_NAME}" runtime container` });
  }
  for (const [list, items] of [['containers', containers], ['initContainers', spec.initContainers ?? []]] as const) {
    items.forEach((container, k) => {
      if ((container.image ?? '').trim() === '') issues.push({ path: `${at}.${list}[${k}].image`, type: 'Required', detail: 'must specify a non-empty image' });
      if (isAgent && container.name === LPX_ROLE_AGENT) issues.push({ path: `${at}.${list}[${k}].name`, type: 'Forbidden', detail: `LPX reserves "${LPX_ROLE_AGENT}" for the materialized role container` });
      if (list === 'initContainers' && container.name === 'runtime') issues.push({ path: `${at}.${list}[${k}].name`, type: 'Forbidden', detail: 'Dynamo sidecar mode is unsupported for LPX' });
    });
  }
  const fields = spec as Record<string, unknown>;
  const schedulerName = fields['schedulerName'];
  if (schedulerName !== undefined && schedulerName !== '' && schedulerName !== DEFAULT_SCHEDULER_NAME) {
    issues.push({ path: `${at}.schedulerName`, type: 'Forbidden', detail: 'LPX owns role scheduler selection' });
  }
  for (const [field, detail] of [...ROLE_OWNED_FIELDS, ...(isAgent ? AGENT_OWNED_FIELDS : [])]) {
    if (fields[field] !== undefined && fields[field] !== null) issues.push({ path: `${at}.${field}`, type: 'Forbidden', detail });
  }
  const affinity = fields['affinity'];
  if (isAgent && isObject(affinity)) {
    const nodeAffinity = affinity['nodeAffinity'];
    const isRequiredNodeAffinityOnly =
      Object.keys(affinity).every((k) => k === 'nodeAffinity') && (nodeAffinity === undefined || (isObject(nodeAffinity) && Object.keys(nodeAffinity).every((k) => k === 'requiredDuringSchedulingIgnoredDuringExecution')));
    if (!isRequiredNodeAffinityOnly) issues.push({ path: `${at}.affinity`, type: 'Forbidden', detail: 'node-local LPX supports only required nodeAffinity' });
  }
  return issues;
}

/**
 * An ordinary component may not select the LPX scheduler (lpx.md §1.3): Forbidden at
 * `...podTemplate.spec.schedulerName` "LPX schedulerName is controller-owned; declare an LPX
 * component instead", on its own template and on its role templates.
 */
function validateOrdinarySchedulerName(component: Component, index: number): FieldIssue[] {
  const at = componentPath(index);
  const templates = [
    { path: `${at}.podTemplate.spec.schedulerName`, spec: component.podTemplate?.spec },
    ...(component.roles ?? []).map((role, j) => ({ path: `${at}.roles[${j}].podTemplate.spec.schedulerName`, spec: role.podTemplate?.spec })),
  ];
  return templates
    .filter(({ spec }) => (spec as Record<string, unknown> | undefined)?.['schedulerName'] === LPX_SCHEDULER_NAME)
    .map(({ path }) => ({ path, type: 'Forbidden' as const, detail: 'LPX schedulerName is controller-owned; declare an LPX component instead' }));
}

/** Refusal text of the LPX checkpoint stanza (lpx.md §1.3 "Checkpoint refusal", the generic experimental rule). */
const LPX_CHECKPOINT_DETAIL = 'checkpoint functionality is supported only for worker, prefill, and decode components';
/** Largest compiler partition id in design D's `localPartitions.ids` (lpx.md §1.1: items 0..4294967295). */
const MAX_LEGACY_PARTITION_ID = 4_294_967_295;

/**
 * validateLpxStanza: the bounds of the `lpx` stanza, as the upstream CRD schema and CEL state them:
 * - `lpx.scheduling.attemptDeadlineSeconds` a whole number in 1..9223372036 (the max keeps
 *   seconds x 1e9 inside int64): Invalid "should be greater than or equal to 1" / "should be less
 *   than or equal to 9223372036";
 * - `lpx.experimental.localPartitions` (D+), see {@link validateLpxLocalPartitions};
 * - `lpx.checkpoint` and `lpx.experimental.checkpoint` (D+'s place for it): Forbidden, as
 *   `experimental.checkpoint` is for LPX ("checkpoint functionality is supported only for worker,
 *   prefill, and decode components").
 * Design D's `lpx.localPartitions` is checked by {@link validateLegacyLocalPartitions}.
 * Source: upstream-notes/lpx.md §1.1 (LPXConfig), §1.3 "Schema" and "Checkpoint refusal";
 * lpx-integration-review round 1 ("the LPX checkpoint stanza. Admission now refuses it"). Pure.
 */
export function validateLpxStanza(component: Component, index: number): FieldIssue[] {
  const at = `${componentPath(index)}.lpx`;
  const lpx = component.lpx ?? {};
  const issues: FieldIssue[] = [];
  const scheduling = lpx['scheduling'];
  const deadline = isObject(scheduling) ? scheduling['attemptDeadlineSeconds'] : undefined;
  if (deadline !== undefined) {
    const path = `${at}.scheduling.attemptDeadlineSeconds`;
    if (typeof deadline !== 'number' || !Number.isInteger(deadline)) issues.push({ path, type: 'Invalid', value: deadline, detail: 'must be an integer' });
    else if (deadline < 1) issues.push({ path, type: 'Invalid', value: deadline, detail: `${path} in body should be greater than or equal to 1` });
    else if (deadline > MAX_ATTEMPT_DEADLINE_SECONDS) issues.push({ path, type: 'Invalid', value: deadline, detail: `${path} in body should be less than or equal to ${MAX_ATTEMPT_DEADLINE_SECONDS}` });
  }
  const experimental = isObject(lpx['experimental']) ? lpx['experimental'] : {};
  const selection = experimental['localPartitions'];
  if (isObject(selection)) issues.push(...validateLpxLocalPartitions(selection, `${at}.experimental.localPartitions`));
  if (lpx['checkpoint'] !== undefined) issues.push({ path: `${at}.checkpoint`, type: 'Forbidden', detail: LPX_CHECKPOINT_DETAIL });
  if (experimental['checkpoint'] !== undefined) issues.push({ path: `${at}.experimental.checkpoint`, type: 'Forbidden', detail: LPX_CHECKPOINT_DETAIL });
  return issues;
}

/**
 * validateLpxLocalPartitions: `lpx.experimental.localPartitions{mode: All|IDs, ids}` (D+, upstream
 * `LPXLocalPartitions`): upstream's CEL rule "ids is required when mode is IDs and forbidden
 * otherwise" (Invalid at the selection, without a value, as the API server prints this CEL failure),
 * and `ids` a set (Duplicate at `.ids[k]`). The mode enum, `ids` MinItems 1 and the item bounds
 * 0..4294967295 are the schema's (shared/api/lpx-local-partitions.ts; admission reports them from
 * its structural parse). In: the selection as written and its path. Pure.
 */
export function validateLpxLocalPartitions(selection: Readonly<Record<string, unknown>>, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const ids = selection['ids'];
  const isIdsMode = selection['mode'] === 'IDs';
  // No value: the API server (v1.35, the harness's) prints this CEL failure as `Invalid value: <message>`.
  if (isIdsMode !== (ids !== undefined)) issues.push({ path, type: 'Invalid', detail: LPX_LOCAL_PARTITIONS_RULE_MESSAGE });
  if (Array.isArray(ids)) {
    const seen = new Set<unknown>();
    ids.forEach((id: unknown, k) => {
      if (seen.has(id)) issues.push({ path: `${path}.ids[${k}]`, type: 'Duplicate', value: id, detail: '' });
      seen.add(id);
    });
  }
  return issues;
}

/**
 * validateLegacyLocalPartitions: design D's `lpx.localPartitions{all|ids}`, which D+ moved to
 * `lpx.experimental.localPartitions{mode: All|IDs, ids}`. It stays accepted with design D's
 * bounds, so manifests written for D keep working (lpx/derive.ts `localPartitionSelection` reads
 * either form, the newer first):
 * - either `all: true` or `ids`, not both and not neither (Invalid "set either all: true or ids",
 *   upstream's CEL); `ids` non-empty, unique, each 0..4294967295 (the schema's bounds);
 * - not together with `lpx.experimental.localPartitions` (Invalid, our text: two selections of
 *   the same partitions would be ambiguous).
 * Each new or changed use is warned about ({@link legacyLocalPartitionsWarnings}).
 * Source: upstream-notes/lpx.md §1.1 `localPartitions` (D: "CEL: set either all: true or ids";
 * "D+ docs move it to lpx.experimental.localPartitions"). Pure.
 */
export function validateLegacyLocalPartitions(component: Component, index: number): FieldIssue[] {
  const partitions = component.lpx?.['localPartitions'];
  if (partitions === undefined) return [];
  const path = `${componentPath(index)}.lpx.localPartitions`;
  const issues: FieldIssue[] = [];
  const experimental = component.lpx?.['experimental'];
  if (isObject(experimental) && experimental['localPartitions'] !== undefined) {
    issues.push({ path, type: 'Invalid', value: 'object', detail: 'set either lpx.localPartitions or lpx.experimental.localPartitions, not both' });
  }
  const all = isObject(partitions) ? partitions['all'] : undefined;
  const ids = isObject(partitions) ? partitions['ids'] : undefined;
  if ((all === true) === (ids !== undefined)) issues.push({ path, type: 'Invalid', value: 'object', detail: 'set either all: true or ids' });
  if (Array.isArray(ids)) {
    if (ids.length === 0) issues.push({ path: `${path}.ids`, type: 'Invalid', value: 'array', detail: `${path}.ids in body should have at least 1 items` });
    const seen = new Set<unknown>();
    ids.forEach((id: unknown, k) => {
      if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id > MAX_LEGACY_PARTITION_ID) issues.push({ path: `${path}.ids[${k}]`, type: 'Invalid', value: id, detail: `must be an integer from 0 to ${MAX_LEGACY_PARTITION_ID}` });
      else if (seen.has(id)) issues.push({ path: `${path}.ids[${k}]`, type: 'Duplicate', value: id, detail: '' });
      seen.add(id);
    });
  } else if (ids !== undefined) issues.push({ path: `${path}.ids`, type: 'Invalid', value: ids, detail: 'must be a list of partition ids' });
  return issues;
}

/**
 * legacyLocalPartitionsWarnings: a deprecation warning for each LPX component that introduces or
 * changes design D's `lpx.localPartitions` (unchanged stored values are not warned about again),
 * naming the D+ replacement. The text is ours (upstream moved the field without a warning).
 * Source: upstream-notes/lpx.md §1.1 `localPartitions` ("D+ docs move it to
 * lpx.experimental.localPartitions{mode: All|IDs, ids}"). Pure.
 */
export function legacyLocalPartitionsWarnings(ctx: Pick<AdmissionContext, 'dgd' | 'oldComponents'>): string[] {
  const warnings: string[] = [];
  ctx.dgd.spec.components.forEach((component, index) => {
    const legacy = component.type === 'lpx' ? component.lpx?.['localPartitions'] : undefined;
    if (legacy === undefined || isDeepEqual(ctx.oldComponents.get(component.name)?.lpx?.['localPartitions'], legacy)) return;
    warnings.push(`${componentPath(index)}.lpx.localPartitions ("${component.name}"): deprecated; use lpx.experimental.localPartitions{mode: All|IDs, ids} instead (all: true is mode: All; ids is mode: IDs with the same ids)`);
  });
  return warnings;
}

/**
 * validateLpxBuildId: with `lpx.modelRegistryURL` configured, the build id must resolve inside
 * the registry: an absolute id is refused ("build ID %q must be relative when model registry URL
 * is configured") and so is one escaping it ("build ID %q must remain within the configured model
 * registry"). Without a registry admission refuses nothing (the reconcile reports a relative id
 * as "model registry URL is not configured"). Checked for new or changed `lpx`
 * stanzas only, so a registry change never blocks unrelated edits.
 * Failures: Invalid at `spec.components[i].lpx.buildId` with upstream's BuildURL error.
 * Source: upstream-notes/lpx.md §4 `BuildURL`; lpx-integration-review round 1 (model_registry.go:129). Pure.
 */
export function validateLpxBuildId(modelRegistryUrl: string | undefined, component: Component, index: number): FieldIssue[] {
  const buildId = component.lpx?.['buildId'];
  if (typeof buildId !== 'string' || buildId.trim() === '') return [];
  const registry = parseModelRegistryUrl(modelRegistryUrl);
  // Without a registry nothing is refused here: the reconcile reports an unresolvable id.
  if (!registry.ok || registry.registry === undefined) return [];
  const url = resolveBuildUrl(registry.registry, buildId);
  return url.ok ? [] : [{ path: `${componentPath(index)}.lpx.buildId`, type: 'Invalid', value: buildId, detail: url.error }];
}
