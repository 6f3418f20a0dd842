/**
 * A simulation of Grove's controller for `dynamo-fn dev` and the tests (Grove cannot run here, as
 * no kubelet does: kwok stands in for those). From each PodCliqueSet it derives what Grove's
 * controller creates and reports, following ../shared/upstream-notes/grove.md:
 * - names (§A.8): standalone PodClique `<pcs>-<pcsReplica>-<clique>`, PodCliqueScalingGroup
 *   `<pcs>-<pcsReplica>-<pcsgName>`, PodClique in a group `<pcs>-<pcsReplica>-<pcsgName>-<pcsgReplica>-<clique>`;
 * - labels (§A.8): `app.kubernetes.io/managed-by=grove-operator`, `app.kubernetes.io/part-of=<pcs>`,
 *   `grove.io/podcliqueset-replica-index`, and for group members `grove.io/podcliquescalinggroup`
 *   and `grove.io/podcliquescalinggroup-replica-index`; a controller reference to the owner;
 * - template replicas only seed creation (§A.6 "Replica propagation"): an existing child keeps
 *   its `spec.replicas` (scaled through its `scale` subresource); a group's member cliques follow
 *   the group's own `spec.replicas`;
 * - status (§A.2-§A.4): every child observed at its generation and fully ready (PodClique
 *   `readyReplicas`, group `availableReplicas`, `MinAvailableBreached=False`), the PodCliqueSet's
 *   generation acknowledged, its replicas available, no rollout in progress.
 * What it does NOT do: it creates no Pods and waits for none: it writes the ready status
 * directly (a simplification; real Grove counts its pods' readiness). Pure; the driver that
 * reads and writes the API server is {@link startGroveSimulation}'s loop.
 * @module
 */
import { GROVE_API_VERSION, PODCLIQUE_KIND, PODCLIQUESCALINGGROUP_KIND, PODCLIQUESET_KIND } from '../api/index.js';
import type { ApplyObject, Kube, KubeObject } from '../kube/index.js';

/** The field manager the simulation writes with, as Grove's controller would. */
export const GROVE_SIMULATION_FIELD_MANAGER = 'grove-operator';

interface CliqueTemplate {
  readonly name: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly spec: { readonly roleName?: string; readonly replicas?: number; readonly minAvailable?: number; readonly podSpec?: unknown; readonly startsAfter?: readonly string[]; readonly autoScalingConfig?: unknown };
}

interface GroupTemplate {
  readonly name: string;
  readonly cliqueNames: readonly string[];
  readonly replicas?: number;
  readonly minAvailable?: number;
}

/** A child Grove would own: created from `object` when missing (never overwritten after). */
export interface GroveChild {
  readonly kind: typeof PODCLIQUE_KIND | typeof PODCLIQUESCALINGGROUP_KIND;
  readonly name: string;
  readonly object: ApplyObject;
}

const ownerOf = (pcs: KubeObject, kind: string, name: string, uid: string | undefined) => [
  { apiVersion: GROVE_API_VERSION, kind, name, uid: uid ?? '', controller: true, blockOwnerDeletion: true },
];

function templateOf(pcs: KubeObject): { cliques: CliqueTemplate[]; groups: GroupTemplate[]; replicas: number } {
  const spec = (pcs['spec'] as { replicas?: number; template?: { cliques?: CliqueTemplate[]; podCliqueScalingGroups?: GroupTemplate[] } } | undefined) ?? {};
  return { cliques: spec.template?.cliques ?? [], groups: spec.template?.podCliqueScalingGroups ?? [], replicas: spec.replicas ?? 0 };
}

function cliqueObject(pcs: KubeObject, clique: CliqueTemplate, name: string, labels: Record<string, string>, owner: { kind: string; name: string; uid: string | undefined }): ApplyObject {
  const replicas = clique.spec.replicas === undefined || clique.spec.replicas === 0 ? 1 : clique.spec.replicas;
  return {
    apiVersion: GROVE_API_VERSION,
    kind: PODCLIQUE_KIND,
    metadata: {
      name,
      namespace: pcs.metadata.namespace ?? 'default',
      labels: { ...(clique.labels ?? {}), ...labels, 'grove.io/podclique': name },
      ...(clique.annotations === undefined ? {} : { annotations: clique.annotations }),
      ownerReferences: ownerOf(pcs, owner.kind, owner.name, owner.uid),
    },
    spec: {
      roleName: clique.spec.roleName ?? clique.name,
      replicas,
      minAvailable: clique.spec.minAvailable ?? replicas,
      podSpec: clique.spec.podSpec ?? { containers: [] },
      ...(clique.spec.startsAfter === undefined ? {} : { startsAfter: clique.spec.startsAfter }),
      ...(clique.spec.autoScalingConfig === undefined ? {} : { autoScalingConfig: clique.spec.autoScalingConfig }),
    },
  };
}

/**
 * The PodCliques and PodCliqueScalingGroups Grove's controller creates for `pcs` (grove.md §A.8),
 * for every PodCliqueSet replica. A group's member cliques are made for `groupReplicas(name)`
 * replicas (the stored group's `spec.replicas`), else the template's seed. Member cliques are
 * owned by their group, the rest by the PodCliqueSet. Pure.
 */
export function groveChildren(pcs: KubeObject, groupReplicas: (name: string) => number | undefined = () => undefined): GroveChild[] {
  const { cliques, groups, replicas } = templateOf(pcs);
  const pcsName = pcs.metadata.name;
  const namespace = pcs.metadata.namespace ?? 'default';
  const grouped = new Set(groups.flatMap((g) => g.cliqueNames));
  const children: GroveChild[] = [];
  for (let r = 0; r < replicas; r += 1) {
    const base = {
      'app.kubernetes.io/managed-by': 'grove-operator',
      'app.kubernetes.io/part-of': pcsName,
      'grove.io/podcliqueset-replica-index': String(r),
    };
    for (const clique of cliques.filter((c) => !grouped.has(c.name))) {
      const name = `${pcsName}-${r}-${clique.name}`;
      children.push({ kind: PODCLIQUE_KIND, name, object: cliqueObject(pcs, clique, name, { ...base, 'app.kubernetes.io/component': 'pcs-podclique' }, { kind: PODCLIQUESET_KIND, name: pcsName, uid: pcs.metadata.uid }) });
    }
    for (const group of groups) {
      const groupName = `${pcsName}-${r}-${group.name}`;
      const seed = group.replicas ?? 1;
      children.push({
        kind: PODCLIQUESCALINGGROUP_KIND,
        name: groupName,
        object: {
          apiVersion: GROVE_API_VERSION,
          kind: PODCLIQUESCALINGGROUP_KIND,
          metadata: { name: groupName, namespace, labels: { ...base, 'app.kubernetes.io/component': 'pcs-podcliquescalinggroup' }, ownerReferences: ownerOf(pcs, PODCLIQUESET_KIND, pcsName, pcs.metadata.uid) },
          spec: { replicas: seed, minAvailable: group.minAvailable ?? 1, cliqueNames: group.cliqueNames },
        },
      });
      const members = groupReplicas(groupName) ?? seed;
      for (let k = 0; k < members; k += 1) {
        for (const cliqueName of group.cliqueNames) {
          const clique = cliques.find((c) => c.name === cliqueName);
          if (clique === undefined) continue;
          const name = `${groupName}-${k}-${cliqueName}`;
          const labels = { ...base, 'app.kubernetes.io/component': 'pcsg-podclique', 'grove.io/podcliquescalinggroup': groupName, 'grove.io/podcliquescalinggroup-replica-index': String(k) };
          // Owned by the group (its uid is filled in by the driver once the group exists).
          children.push({ kind: PODCLIQUE_KIND, name, object: cliqueObject(pcs, clique, name, labels, { kind: PODCLIQUESCALINGGROUP_KIND, name: groupName, uid: undefined }) });
        }
      }
    }
  }
  return children;
}

/** The status Grove reports for a child that is fully ready at its current generation (grove.md §A.3, §A.4). Pure. */
export function readyChildStatus(child: KubeObject, now: string): Record<string, unknown> {
  const replicas = (child['spec'] as { replicas?: number } | undefined)?.replicas ?? 0;
  const condition = { type: 'MinAvailableBreached', status: 'False', reason: 'SufficientReadyPods', message: 'Simulated by dynamo-fn dev (not the real Grove controller)', lastTransitionTime: now };
  const common = { observedGeneration: child.metadata.generation, replicas, updatedReplicas: replicas, scheduledReplicas: replicas };
  return child.kind === PODCLIQUESCALINGGROUP_KIND
    ? { ...common, availableReplicas: replicas, conditions: [condition] }
    : { ...common, readyReplicas: replicas, scheduleGatedReplicas: 0, conditions: [condition] };
}

/** The PodCliqueSet's status once Grove has acknowledged its generation and every replica is available (grove.md §A.2). Pure. */
export function readyPodCliqueSetStatus(pcs: KubeObject): Record<string, unknown> {
  const replicas = (pcs['spec'] as { replicas?: number } | undefined)?.replicas ?? 0;
  return { observedGeneration: pcs.metadata.generation, replicas, updatedReplicas: replicas, availableReplicas: replicas };
}

/**
 * Whether `status` already holds every field of `wanted` (conditions compared without their
 * times and messages). Key order does not count: the API server returns a custom resource's
 * fields sorted by name, not in the order they were written, and comparing JSON text that
 * depended on order made every pass rewrite every status (a new lastTransitionTime and an
 * update event per PodClique each second). Pure.
 */
export function statusHolds(status: unknown, wanted: Record<string, unknown>): boolean {
  const current = (status ?? {}) as Record<string, unknown>;
  const strip = (value: unknown) => (Array.isArray(value) ? value.map((c: Record<string, unknown>) => ({ ...c, lastTransitionTime: undefined, message: undefined })) : value);
  return Object.entries(wanted).every(([key, value]) => canonicalJson(strip(current[key])) === canonicalJson(strip(value)));
}

/** JSON text with every object's keys sorted (undefined members left out, as JSON.stringify does). Pure. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) =>
    member !== null && typeof member === 'object' && !Array.isArray(member)
      ? Object.fromEntries(Object.entries(member as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : member,
  );
}

/**
 * One pass of the simulated Grove controller over every PodCliqueSet: creates missing children,
 * deletes a group's member cliques beyond its replicas and children of replicas the PodCliqueSet
 * no longer has, writes ready statuses where they differ. Out: how many writes it made.
 */
export async function groveSimulationPass(kube: Kube, now: () => Date = () => new Date()): Promise<number> {
  let writes = 0;
  const stamp = now().toISOString();
  for (const pcs of await kube.list(GROVE_API_VERSION, PODCLIQUESET_KIND)) writes += await groveSyncPodCliqueSet(kube, pcs, stamp);
  return writes;
}

/**
 * The simulated Grove controller's sync of one PodCliqueSet: creates its missing children,
 * deletes a group's member cliques beyond its replicas and children of replicas the PodCliqueSet
 * no longer has, writes ready statuses where they differ (the PodCliqueSet's other status
 * fields, such as a rollout's updateProgress, kept). Out: how many writes it made.
 */
export async function groveSyncPodCliqueSet(kube: Kube, pcs: KubeObject, stamp: string): Promise<number> {
  if (pcs.metadata['deletionTimestamp'] !== undefined) return 0;
  let writes = 0;
  const namespace = pcs.metadata.namespace ?? 'default';
  const selector = { labelSelector: `app.kubernetes.io/part-of=${pcs.metadata.name},app.kubernetes.io/managed-by=grove-operator` };
  const groups = new Map((await kube.list(GROVE_API_VERSION, PODCLIQUESCALINGGROUP_KIND, namespace, selector)).map((g) => [g.metadata.name, g]));
  const cliques = new Map((await kube.list(GROVE_API_VERSION, PODCLIQUE_KIND, namespace, selector)).map((c) => [c.metadata.name, c]));
  const wanted = groveChildren(pcs, (name) => (groups.get(name)?.['spec'] as { replicas?: number } | undefined)?.replicas);
  const wantedNames = new Set(wanted.map((c) => `${c.kind}/${c.name}`));
  for (const child of wanted) {
    const existing = (child.kind === PODCLIQUE_KIND ? cliques : groups).get(child.name);
    let stored = existing;
    if (stored === undefined) {
      let object = child.object;
      const owner = (object.metadata.ownerReferences as { kind: string; name: string; uid: string }[])[0];
      if (owner !== undefined && owner.uid === '') {
        const group = groups.get(owner.name);
        if (group === undefined) continue; // next pass, once the group exists
        object = { ...object, metadata: { ...object.metadata, ownerReferences: [{ ...owner, uid: group.metadata.uid }] } };
      }
      stored = await kube.apply(object, { force: true });
      (child.kind === PODCLIQUE_KIND ? cliques : groups).set(child.name, stored);
      writes += 1;
    }
    const status = readyChildStatus(stored, stamp);
    if (!statusHolds(stored['status'], status)) {
      await kube.applyStatus({ apiVersion: GROVE_API_VERSION, kind: child.kind, metadata: { name: child.name, namespace }, status }, { force: true });
      writes += 1;
    }
  }
  for (const [kind, stored] of [...[...groups.values()].map((g) => [PODCLIQUESCALINGGROUP_KIND, g] as const), ...[...cliques.values()].map((c) => [PODCLIQUE_KIND, c] as const)]) {
    if (wantedNames.has(`${kind}/${stored.metadata.name}`) || stored.metadata['deletionTimestamp'] !== undefined) continue;
    await kube.delete({ apiVersion: GROVE_API_VERSION, kind, namespace, name: stored.metadata.name });
    writes += 1;
  }
  const pcsStatus = readyPodCliqueSetStatus(pcs);
  if (!statusHolds(pcs['status'], pcsStatus)) {
    // The rest of the status (a rollout's updateProgress) stays as it is.
    const status = { ...((pcs['status'] as Record<string, unknown> | undefined) ?? {}), ...pcsStatus };
    await kube.applyStatus({ apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND, metadata: { name: pcs.metadata.name, namespace }, status }, { force: true });
    writes += 1;
  }
  return writes;
}

/** Runs {@link groveSimulationPass} every `intervalMs` until closed; a failed pass is logged and retried. */
export function startGroveSimulation(kube: Kube, options: { readonly intervalMs?: number; readonly onError?: (error: unknown) => void } = {}): { close(): Promise<void> } {
  return startSimulationLoop(() => groveSimulationPass(kube), options);
}

/**
 * Runs `pass` now and again `intervalMs` (default 1000) after each pass ends, until closed; a
 * failed pass goes to `onError` and the next runs as usual. `close` waits for a running pass.
 */
export function startSimulationLoop(pass: () => Promise<unknown>, options: { readonly intervalMs?: number; readonly onError?: (error: unknown) => void } = {}): { close(): Promise<void> } {
  let stopped = false;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    running = pass()
      .then(() => undefined)
      .catch((error: unknown) => options.onError?.(error))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, options.intervalMs ?? 1000);
      });
  };
  tick();
  return {
    async close() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
}
