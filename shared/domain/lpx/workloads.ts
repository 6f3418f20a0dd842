/**
 * LPX workloads: how a DGD's LPX components group into independently scheduled engines, the
 * runtime models of each, and the Grove names they render to.
 *
 * Source: ../shared/upstream-notes/lpx.md §1.1 (independent components, the shared
 * speculative-decoding pair, runtime model names `default` / `draft0..` / `target`, replicas,
 * minAvailable), §3.2 (one LPR per workload, model and scaling-group replica), §3.4 (the
 * deadline of a model comes from the component that owns it); upstream render fixtures
 * `internal/dynamo/lpx/testdata/from_dgd_yaml/node-local-v2-hybrid.yaml` and
 * `node-local-v2-specdecode.yaml` (scaling group `lpx`, cliques `agt`, `agt0..agtN`, `cond`).
 * @module
 */
import { LPX_ROLE_AGENT, LPX_ROLE_CONDUCTOR, LpxConfigSchema, type Component, type Dgd, type Role } from '../../api/index.js';
import { findLpxPair } from '../admission/lpx.js';
import { effectiveMinAvailable } from '../dgd/availability.js';
import type { LpxBuild } from './build.js';
import { validateHybridConductorDevices } from './cyborg-gpu.js';
import { deriveLpxComponent, selectLpxPipeline, validateAgentReplicas, validateHybridPair, validateSelectedConductor, type Derived, type LpxModelDerivation } from './derive.js';

/** One runtime model of a workload: its Agent clique and the component that owns it. */
export interface LpxModel {
  /** `default`, `draft0..draft{n-1}` or `target` (lpx.md §1.1). */
  readonly model: string;
  readonly component: Component;
  /** Name of the Agent clique template in the LPX PodCliqueSet. */
  readonly agentClique: string;
  /**
   * Agent pods per engine replica: derived from the build when it is decoded ({@link derived});
   * before that, the agent role's replicas, else 1 (see {@link agentReplicas}).
   */
  readonly agentReplicas: number;
  /** What the component's decoded build derives for this model; undefined until the build is decoded. */
  readonly derived?: LpxModelDerivation;
  readonly agentRole: Role | undefined;
  /** `lpx.scheduling.attemptDeadlineSeconds` of the owning component; undefined: no deadline. */
  readonly attemptDeadlineSeconds: number | undefined;
}

/** One independently scheduled LPX engine: one Grove scaling group. */
export interface LpxWorkload {
  /** The scaling group name in the LPX PodCliqueSet. */
  readonly scalingGroup: string;
  /** The component that owns the serving endpoint, replicas and availability (the target of a pair). */
  readonly serving: Component;
  /** Every component of the workload (a pair has two). */
  readonly components: readonly Component[];
  readonly models: readonly LpxModel[];
  /** The conductor clique name, when the serving component declares a conductor role. */
  readonly conductorClique: string | undefined;
  readonly conductorRole: Role | undefined;
  /** Explicit engine replicas; undefined means the capacity is managed externally (lpx.md §1.1). */
  readonly explicitReplicas: number | undefined;
  /** The immutable template seed and Grove minAvailable: the serving component's effective minimum. */
  readonly minAvailable: number;
}

function roleOf(component: Component, name: string): Role | undefined {
  return (component.roles ?? []).find((r) => r.name === name);
}

/**
 * Agent pods per engine replica while the component's build is not decoded: the explicit agent
 * role replicas, else 1. Once the build is decoded, {@link deriveLpxWorkloads} replaces it with
 * the compiled count (upstream derives it from the build's partitions and `localPartitions`, and
 * requires an explicit agent count to equal it). Pure.
 */
export function agentReplicas(role: Role | undefined): number {
  return role?.replicas ?? 1;
}

/** The component's `lpx.scheduling.attemptDeadlineSeconds`, or undefined (lpx.md §3.4 "Which deadline applies"). Pure. */
export function attemptDeadlineSeconds(component: Component): number | undefined {
  const parsed = LpxConfigSchema.safeParse(component.lpx ?? {});
  return parsed.success ? parsed.data.scheduling?.attemptDeadlineSeconds : undefined;
}

/**
 * resolveLpxWorkloads: the DGD's LPX components as workloads, in component order.
 * - a shared draft/target pair is one workload (scaling group `lpx`): draft models `draft0..`
 *   (one per draft replica) on cliques `agt0..`, then `target` on the next `agt<n>`, and the
 *   target's `cond`;
 * - otherwise each LPX component is its own workload with model `default`: a single one renders
 *   as upstream's fixture (`lpx`, cliques `agt`, `cond`); with several, workload i uses scaling
 *   group `lpx<i>` and cliques `lpx<i>-agt`, `lpx<i>-cond` (upstream does not record its
 *   multi-workload names; ours keep clique names unique within the PodCliqueSet).
 * In: dgd.spec.components (admission has validated them). Out: workloads, empty without LPX. Pure.
 */
export function resolveLpxWorkloads(dgd: Pick<Dgd, 'spec'>): LpxWorkload[] {
  const lpx = dgd.spec.components.filter((c) => c.type === 'lpx');
  if (lpx.length === 0) return [];
  const pair = findLpxPair(dgd);
  if (pair !== undefined) {
    const target = dgd.spec.components[pair.targetIndex] as Component;
    const draft = dgd.spec.components[pair.draftIndex] as Component;
    const drafts = draft.replicas ?? 1;
    const models: LpxModel[] = [];
    for (let i = 0; i < drafts; i += 1) models.push(model(`draft${i}`, draft, `agt${i}`));
    models.push(model('target', target, `agt${drafts}`));
    return [workload('lpx', target, [draft, target], models, 'cond')];
  }
  if (lpx.length === 1) {
    const only = lpx[0] as Component;
    return [workload('lpx', only, [only], [model('default', only, 'agt')], 'cond')];
  }
  return lpx.map((component, i) => workload(`lpx${i}`, component, [component], [model('default', component, `lpx${i}-agt`)], `lpx${i}-cond`));
}

function model(name: string, component: Component, agentClique: string): LpxModel {
  const agentRole = roleOf(component, LPX_ROLE_AGENT);
  return { model: name, component, agentClique, agentReplicas: agentReplicas(agentRole), agentRole, attemptDeadlineSeconds: attemptDeadlineSeconds(component) };
}

function workload(scalingGroup: string, serving: Component, components: Component[], models: LpxModel[], conductorName: string): LpxWorkload {
  const conductorRole = roleOf(serving, LPX_ROLE_CONDUCTOR);
  return {
    scalingGroup,
    serving,
    components,
    models,
    conductorClique: conductorRole === undefined ? undefined : conductorName,
    conductorRole,
    explicitReplicas: serving.replicas,
    minAvailable: effectiveMinAvailable(serving),
  };
}

/** One component's decoded build and its `lpx.buildId` as written. */
export interface LpxComponentBuild {
  readonly build: LpxBuild;
  readonly buildId: string;
}

/**
 * deriveLpxWorkloads (upstream `ResolveSelectedWorkload`): for every workload whose components'
 * builds are all decoded, in component order: the pipeline ({@link selectLpxPipeline}); the
 * build-dependent role rules ({@link validateHybridPair}, the hybrid conductor's GPUs
 * ({@link validateHybridConductorDevices}), {@link validateSelectedConductor}); the
 * component's derivation ({@link deriveLpxComponent}); an explicit agent count must equal the
 * compiled one ({@link validateAgentReplicas}); a pair's builds must share one target family
 * ("LPX model projections have mixed target families %q and %q", upstream `workloadSetDigest`).
 * Each model then carries its component's derivation and Agent count. A workload with a build
 * not yet decoded is returned unchanged.
 * In: dgd.spec.components (for field paths), the workloads, the decoded builds by component
 * name. Out: the workloads, or the first error (the LPXGD reports it as `Ready=False`, reason
 * `Failed`). Pure.
 */
export function deriveLpxWorkloads(dgd: Pick<Dgd, 'spec'>, workloads: readonly LpxWorkload[], builds: ReadonlyMap<string, LpxComponentBuild>): Derived<LpxWorkload[]> {
  const out: LpxWorkload[] = [];
  for (const workload of workloads) {
    const decoded = workload.components.map((component) => ({ component, build: builds.get(component.name) }));
    const first = decoded[0]?.build;
    if (first === undefined || decoded.some((d) => d.build === undefined)) {
      out.push(workload);
      continue;
    }
    const pipeline = selectLpxPipeline(workload.components.length, first.build);
    const derivations = new Map<Component, LpxModelDerivation>();
    for (const { component, build } of decoded) {
      if (build === undefined) continue;
      const refusal =
        validateHybridPair(pipeline, build.build) ??
        validateHybridConductorDevices(component, build.build.compilationMode === 'lpx') ??
        validateSelectedConductor(component, component === workload.serving, pipeline);
      if (refusal !== undefined) return { ok: false, error: refusal };
      const firstModel = workload.models.find((m) => m.component === component)?.model ?? 'default';
      const derived = deriveLpxComponent(component, build.build, build.buildId, pipeline, firstModel);
      if (!derived.ok) return derived;
      const index = dgd.spec.components.findIndex((c) => c.name === component.name);
      const mismatch = validateAgentReplicas(component, index, derived.value.agentReplicas);
      if (mismatch !== undefined) return { ok: false, error: mismatch };
      const family = derivations.values().next().value?.targetFamily;
      if (family !== undefined && family !== derived.value.targetFamily) {
        return { ok: false, error: `LPX model projections have mixed target families ${JSON.stringify(family)} and ${JSON.stringify(derived.value.targetFamily)}` };
      }
      derivations.set(component, derived.value);
    }
    const models = workload.models.map((m) => {
      const derived = derivations.get(m.component);
      return derived === undefined ? m : { ...m, agentReplicas: derived.agentReplicas, derived };
    });
    out.push({ ...workload, models });
  }
  return { ok: true, value: out };
}
