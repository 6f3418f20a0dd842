/**
 * The LPX input revision and restart token the DGD hands to its LPXGraphDeployment.
 *
 * Source: ../shared/upstream-notes/lpx.md §2.1 ("How inputRevision is computed",
 * `LPXInputRevision`, newest design; "Restart token", `LPXRestartToken`); dgd-reference
 * "Grove rollout budget overrides" ("For LPX, budget edits advance the input revision").
 * @module
 */
import { createHash } from 'node:crypto';
import { ANNOTATION_GROVE_UPDATE_STRATEGY, type Component, type Dgd } from '../../api/index.js';
import { computeWorkerHash } from '../dgd/worker-hash.js';

/** DGD metadata annotations (and labels) that reach the LPX workload (lpx.md §2.1 `PropagatedAnnotations`). */
function isPropagatedKey(key: string): boolean {
  return (
    key.startsWith('kai.scheduler/') ||
    key === 'priorityClassName' ||
    key === 'project' ||
    key === 'user' ||
    key === 'scheduling.volcano.sh/queue-name' ||
    key === 'nvidia.com/dynamo-origin-version' ||
    key === 'nvidia.com/dynamo-workload-provider' ||
    key === ANNOTATION_GROVE_UPDATE_STRATEGY
  );
}

function filtered(record: Readonly<Record<string, string>> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(record ?? {}).filter(([key]) => isPropagatedKey(key)));
}

/** JSON with object keys sorted at every level, so equal inputs hash equally. */
export function sortedKeysJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedKeysJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${sortedKeysJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

function sortedRoles(component: Component): Component {
  if (component.roles === undefined) return component;
  return { ...component, roles: [...component.roles].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)) };
}

/**
 * lpxInputRevision: `sha256:` + hex(sha256(canonical JSON of the effective LPX inputs)): the LPX
 * components whole (roles sorted by name, list sorted by name), `spec.labels`, `spec.annotations`,
 * `spec.env`, `spec.priorityClassName`, `spec.topologyConstraint`, `spec.providerOverride`, the
 * propagated metadata annotations and labels (scheduler keys and the update-strategy
 * annotation), whether an EPP component exists, the restart token and the workers' hash.
 * Ordinary component edits outside the workers' hash do not change it; operator configuration
 * is deliberately left out. Source: lpx.md §2.1. Pure.
 */
export function lpxInputRevision(dgd: Dgd, restartToken: string): string {
  const components = dgd.spec.components
    .filter((c) => c.type === 'lpx')
    .map(sortedRoles)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const payload = {
    Components: components,
    Labels: dgd.spec.labels,
    Annotations: dgd.spec.annotations,
    Env: dgd.spec.env,
    PriorityClass: dgd.spec.priorityClassName,
    TopologyConstraint: dgd.spec.topologyConstraint,
    ProviderOverride: dgd.spec.providerOverride,
    PropagatedAnnotations: filtered(dgd.metadata.annotations),
    SchedulingLabels: filtered(dgd.metadata.labels),
    EPPEnabled: dgd.spec.components.some((c) => c.type === 'epp'),
    Restart: restartToken,
    ServingHash: computeWorkerHash(dgd),
  };
  return `sha256:${createHash('sha256').update(sortedKeysJson(payload)).digest('hex')}`;
}

/**
 * lpxRestartToken: advances only from the persisted restart state: when `spec.restart.id` is set
 * and equals `status.restart.observedID`, the token is that id; otherwise the previous token is
 * kept (another component restarting does not churn LPX). Upstream uses the restart state's
 * timestamp; this control plane records no restart timestamps, so the observed id stands for it.
 * In: the DGD (spec.restart, status.restart) and the LPXGD's current token ('' when none).
 * Source: lpx.md §2.1 "Restart token". Pure.
 */
export function lpxRestartToken(dgd: Dgd, previous: string): string {
  const id = dgd.spec.restart?.id;
  const observed = (dgd.status as { restart?: { observedID?: unknown } } | undefined)?.restart?.observedID;
  return id !== undefined && id !== '' && observed === id ? id : previous;
}
