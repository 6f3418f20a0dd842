/**
 * Renders the LPX PodCliqueSet: one per LPXGraphDeployment, separate from the DGD's ordinary
 * PodCliqueSet (a hybrid graph has two and they roll independently), owned by the LPXGD.
 *
 * Source: ../shared/reference/dgd-reference.txt ("Grove update strategy": the annotation applies
 * to LPX deployments too; "Separate PCSes ... roll independently"; "Configure native minimum
 * availability": a shared draft has none of its own, omitted LPX replicas seed the scaling group;
 * "Grove rollout budget overrides"); ../shared/upstream-notes/lpx.md §1.1, §2.3, §6.2 ("PCS
 * top-level replicas are always 1. Capacity lives on each PCSG"; the seed); upstream fixture
 * `internal/dynamo/lpx/testdata/from_dgd_yaml/node-local-v2-hybrid.yaml` (explicit clique
 * startup, the conductor starting after the agents, `schedulerName: lpx-scheduler`, role and
 * model annotations, the serving label).
 * @module
 */
import { createHash } from 'node:crypto';
import {
  ANNOTATION_LPX_DEPLOYMENT_NAME,
  ANNOTATION_LPX_POD_MODEL,
  ANNOTATION_LPX_POD_ROLE,
  ANNOTATION_LPX_WORKLOAD_DIGEST,
  ANNOTATION_LPX_WORKLOAD_MODE,
  GROVE_API_VERSION,
  LABEL_COMPONENT,
  LABEL_DYNAMO_NAMESPACE,
  LABEL_GRAPH_DEPLOYMENT_NAME,
  LABEL_LPX_DEPLOYMENT_UID,
  LABEL_LPX_SERVING,
  LPXGD_API_VERSION,
  LPXGD_KIND,
  LPX_CONFIG_VOLUME_NAME,
  LPX_ROLE_AGENT,
  LPX_POD_ROLE_CYBORG_WORKER,
  LPX_ROLE_CONDUCTOR,
  LPX_SCHEDULER_NAME,
  MAIN_CONTAINER_NAME,
  PODCLIQUESET_KIND,
  WORKER_SYSTEM_PORT,
  type Dgd,
  type PodCliqueScalingGroupConfig,
  type PodCliqueTemplateSpec,
  type PodTemplateSpec,
} from '../../api/index.js';
import { maxUnavailable, resolveUpdateStrategy } from '../dgd/availability.js';
import { componentServiceName } from '../dgd/names.js';
import { buildPodSpec, cliqueAnnotations, cliqueLabels, dynamoNamespace, labelValue, type CliqueContext } from '../dgd/pod-template.js';
import type { RenderConfig, RenderedObject } from '../dgd/render.js';
import { snapshotAnnotation } from './build-snapshot.js';
import type { LpxBuild } from './build.js';
import { applyLocalPartitionIds } from './derive.js';
import { sortedKeysJson } from './input-revision.js';
import { lpxPodCliqueSetName, type LpxIdentity } from './names.js';
import { bindRuntimeConfig, type LpxConfigBinding, type LpxRuntimeConfigs } from './runtime-configmaps.js';
import { applyLpxAgentRuntime, applyLpxCyborgRuntime, applyLpxNovaConductorRuntime, cyborgWorkerComponent, withAgentContainerName, withConductorContainerName, withoutSynthesizedConfigVolume } from './runtime-pods.js';
import type { LpxWorkload } from './workloads.js';

/** Per scaling group, the template `replicas` to render (the immutable seed). */
export type ScalingGroupSeeds = ReadonlyMap<string, number>;

/** The workload digest (`scheduling.lpu.nvidia.com/dynamo-workload-digest`): sha256 of the workload's components. Pure. */
export function workloadDigest(workload: LpxWorkload): string {
  return `sha256:${createHash('sha256').update(sortedKeysJson(workload.components)).digest('hex')}`;
}

function lpxPodSpec(ctx: CliqueContext, template: PodTemplateSpec | undefined): Record<string, unknown> {
  // LPX owns role scheduler selection (lpx.md §1.3): admission refuses any other value.
  return { ...buildPodSpec(ctx, template), schedulerName: LPX_SCHEDULER_NAME };
}

/**
 * withCyborgLocalPartitionIds: publishes the engine's GPU-local partitions on the Cyborg `main`
 * container (see `applyLocalPartitionIds`; upstream `configureHybridCyborg`). Mutates only the
 * freshly rendered pod spec it is given.
 */
function withCyborgLocalPartitionIds(podSpec: Record<string, unknown>, ids: readonly number[]): void {
  const containers = (podSpec['containers'] ?? []) as { name?: string; env?: { name: string }[]; envFrom?: unknown[] }[];
  const main = containers.find((c) => c.name === MAIN_CONTAINER_NAME);
  if (main === undefined) return;
  const env = applyLocalPartitionIds(main.env ?? [], (main.envFrom ?? []).length > 0, ids);
  if (env.length === 0) delete main.env;
  else main.env = env;
}

/**
 * bindLpxRuntime: the pod runtime contract (runtime-pods.ts), then the runtime ConfigMap binding
 * (`bindRuntimeConfig`, which addresses `main`; the `config` PVC that `buildPodSpec` would
 * synthesize for the mount is dropped first, see `withoutSynthesizedConfigVolume`), so the
 * `config` volume comes last as in upstream's fixture; then `finish` (the Agent's rename). Pure.
 */
function bindLpxRuntime(
  clique: PodCliqueTemplateSpec,
  template: PodTemplateSpec | undefined,
  binding: LpxConfigBinding | undefined,
  contract: (podSpec: Record<string, unknown>) => Record<string, unknown>,
  finish: (podSpec: Record<string, unknown>) => Record<string, unknown> = (podSpec) => podSpec,
): PodCliqueTemplateSpec {
  const contracted = contract(clique.spec.podSpec as Record<string, unknown>);
  const podSpec = binding === undefined ? contracted : withoutSynthesizedConfigVolume(contracted, template?.spec, LPX_CONFIG_VOLUME_NAME);
  const bound = bindRuntimeConfig({ ...clique, spec: { ...clique.spec, podSpec } }, binding);
  return { ...bound, spec: { ...bound.spec, podSpec: finish(bound.spec.podSpec as Record<string, unknown>) } };
}

function roleClique(
  ctx: CliqueContext,
  name: string,
  replicas: number,
  template: PodTemplateSpec | undefined,
  annotations: Record<string, string>,
  extraLabels: Record<string, string>,
  startsAfter: readonly string[] | undefined,
  podCtx: CliqueContext = ctx,
): PodCliqueTemplateSpec {
  const merged = { ...(cliqueAnnotations(ctx, template) ?? {}), ...annotations };
  return {
    name,
    labels: { ...cliqueLabels(ctx, template), ...extraLabels },
    annotations: Object.fromEntries(Object.entries(merged).sort(([a], [b]) => (a < b ? -1 : 1))),
    spec: {
      roleName: name,
      replicas,
      // Every pod of a role is needed for the engine replica to count (lpx.md §5.2: a clique
      // counts only at its full build width).
      minAvailable: replicas,
      ...(startsAfter === undefined ? {} : { startsAfter: [...startsAfter] }),
      podSpec: lpxPodSpec(podCtx, template),
    },
  };
}

/**
 * renderLpxPodCliqueSet.
 * In: the DGD (metadata, spec), the LPXGD identity (namespace, name, uid), its workloads, the
 * seed per scaling group (see {@link ScalingGroupSeeds}; absent: the workload's minAvailable),
 * the render config. Out: one apply intent, owned by the LPXGD (controller, blockOwnerDeletion).
 * - `spec.replicas: 1`; `updateStrategy.type` from the DGD's strategy annotation, absent without one;
 * - per workload a scaling group: cliques (agents, then the conductor), `minAvailable` from the
 *   serving (target) component, `replicas` the seed, `rollingUpdate.maxUnavailable` from the
 *   serving component's providerOverride budget;
 * - per model an Agent clique (role `agent`, annotations `scheduling.lpu.nvidia.com/model` and,
 *   when the build snapshot is known, `scheduling.lpu.nvidia.com/compiler-snapshot-digest`, as
 *   upstream's Agent pods carry it, so a changed build rolls its Agents);
 *   the conductor clique (role `conductor`, label `lpx.nvidia.com/serving: "true"`) starts after
 *   the agents; every pod uses the `lpx-scheduler` (a hybrid Cyborg, once its build is decoded, the
 *   `default-scheduler`, see `applyLpxCyborgRuntime`);
 * - a workload with runtime ConfigMaps (`runtimeConfigs`, runtime-configmaps.ts) mounts them
 *   (volume `config` at `/configs`, `nvidia.com/extra-resources-hash`), see `bindRuntimeConfig`;
 * - the pod runtime contract (runtime-pods.ts): every Agent gets `applyLpxAgentRuntime`, a
 *   hybrid engine's conductor (the Cyborg) is rendered as a decode worker and gets
 *   `applyLpxCyborgRuntime`, an LPU-only one (Nova) `applyLpxNovaConductorRuntime`; the
 *   build-dependent parts need the component's decoded build (`builds`, by component name) and
 *   its derivation, so without them a conductor is left as authored.
 * Deterministic. Pure.
 */
export function renderLpxPodCliqueSet(
  dgd: Dgd,
  id: LpxIdentity,
  workloads: readonly LpxWorkload[],
  seeds: ScalingGroupSeeds,
  config: Pick<RenderConfig, 'terminationDelay'>,
  snapshotDigests: ReadonlyMap<string, string> = new Map(),
  runtimeConfigs: LpxRuntimeConfigs = new Map(),
  builds: ReadonlyMap<string, LpxBuild> = new Map(),
): RenderedObject {
  const name = lpxPodCliqueSetName(id);
  const cliques: PodCliqueTemplateSpec[] = [];
  const scalingGroups: PodCliqueScalingGroupConfig[] = [];
  const routing = { [ANNOTATION_LPX_DEPLOYMENT_NAME]: id.name };
  for (const workload of workloads) {
    const digest = workloadDigest(workload);
    const runtime = runtimeConfigs.get(workload.scalingGroup);
    const agentNames: string[] = [];
    for (const model of workload.models) {
      // All of the component's partitions run on the Cyborg GPU: no Agent clique (upstream RenderNodeLocal).
      if (model.derived?.agentReplicas === 0) continue;
      const ctx: CliqueContext = { dgd, namespace: id.namespace, component: model.component, workerHash: undefined };
      agentNames.push(model.agentClique);
      cliques.push(bindLpxRuntime(
        roleClique(ctx, model.agentClique, model.agentReplicas, model.agentRole?.podTemplate, {
          ...routing,
          [ANNOTATION_LPX_WORKLOAD_DIGEST]: digest,
          [ANNOTATION_LPX_POD_ROLE]: LPX_ROLE_AGENT,
          [ANNOTATION_LPX_POD_MODEL]: model.model,
          ...snapshotAnnotation(snapshotDigests, model.component.name),
          ...(model.derived === undefined ? {} : { [ANNOTATION_LPX_WORKLOAD_MODE]: model.derived.workloadMode }),
        }, {}, undefined),
        model.agentRole?.podTemplate,
        runtime?.agents,
        (podSpec) => applyLpxAgentRuntime(podSpec, { build: model.derived === undefined ? undefined : builds.get(model.component.name), pipeline: model.derived?.pipeline }),
        withAgentContainerName,
      ));
    }
    const cliqueNames = [...agentNames];
    if (workload.conductorClique !== undefined) {
      const ctx: CliqueContext = { dgd, namespace: id.namespace, component: workload.serving, workerHash: undefined };
      const serving = workload.models.find((m) => m.component === workload.serving)?.derived;
      const isHybrid = serving?.pipeline === 'hybrid';
      cliqueNames.push(workload.conductorClique);
      const conductorReplicas = workload.conductorRole?.replicas ?? 1;
      const build = serving === undefined ? undefined : builds.get(workload.serving.name);
      const novaModels = workload.models.map((m) => ({ build: builds.get(m.component.name), agentClique: m.agentClique }));
      cliques.push(bindLpxRuntime(
        roleClique(
          ctx,
          workload.conductorClique,
          conductorReplicas,
          workload.conductorRole?.podTemplate,
          // A hybrid engine's conductor is the Cyborg GPU runtime (upstream fixture node-local-v2-hybrid.yaml: role cyborg-worker).
          { ...routing, [ANNOTATION_LPX_WORKLOAD_DIGEST]: digest, [ANNOTATION_LPX_POD_ROLE]: isHybrid ? LPX_POD_ROLE_CYBORG_WORKER : LPX_ROLE_CONDUCTOR },
          { [LABEL_LPX_SERVING]: 'true' },
          agentNames.length === 0 ? undefined : agentNames,
          isHybrid ? { ...ctx, component: cyborgWorkerComponent(workload.serving) } : ctx,
        ),
        workload.conductorRole?.podTemplate,
        runtime?.conductor,
        (podSpec) => (isHybrid ? applyLpxCyborgRuntime(podSpec, { build, conductorReplicas }) : serving === undefined ? podSpec : applyLpxNovaConductorRuntime(podSpec, { pipeline: serving.pipeline, models: novaModels })),
        isHybrid || serving === undefined ? undefined : withConductorContainerName,
      ));
      const conductor = cliques[cliques.length - 1];
      if (isHybrid && conductor !== undefined) withCyborgLocalPartitionIds(conductor.spec.podSpec as Record<string, unknown>, serving.localPartitionIds);
    }
    const group: PodCliqueScalingGroupConfig = {
      name: workload.scalingGroup,
      cliqueNames,
      annotations: { ...routing, [ANNOTATION_LPX_WORKLOAD_DIGEST]: digest },
      replicas: seeds.get(workload.scalingGroup) ?? workload.minAvailable,
      minAvailable: workload.minAvailable,
    };
    const budget = maxUnavailable(workload.serving);
    if (typeof budget === 'number') group.rollingUpdate = { maxUnavailable: budget };
    scalingGroups.push(group);
  }

  const template: Record<string, unknown> = {
    cliqueStartupType: 'CliqueStartupTypeExplicit',
    headlessServiceConfig: { publishNotReadyAddresses: true },
    terminationDelay: config.terminationDelay,
    cliques,
    podCliqueScalingGroups: scalingGroups,
  };
  if (dgd.spec.priorityClassName !== undefined) template['priorityClassName'] = dgd.spec.priorityClassName;
  const spec: Record<string, unknown> = { replicas: 1, template };
  const strategy = resolveUpdateStrategy(dgd);
  if (strategy.ok && strategy.strategy !== undefined) spec['updateStrategy'] = { type: strategy.strategy };

  const metadata: Record<string, unknown> = {
    name,
    namespace: id.namespace,
    labels: { ...(dgd.spec.labels ?? {}), [LABEL_GRAPH_DEPLOYMENT_NAME]: labelValue(dgd.metadata.name ?? ''), [LABEL_LPX_DEPLOYMENT_UID]: id.uid },
    annotations: { ...(dgd.spec.annotations ?? {}), ...routing },
    ownerReferences: [{ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, name: id.name, uid: id.uid, controller: true, blockOwnerDeletion: true }],
  };
  return { apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND, metadata: metadata as RenderedObject['metadata'], spec };
}

/**
 * renderLpxServingServices: per workload, the Service of its serving component, named as an
 * ordinary component Service (`<dgd>-<component>`, lower case), selecting the conductor pods by
 * `lpx.nvidia.com/serving: "true"` plus the component and Dynamo namespace labels, port
 * `system` 9090; owned by the LPXGD, which upstream's serving Services are too (lpx.md §2.3:
 * "The LPXGD owns its one LPX PodCliqueSet, the runtime ConfigMaps and the serving Services";
 * `lpx.nvidia.com/serving` "selects the conductor pods for the discovery Service"). Pure.
 */
export function renderLpxServingServices(dgd: Dgd, id: LpxIdentity, workloads: readonly LpxWorkload[]): RenderedObject[] {
  return workloads
    .filter((w) => w.conductorClique !== undefined)
    .map((w) => {
      const component = w.serving;
      const selector = {
        [LABEL_COMPONENT]: labelValue(component.name),
        [LABEL_DYNAMO_NAMESPACE]: labelValue(dynamoNamespace(dgd, id.namespace, component)),
        [LABEL_LPX_SERVING]: 'true',
      };
      return {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: {
          name: componentServiceName(dgd, component),
          namespace: id.namespace,
          labels: { [LABEL_GRAPH_DEPLOYMENT_NAME]: labelValue(dgd.metadata.name ?? ''), [LABEL_COMPONENT]: labelValue(component.name), [LABEL_LPX_DEPLOYMENT_UID]: id.uid },
          ownerReferences: [{ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, name: id.name, uid: id.uid, controller: true, blockOwnerDeletion: true }],
        },
        spec: {
          selector: Object.fromEntries(Object.entries(selector).sort(([a], [b]) => (a < b ? -1 : 1))),
          ports: [{ name: 'system', port: WORKER_SYSTEM_PORT, targetPort: WORKER_SYSTEM_PORT, protocol: 'TCP' }],
        },
      } as RenderedObject;
    });
}

/** Grove's name of a workload's scaling group under PCS replica 0 (grove.md §A.8). Pure. */
export function scalingGroupObjectName(pcsName: string, workload: Pick<LpxWorkload, 'scalingGroup'>): string {
  return `${pcsName}-0-${workload.scalingGroup}`;
}

/** Grove's name of a clique inside scaling-group replica `replicaIndex` (grove.md §A.8). Pure. */
export function scalingGroupCliqueName(pcsName: string, scalingGroup: string, replicaIndex: number, clique: string): string {
  return `${pcsName}-0-${scalingGroup}-${replicaIndex}-${clique}`;
}

/**
 * The layout of a rendered or observed LPX PodCliqueSet that cannot change in place: clique
 * names, scaling groups (their cliques and minAvailable), and under OnDelete also the scaling
 * groups' annotations (the workload digests), since OnDelete never rolls pods in place. A change
 * means a whole-PCS replacement (lpx.md §6.2 "Layout changes"). Pure.
 */
export function lpxLayoutKey(spec: unknown): string {
  const typed = (spec ?? {}) as { updateStrategy?: { type?: string }; template?: unknown };
  const template = (typed.template ?? {}) as {
    cliques?: { name?: string }[];
    podCliqueScalingGroups?: { name?: string; cliqueNames?: string[]; minAvailable?: number; annotations?: Record<string, string> }[];
  };
  const isOnDelete = typed.updateStrategy?.type === 'OnDelete';
  return sortedKeysJson({
    cliques: (template.cliques ?? []).map((c) => c.name).sort(),
    groups: (template.podCliqueScalingGroups ?? []).map((g) => ({
      name: g.name,
      cliqueNames: [...(g.cliqueNames ?? [])].sort(),
      minAvailable: g.minAvailable,
      ...(isOnDelete ? { annotations: g.annotations ?? {} } : {}),
    })),
  });
}

/** The template seed of each scaling group in an observed PodCliqueSet spec. Pure. */
export function observedSeeds(spec: unknown): Map<string, number> {
  const groups = ((spec as { template?: { podCliqueScalingGroups?: { name?: string; replicas?: number }[] } } | undefined)?.template?.podCliqueScalingGroups ?? []);
  return new Map(groups.flatMap((g) => (g.name !== undefined && typeof g.replicas === 'number' ? [[g.name, g.replicas] as [string, number]] : [])));
}

