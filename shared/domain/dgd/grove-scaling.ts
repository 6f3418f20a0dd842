/**
 * Replica changes through Grove: which PodClique or PodCliqueScalingGroup carries a
 * component's replicas, whether Grove lets us change them now (the Coherent gate), the scale
 * writes still to make, and the template replicas that only seed creation.
 *
 * Source: ../shared/reference/dgd-reference.txt "Coherent capacity and disruption";
 * ../shared/upstream-notes/grove.md §A.2-§A.4, §A.6 "Replica propagation"; upstream-notes/dgd.md
 * §4.7 step 4; upstream `deploy/operator/internal/dynamo` `GroveScalingBlocked` and
 * `internal/controller/dgd_grove_scaler.go`.
 * @module
 */
import {
  GROVE_API_VERSION,
  PODCLIQUESCALINGGROUP_KIND,
  PODCLIQUE_KIND,
  PodCliqueSetSchema,
  type Component,
  type PodClique,
  type PodCliqueScalingGroup,
  type PodCliqueSet,
} from '../../api/index.js';
import { effectiveMinAvailable } from './availability.js';
import { componentBaseName, usesScalingGroup } from './names.js';
import type { RenderedObject } from './render.js';

/** A write to a Grove child's scale subresource (`podcliques/scale`, `podcliquescalinggroups/scale`). */
export interface ScaleIntent {
  readonly apiVersion: typeof GROVE_API_VERSION;
  readonly kind: typeof PODCLIQUE_KIND | typeof PODCLIQUESCALINGGROUP_KIND;
  readonly namespace: string;
  readonly name: string;
  /** The component whose `replicas` this carries. */
  readonly component: string;
  /** The new `spec.replicas`. */
  readonly replicas: number;
}

/**
 * Whether replica writes may go to Grove now, and if not, why:
 * - `PodCliqueSetWritePending`: this pass wrote the PodCliqueSet, and the write is not yet
 *   observed (the PodCliqueSet event that follows resumes scaling);
 * - `CoherentUpdateInProgress`: under Coherent, Grove has not acknowledged the current
 *   generation, or a rollout is still active.
 */
export type ScalingGate =
  | { readonly blocked: false }
  | { readonly blocked: true; readonly reason: 'PodCliqueSetWritePending' | 'CoherentUpdateInProgress' };

/**
 * The Grove child that carries a component's replicas: the PodCliqueScalingGroup
 * `<pcs>-0-<component>` for a scaling-group component, else the PodClique of that name
 * (upstream-notes/dgd.md §4.7 step 5; Grove's generated names, grove.md §A.8). Pure.
 */
export function componentChild(pcsName: string, component: Component): { readonly kind: ScaleIntent['kind']; readonly name: string } {
  return { kind: usesScalingGroup(component) ? PODCLIQUESCALINGGROUP_KIND : PODCLIQUE_KIND, name: `${pcsName}-0-${componentBaseName(component)}` };
}

/**
 * The template `replicas` of a component's clique or scaling group, which only seed the Grove
 * child at creation (grove.md §A.6 "Replica propagation"): the component's `replicas` (omitted
 * -> 1).
 *
 * A component at 0 replicas, and one held at 0 by a `WaitForCheckpoint` checkpoint that is not
 * ready (`gated`), seeds its effective minimum instead (at least 1), and the scale subresource
 * then brings the live child to 0 ({@link pendingScaleIntents}: the desired 0, see
 * {@link desiredChildReplicas}, differs from the seed). Why: Grove's webhook refuses a template
 * at 0 - a scaling group needs `replicas > 0` and `0 < minAvailable <= replicas`, and a clique's
 * `replicas` 0 is defaulted to 1 with the minimum kept, so any minimum above 1 is refused
 * (grove.md §A.5, §A.6; Grove `validatePodCliqueScalingGroupConfigs`, `validatePodCliqueSpec`):
 * "a Grove clique cannot rest at zero (grove#676)" (upstream `GenerateDynamoComponentsDeployments`).
 * Upstream Dynamo renders the 0 as is (`expandSingleNodeRoles`, `buildGroveScalingGroupConfig`;
 * for the gate `buildCliqueForRole`, `shouldGateGroveScalingGroupReplicas`), which Grove
 * defaults to 1 for a clique and refuses for a scaling group (issue 20, upstream reports
 * R12/R26); upstream's scaler then holds the gated child at 0 through the scale subresource
 * ("nil replicas are skipped, unless checkpoint-gated (then 0)", upstream-notes/dgd.md §4.7
 * step 4; `dgd_grove_scaler.go`), as this does. The Grove-side scale to zero is durable
 * ("Scaling an existing clique to zero afterwards does work", upstream elastic-EP design notes),
 * and the scale subresource is not intercepted by Grove's webhook (grove.md §A.6 "Webhook
 * registration scope"). The minimum itself is never lowered: it is immutable in Grove, and
 * "ordinary Grove components may scale to zero without clearing their minimum" (dgd-reference
 * "Configure native minimum availability"). Pure.
 */
export function templateReplicas(component: Component, gated: boolean): number {
  const replicas = gated ? 0 : (component.replicas ?? 1);
  return replicas > 0 ? replicas : Math.max(1, effectiveMinAvailable(component));
}

/**
 * The `spec.replicas` a component's Grove child is scaled to, or undefined when it is left to
 * whoever scales it: 0 while `gated` (a `WaitForCheckpoint` checkpoint not ready), else the
 * component's `replicas`, undefined when omitted ("nil replicas are skipped, unless
 * checkpoint-gated (then 0)", upstream-notes/dgd.md §4.7 step 4; upstream `dgd_grove_scaler.go`).
 * Once the checkpoint is ready the gate is released: the child goes to the component's
 * `replicas`. Pure.
 */
export function desiredChildReplicas(component: Component, gated: boolean): number | undefined {
  return gated ? 0 : component.replicas;
}

/** The observed PodCliqueSet as Grove's schema reads it, or undefined when absent or unreadable. Pure. */
export function readPodCliqueSet(object: Readonly<Record<string, unknown>> | undefined): PodCliqueSet | undefined {
  if (object === undefined) return undefined;
  const parsed = PodCliqueSetSchema.safeParse(object);
  return parsed.success ? parsed.data : undefined;
}

/**
 * True when Grove has acknowledged the PodCliqueSet's current configuration:
 * `status.observedGeneration` equals `metadata.generation`. Missing progress, or progress from
 * an older generation, acknowledges nothing ("Missing progress or completed progress from an
 * older generation does not acknowledge a new configuration", dgd-reference "Coherent capacity
 * and disruption"). Pure.
 */
export function isGenerationAcknowledged(pcs: PodCliqueSet): boolean {
  const observed = pcs.status?.observedGeneration;
  return observed !== undefined && observed === pcs.metadata.generation;
}

/**
 * True while a Grove rollout is active: `status.updateProgress` is set and has no
 * `updateEndedAt` (upstream `GroveCoherentUpdateInProgress`; grove.md §A.2 status). Pure.
 */
export function isRolloutActive(pcs: PodCliqueSet): boolean {
  const progress = pcs.status?.updateProgress;
  return progress !== undefined && (progress.updateEndedAt ?? '') === '';
}

/**
 * The Coherent gate. In: the PodCliqueSet as observed before this pass's write (undefined
 * before creation) and whether this pass's apply changed it. Out: {@link ScalingGate}.
 * Rules, in order (dgd-reference "Coherent capacity and disruption"):
 * 1. "after a write, waits for its cache to observe that configuration": a PodCliqueSet
 *    written in this pass blocks, whatever the strategy;
 * 2. no PodCliqueSet yet: nothing blocks (its children do not exist, nothing is scaled);
 * 3. "RollingRecreate rollouts do not block replica changes once the configuration is
 *    observed, even if Grove's observed generation lags": any strategy but `Coherent`
 *    (read from the observed `spec.updateStrategy.type`, as upstream's
 *    `GroveCoherentUpdateSelected`) never blocks;
 * 4. "For Coherent, it also waits until Grove acknowledges the current configuration
 *    (status.observedGeneration matches metadata.generation) and any active rollout
 *    completes".
 * The table is upstream's `TestGroveScalingBlocked` (deploy/operator/internal/dynamo). Pure.
 */
export function decideScalingGate(pcs: PodCliqueSet | undefined, writtenThisPass: boolean): ScalingGate {
  if (writtenThisPass) return { blocked: true, reason: 'PodCliqueSetWritePending' };
  if (pcs === undefined) return { blocked: false };
  if (pcs.spec.updateStrategy?.type !== 'Coherent') return { blocked: false };
  if (!isGenerationAcknowledged(pcs) || isRolloutActive(pcs)) return { blocked: true, reason: 'CoherentUpdateInProgress' };
  return { blocked: false };
}

/**
 * The scale writes that bring each component's Grove child to its desired replicas
 * ({@link desiredChildReplicas}). In: the components (ordinary, non-LPX), the PodCliqueSet name
 * and namespace, the observed children by name, and which components a `WaitForCheckpoint`
 * checkpoint holds at 0 (`isGated`, checkpoints.ts `isCheckpointGated`). Out: one intent per
 * existing child whose `spec.replicas` differs, in component order. A component without
 * `replicas` and not gated is left to whoever scales it (upstream: "nil replicas are skipped,
 * unless checkpoint-gated (then 0)"); a child Grove has not created yet is skipped and scaled on
 * a later pass (upstream `scaleResource`: NotFound is ignored). Source: upstream-notes/dgd.md
 * §4.7 step 4; grove.md §A.6 "Later scaling happens on the child's own scale subresource". Pure.
 */
export function pendingScaleIntents(
  components: readonly Component[],
  pcsName: string,
  namespace: string,
  children: { readonly PodClique: ReadonlyMap<string, PodClique>; readonly PodCliqueScalingGroup: ReadonlyMap<string, PodCliqueScalingGroup> },
  isGated: (component: Component) => boolean,
): ScaleIntent[] {
  const intents: ScaleIntent[] = [];
  for (const component of components) {
    const desired = desiredChildReplicas(component, isGated(component));
    if (desired === undefined) continue;
    const target = componentChild(pcsName, component);
    const child = target.kind === PODCLIQUE_KIND ? children.PodClique.get(target.name) : children.PodCliqueScalingGroup.get(target.name);
    if (child === undefined || child.spec.replicas === desired) continue;
    intents.push({ apiVersion: GROVE_API_VERSION, kind: target.kind, namespace, name: target.name, component: component.name, replicas: desired });
  }
  return intents;
}

/**
 * Keeps the template replicas of an existing PodCliqueSet: "Template `replicas` only seed a
 * PCLQ or PCSG at creation" (grove.md §A.6 "Replica propagation"), so a replica edit goes to
 * the child's scale subresource and never rewrites the PodCliqueSet (no new generation, no
 * rollout). In: the rendered PodCliqueSet and the observed one (ours). Out: a copy of the
 * rendered object whose standalone cliques' `spec.replicas` and scaling groups' `replicas`
 * are the observed values where the observed PodCliqueSet has that clique or group; new
 * entries keep the rendered seed. Member cliques of a scaling group (per-replica node
 * counts) are not replicas of the component and stay as rendered. Pure.
 */
export function keepSeededReplicas(rendered: RenderedObject, observed: PodCliqueSet | undefined): RenderedObject {
  if (observed === undefined) return rendered;
  type Seedable = RenderedObject & { spec: { template: { cliques: { name: string; spec: { replicas: number } }[]; podCliqueScalingGroups?: { name: string; cliqueNames: string[]; replicas?: number }[] } } };
  // Copies only the path to the replicas it sets (the pod specs stay shared with `rendered`,
  // as the whole object is when nothing is observed): a PodCliqueSet copy costs a render.
  const spec = (rendered as Seedable).spec;
  const template: Seedable['spec']['template'] = { ...spec.template, cliques: spec.template.cliques.map((clique) => ({ ...clique, spec: { ...clique.spec } })) };
  if (spec.template.podCliqueScalingGroups !== undefined) template.podCliqueScalingGroups = spec.template.podCliqueScalingGroups.map((group) => ({ ...group }));
  const copy = { ...rendered, spec: { ...spec, template } } as Seedable;
  const grouped = new Set((template.podCliqueScalingGroups ?? []).flatMap((g) => g.cliqueNames));
  const observedCliques = new Map(observed.spec.template.cliques.map((c) => [c.name, c.spec.replicas]));
  const observedGroups = new Map((observed.spec.template.podCliqueScalingGroups ?? []).map((g) => [g.name, g.replicas]));
  for (const clique of template.cliques) {
    const seeded = observedCliques.get(clique.name);
    if (!grouped.has(clique.name) && seeded !== undefined) clique.spec.replicas = seeded;
  }
  for (const group of template.podCliqueScalingGroups ?? []) {
    const seeded = observedGroups.get(group.name);
    if (seeded !== undefined) group.replicas = seeded;
  }
  return copy;
}

/**
 * keepUpdateStrategyDuringRollout: while the stored PodCliqueSet has an active update
 * (`status.updateProgress` without `updateEndedAt`), the applied `spec.updateStrategy` stays
 * what the stored one is (absent when absent), whatever the strategy annotation now says: a
 * strategy-annotation change during an active update must not rewrite `updateStrategy`
 * mid-rollout; it takes effect once the update ends ("Changing or removing the strategy
 * annotation cannot unblock a stalled active update", dgd-reference "Grove update strategy").
 * In: the rendered PodCliqueSet intent and the stored one (undefined before creation). Out: the
 * intent itself when nothing changes, else a copy.
 * Source: upstream-notes/dgd.md §3.1 "Transition guard (at render time)": "keep the PCS's
 * current strategy (or nil) until the active update ends". Pure.
 */
export function keepUpdateStrategyDuringRollout(rendered: RenderedObject, observed: PodCliqueSet | undefined): RenderedObject {
  if (observed === undefined || !isRolloutActive(observed)) return rendered;
  const spec = (rendered as unknown as { spec: Record<string, unknown> }).spec;
  const current = observed.spec.updateStrategy;
  const wanted = spec['updateStrategy'] as { type?: string } | undefined;
  if ((wanted?.type ?? undefined) === (current?.type ?? undefined)) return rendered;
  const { updateStrategy: _dropped, ...rest } = spec;
  const nextSpec = current?.type === undefined ? rest : { ...rest, updateStrategy: { type: current.type } };
  return { ...rendered, spec: nextSpec } as unknown as RenderedObject;
}
