/**
 * Least privilege, proven on the real API server: the reconcile function runs with a
 * TokenRequest token of a ServiceAccount bound to exactly the chart's ClusterRole
 * (infra/chart/templates/reconcile/rbac.yaml, rendered by `helm template`, lpx.enabled=false), and
 *
 * - with the whole role, DGD and DGDSA events and resyncs are handled (Done) and every write
 *   lands (PodCliqueSet, Services, status, Events, the adapter, the scaled component, the
 *   adapter's status, the adapter's deletion, a PodClique and a PodCliqueScalingGroup scaled
 *   through their `scale` subresources, and the children of a DGD deleted during its pass
 *   deleted by that pass): the role is enough;
 * - with any one verb of the role taken away, the same run comes out differently (a 403 the
 *   function reports, or a write missing): no verb is beyond what the function uses;
 * - the API server runs the OwnerReferencesPermissionEnforcement admission plugin
 *   (test/harness/apiserver.ts), so the DGD's children, controlled by it with
 *   `blockOwnerDeletion`, need the role's `update` on `dynamographdeployments/finalizers`:
 *   without it they are refused with the plugin's message, which the DGD reports.
 *
 * The bindings are copies with test-unique names (the chart's own names are left to
 * chart.test.ts). Grove's controllers do not run here: the test creates the PodClique and
 * PodCliqueScalingGroup Grove would create from the PodCliqueSet and acknowledges its
 * generation, and says so where it does; the DGD stays Ready=False.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DGD_KIND, DGD_V1BETA1, DGDSA_KIND, DGDSA_V1BETA1 } from '../../shared/api/index.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { defaultConfig, startFunctionServer } from '../../shared/runtime/index.js';
import { podCliqueSetName } from '../../shared/domain/index.js';
import reconcile from '../../functions/reconcile/index.js';
import { load as loadDgd } from '../../functions/reconcile/dgd.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { aComponent, aDgd } from '../support/builders.js';
import { eventually } from '../support/eventually.js';
import { chartClusterRoles, grants, kubeconfigFor, label, serviceAccountWith, type Grant, type PolicyRule } from '../support/rbac.js';

const log = pino({ level: 'silent' });
const kubeConfig = testKubeConfig();
const admin: Kube = createKube(kubeConfig, { fieldManager: 'rbac-test' });
/** Writes what Grove's controller would write (its own field manager). */
const grove: Kube = createKube(kubeConfig, { fieldManager: 'grove-operator' });
const GROVE = 'grove.io/v1alpha1';
let namespace = '';
let tmpDir = '';
let chartRules: PolicyRule[] = [];
/** The function runs of the "without any one grant" test that run at the same time. */
const RUNS_AT_ONCE = 3;

beforeAll(async () => {
  chartRules = (await chartClusterRoles('templates/reconcile/rbac.yaml')).get('dynamo-reconcile') ?? [];
  namespace = await createTestNamespace(kubeConfig, 'rbac');
  tmpDir = await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-rbac-'));
});

afterAll(async () => {
  await rm(tmpDir, { recursive: true, force: true });
});

/** What one run of the function did: its outcomes (from /metrics) and the writes stored. */
interface RunResult {
  /** Outcomes of the add and update events of this run. */
  readonly eventOutcomes: string[];
  /** Whether a resync's listKeys of DGDs and of adapters succeeds. */
  readonly resyncListed: { readonly dgd: boolean; readonly dgdsa: boolean };
  readonly podCliqueSet: boolean;
  readonly services: number;
  readonly readyCondition: boolean;
  readonly events: number;
  /** The DGDSA the function created for the scalingAdapter component. */
  readonly adapterCreated: boolean;
  /** The component's replicas after the adapter asked for 3 (written by the function's PUT). */
  readonly scaledReplicas: number | undefined;
  /** The adapter's status.replicas (written by the function). */
  readonly adapterStatusReplicas: number | undefined;
  /** The adapter is gone after the component opted out. */
  readonly adapterDeleted: boolean;
  /** The worker PodClique's spec.replicas after the DGD asked for 3 (the function's `podcliques/scale` write). */
  readonly podCliqueReplicas: number | undefined;
  /** The prefill PodCliqueScalingGroup's spec.replicas after the DGD asked for 2 (`podcliquescalinggroups/scale`). */
  readonly scalingGroupReplicas: number | undefined;
  /** A Coherent DGD's PodCliqueSet was written: the pass read the Grove CRD (the Coherent capability check). */
  readonly coherentPodCliqueSet: boolean;
  /** Once Grove reported every worker at its revision, the pass committed nvidia.com/current-worker-hash-v2 on the DGD (a patch of the DGD). */
  readonly workerHashCommitted: boolean;
  /**
   * The DGD came with upstream's legacy v1 `nvidia.com/current-worker-hash` beside a stale v2: the
   * commit of the new generation removed v1 (a resourceVersion-guarded PUT of the DGD).
   */
  readonly legacyWorkerHashRemoved: boolean;
  /**
   * The children a pass created for a DGD deleted before its status write, that the pass could
   * not delete itself and left to the garbage collector (kinds, sorted): none when it may.
   */
  readonly leftToGarbageCollector: string[];
}

/**
 * Acting as Grove (its controller does not run here): creates the PodClique of the standalone
 * clique `worker` and the PodCliqueScalingGroup `prefill` from the PodCliqueSet's template
 * (`<pcs>-0-<name>`, template replicas seed them, the PodCliqueSet as controller, the
 * `app.kubernetes.io/part-of` label, as test/integration/lifecycle.test.ts does), and
 * acknowledges the PodCliqueSet's generation.
 */
async function groveCreatesChildren(pcsName: string): Promise<void> {
  const pcs = await grove.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
  if (pcs === undefined) return;
  const template = (pcs['spec'] as { template: { cliques: { name: string; spec: { roleName: string; replicas: number; podSpec: unknown } }[]; podCliqueScalingGroups?: { name: string; replicas?: number; minAvailable?: number; cliqueNames: string[] }[] } }).template;
  const metadata = (name: string) => ({
    name: `${pcsName}-0-${name}`,
    namespace,
    labels: { 'app.kubernetes.io/part-of': pcsName, 'app.kubernetes.io/managed-by': 'grove-operator' },
    ownerReferences: [{ apiVersion: GROVE, kind: 'PodCliqueSet', name: pcsName, uid: pcs.metadata.uid, controller: true, blockOwnerDeletion: true }],
  });
  const worker = template.cliques.find((c) => c.name === 'worker');
  if (worker !== undefined) await grove.apply({ apiVersion: GROVE, kind: 'PodClique', metadata: metadata('worker'), spec: { roleName: worker.spec.roleName, replicas: worker.spec.replicas, podSpec: worker.spec.podSpec } });
  const prefill = template.podCliqueScalingGroups?.find((g) => g.name === 'prefill');
  if (prefill !== undefined) {
    await grove.apply({ apiVersion: GROVE, kind: 'PodCliqueScalingGroup', metadata: metadata('prefill'), spec: { replicas: prefill.replicas ?? 1, minAvailable: prefill.minAvailable ?? 1, cliqueNames: prefill.cliqueNames } });
  }
  await grove.applyStatus({ apiVersion: GROVE, kind: 'PodCliqueSet', metadata: { name: pcsName, namespace }, status: { observedGeneration: pcs.metadata.generation } }, { force: true });
}

/**
 * What Grove reports once the rollout is done: every PodClique and PodCliqueScalingGroup of the
 * PodCliqueSet observed at its generation with all its replicas updated and ready, and the
 * PodCliqueSet acknowledged with no update in progress.
 */
async function groveReportsWorkersUpdated(pcsName: string): Promise<void> {
  const selector = { labelSelector: `app.kubernetes.io/part-of=${pcsName}` };
  for (const kind of ['PodClique', 'PodCliqueScalingGroup']) {
    for (const child of await grove.list(GROVE, kind, namespace, selector)) {
      const replicas = (child['spec'] as { replicas: number }).replicas;
      const counts = kind === 'PodClique' ? { readyReplicas: replicas } : { availableReplicas: replicas };
      await grove.applyStatus({ apiVersion: GROVE, kind, metadata: { name: child.metadata.name, namespace }, status: { observedGeneration: child.metadata['generation'], replicas, updatedReplicas: replicas, ...counts } }, { force: true });
    }
  }
  const pcs = await grove.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
  if (pcs !== undefined) await grove.applyStatus({ apiVersion: GROVE, kind: 'PodCliqueSet', metadata: { name: pcsName, namespace }, status: { observedGeneration: pcs.metadata['generation'] } }, { force: true });
}

/** A run stopped after an event whose outcome was not Done (see runReconcileAs's stopOnFailedEvent). */
interface FailedEarly {
  readonly failedEarly: string;
}

class FailedEarlyStop extends Error {
  constructor(readonly outcome: string) {
    super(`an event's outcome was ${outcome}`);
  }
}

/** The grants of the Roles the function wrote in the last run (see {@link runReconcileAs}). */
let roleGrants: string[] = [];

/**
 * A v1alpha1 DGD whose worker mounts a claim declared with `create: true` (the fields upstream's
 * CEL rule requires then: storageClass, size, volumeAccessMode), as a user writes it.
 */
function anAlphaDgd(dgdName: string): KubeObject {
  const image = 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0';
  return {
    apiVersion: 'nvidia.com/v1alpha1',
    kind: DGD_KIND,
    metadata: { name: dgdName, namespace },
    spec: {
      backendFramework: 'vllm',
      pvcs: [{ name: `${dgdName}-cache`, create: true, storageClass: 'standard', size: '1Gi', volumeAccessMode: 'ReadWriteOnce' }],
      services: {
        Frontend: { componentType: 'frontend', replicas: 1, extraPodSpec: { mainContainer: { image } } },
        Worker: { componentType: 'worker', replicas: 1, volumeMounts: [{ name: `${dgdName}-cache`, mountPoint: '/models' }], extraPodSpec: { mainContainer: { image } } },
      },
    },
  };
}

/**
 * A DGD whose worker runs an intra-pod GPU memory service with intra-pod failover (as
 * test/integration/gms-claim-template.test.ts writes it), as a user writes it.
 */
function aGmsDgd(dgdName: string): KubeObject {
  const image = 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0';
  return {
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    metadata: { name: dgdName, namespace, annotations: { 'nvidia.com/dynamo-kube-discovery-mode': 'container' } },
    spec: {
      backendFramework: 'vllm',
      components: [
        { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image }] } } },
        {
          name: 'worker',
          type: 'worker',
          replicas: 1,
          experimental: { gpuMemoryService: { mode: 'IntraPod' }, failover: { mode: 'IntraPod' } },
          podTemplate: { spec: { containers: [{ name: 'main', image, command: ['python3', '-m', 'dynamo.vllm'], resources: { limits: { 'nvidia.com/gpu': '2' } } }] } },
        },
      ],
    },
  };
}

/**
 * Runs the reconcile function (its real CloudEvents host) with the ServiceAccount's token over
 * a DGD whose worker has `scalingAdapter` and whose prefill renders as a PodCliqueScalingGroup
 * (`experimental.grove.forceScalingGroup`): an add event (PodCliqueSet, Services, status,
 * Event, the adapter); a v1alpha1 DGD's add event (a `pvcs[].create` claim); a GPU memory
 * service DGD's add event (its ResourceClaimTemplate); acting as Grove,
 * the worker PodClique and prefill scaling group; the
 * adapter asking for 3 replicas and its event (the DGD component set to 3, the adapter status);
 * the DGD's event (the worker PodClique scaled to 3 through `podcliques/scale`); the worker
 * opting out and prefill asking for 2 (the adapter deleted, the scaling group scaled through
 * `podcliquescalinggroups/scale`); the resync's bulk read and listing of DGDs and of adapters; and a second
 * DGD deleted by its user while its first pass runs (just before the status write), whose
 * PodCliqueSet and Services the pass then deletes itself. Reads the outcome counters, the
 * stored objects and the pass's log.
 */
async function runReconcileAs(serviceAccount: string, options: { readonly stopOnFailedEvent?: boolean } = {}): Promise<RunResult | FailedEarly> {
  const kubeconfigPath = await kubeconfigFor(kubeConfig, namespace, serviceAccount, tmpDir);
  const name = `rbac-${randomBytes(3).toString('hex')}`;
  const adapterName = `${name}-worker`;
  const dgd = aDgd({ metadata: { name, namespace }, spec: { components: [aComponent('frontend', 'frontend'), aComponent('worker', 'worker'), aComponent('prefill', 'prefill', { experimental: { grove: { forceScalingGroup: true } } })] } });
  const { uid: _uid, ...metadata } = dgd.metadata;
  const pcsName = podCliqueSetName(name, dgd.spec.components);
  const applyDgd = (withAdapter: boolean, replicas: Record<string, number> = {}, objectName = name) =>
    admin.apply(
      {
        apiVersion: dgd.apiVersion,
        kind: dgd.kind,
        // The main DGD as an upstream operator left it: legacy v1 worker hash beside a stale v2.
        metadata: { ...metadata, name: objectName, namespace, ...(objectName === name ? { annotations: { 'nvidia.com/current-worker-hash': 'abc12345', 'nvidia.com/current-worker-hash-v2': 'deadbeef' } } : {}) },
        spec: { ...dgd.spec, components: dgd.spec.components.map((c) => ({ ...c, ...(c.name === 'worker' && withAdapter ? { scalingAdapter: {} } : {}), replicas: replicas[c.name] ?? c.replicas })) },
      } as unknown as KubeObject,
      { force: true },
    );
  await applyDgd(true);
  const server = await startFunctionServer(reconcile, { config: defaultConfig({ port: 0, kubeconfigPath }), log, host: '127.0.0.1' });
  const adapterRef = { apiVersion: DGDSA_V1BETA1, kind: DGDSA_KIND, namespace, name: adapterName };
  const deletedName = `${name}-deleted`;
  const alphaName = `alpha-${name}`;
  const gmsName = `gms-${name}`;
  const coherentName = `coh-${name}`;
  try {
    const send = async (type: string, extensions: Record<string, string>, data: unknown) => {
      const response = await fetch(server.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'ce-specversion': '1.0',
          'ce-id': randomBytes(8).toString('hex'),
          'ce-source': 'https://127.0.0.1',
          'ce-type': type,
          ...Object.fromEntries(Object.entries(extensions).map(([key, value]) => [`ce-${key}`, value])),
        },
        body: JSON.stringify(data),
      });
      await response.arrayBuffer();
    };
    const refEvent = (type: string, kind: string, apiVersion: string, objectName: string) =>
      send(`dev.knative.apiserver.ref.${type}`, { kind, apiversion: apiVersion, name: objectName, namespace }, { apiVersion, kind, name: objectName, namespace });
    const scrape = async () => (await fetch(`${server.url.replace(/\/$/, '')}/metrics`)).text();
    const outcomesIn = (metrics: string, metric: string, kind?: string) =>
      [...metrics.matchAll(new RegExp(`^${metric}\\{([^}]*)\\} (\\d+)`, 'gm'))]
        .filter((m) => Number(m[2]) > 0 && (kind === undefined || (m[1] ?? '').includes(`kind="${kind}"`)))
        .map((m) => /outcome="(\w+)"/.exec(m[1] ?? '')?.[1] ?? '')
        .sort();
    // The outcome counters only grow: once an event's outcome is other than Done (or Skipped),
    // this run's eventOutcomes can no longer be the whole role's ['Done'], so the run already
    // comes out differently and need not go on (stopOnFailedEvent).
    const event = async (type: string, kind: string, apiVersion: string, objectName: string) => {
      await refEvent(type, kind, apiVersion, objectName);
      if (options.stopOnFailedEvent !== true) return;
      const failed = outcomesIn(await scrape(), 'dynamo_fn_events_total').find((o) => o !== 'Done' && o !== 'Skipped');
      if (failed !== undefined) throw new FailedEarlyStop(failed);
    };
    const specReplicas = async (kind: string, objectName: string) => ((await admin.get({ apiVersion: GROVE, kind, namespace, name: objectName }))?.['spec'] as { replicas?: number } | undefined)?.replicas;

    await event('add', DGD_KIND, DGD_V1BETA1, name);
    // A v1alpha1 DGD declaring a claim with `create: true` (upstream reconcilePVC): its pass
    // reads the claim by name and creates it when absent. Stored through the conversion webhook.
    await admin.apply(anAlphaDgd(alphaName), { force: true });
    await event('add', DGD_KIND, DGD_V1BETA1, alphaName);
    // A DGD whose worker runs an intra-pod GPU memory service: its pass reads and applies the
    // ResourceClaimTemplate the worker's pods claim their GPUs from.
    await admin.apply(aGmsDgd(gmsName), { force: true });
    await event('add', DGD_KIND, DGD_V1BETA1, gmsName);
    await groveCreatesChildren(pcsName);
    const adapterCreated = (await admin.get(adapterRef)) !== undefined;
    if (adapterCreated) {
      // The adapter asks for 3 replicas, as an HPA writing its scale subresource would.
      await admin.apply({ apiVersion: DGDSA_V1BETA1, kind: DGDSA_KIND, metadata: { name: adapterName, namespace }, spec: { dgdRef: { name, serviceName: 'worker' }, replicas: 3 } } as unknown as KubeObject, { force: true });
      await event('update', DGDSA_KIND, DGDSA_V1BETA1, adapterName);
    }
    const scaled = await admin.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name });
    const scaledReplicas = (scaled?.['spec'] as { components?: { name: string; replicas?: number }[] } | undefined)?.components?.find((c) => c.name === 'worker')?.replicas;
    const adapterStatusReplicas = ((await admin.get(adapterRef))?.['status'] as { replicas?: number } | undefined)?.replicas;
    // The DGD's own update event (the adapter's PUT changed it): its worker clique follows.
    await event('update', DGD_KIND, DGD_V1BETA1, name);
    const podCliqueReplicas = await specReplicas('PodClique', `${pcsName}-0-worker`);
    await applyDgd(false, { worker: 3, prefill: 2 });
    await event('update', DGD_KIND, DGD_V1BETA1, name);
    const adapterDeleted = adapterCreated && (await admin.get(adapterRef)) === undefined;
    const scalingGroupReplicas = await specReplicas('PodCliqueScalingGroup', `${pcsName}-0-prefill`);
    // Grove reports every worker at its revision (PodCliqueSet acknowledged, children observed and
    // updated): the next pass commits the worker hash on the DGD.
    await groveReportsWorkersUpdated(pcsName);
    await event('update', DGD_KIND, DGD_V1BETA1, name);
    const committed = await admin.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name });
    const committedHash = (committed?.metadata['annotations'] as Record<string, string> | undefined)?.['nvidia.com/current-worker-hash-v2'];
    const workerHashCommitted = committedHash !== undefined && committedHash !== 'deadbeef';
    const legacyWorkerHashRemoved = (committed?.metadata['annotations'] as Record<string, string> | undefined)?.['nvidia.com/current-worker-hash'] === undefined;
    // A DGD selecting Coherent: its pass reads the Grove PodCliqueSet CRD before writing one.
    await admin.apply({ apiVersion: dgd.apiVersion, kind: dgd.kind, metadata: { name: coherentName, namespace, annotations: { 'nvidia.com/grove-update-strategy': 'Coherent' } }, spec: { components: [aComponent('frontend', 'frontend')] } } as unknown as KubeObject, { force: true });
    await event('add', DGD_KIND, DGD_V1BETA1, coherentName);
    const coherentPodCliqueSet = (await admin.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: coherentName })) !== undefined;
    const eventOutcomes = outcomesIn(await scrape(), 'dynamo_fn_events_total');
    // A resync lists every object of a kind (cluster-wide, other test files' objects too) through
    // the route's listKeys, then reconciles each as above: run the listKeys of the DGD and DGDSA
    // routes with the same token, which is the part of a resync the role must allow.
    const deps = await reconcile.init({ log, now: () => new Date(), config: defaultConfig({ port: 0, kubeconfigPath }) });
    // A resync's reads go through its list snapshot (functions/reconcile/resync.ts: one LIST per
    // kind, every namespace), the keys included.
    const lists = async (kind: string) => {
      const route = reconcile.routes.find((r) => r.kind === kind);
      if (route?.listKeys === undefined) return false;
      const bulk = reconcile.resyncDeps?.(deps) ?? deps;
      try {
        const keys = await route.listKeys(bulk);
        // Each DGD's pass of the resync reads its children from the same snapshot (one LIST of each
        // kind it reads: PodCliqueSets, Services, PodCliques, scaling groups, the discovery
        // identity, claims, ResourceClaimTemplates): read this run's DGDs as a resync pass does.
        if (kind === DGD_KIND) for (const key of keys.filter((k) => k.namespace === namespace && [name, alphaName, gmsName].includes(k.name))) await loadDgd(bulk, key);
        return true;
      } catch {
        return false;
      }
    };
    const resyncListed = { dgd: await lists(DGD_KIND), dgdsa: await lists(DGDSA_KIND) };
    const leftToGarbageCollector = await runDeletedDuringPass(kubeconfigPath, deletedName, () => applyDgd(false, {}, deletedName));
    // The rules of the Roles this run's DGDs control (the function writes them, e.g. a DGD's
    // Kubernetes-discovery Role), read before the DGDs go.
    const ownRoles = (await admin.list('rbac.authorization.k8s.io/v1', 'Role', namespace)).filter((role) =>
      ((role.metadata['ownerReferences'] as { kind?: string; name?: string }[] | undefined) ?? []).some((o) => o.kind === DGD_KIND && [name, alphaName, gmsName].includes(o.name ?? '')),
    );
    roleGrants = [...new Set(grants(ownRoles.flatMap((role) => (role['rules'] as PolicyRule[] | undefined) ?? [])).map(label))].sort();
    const stored = await admin.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name });
    const conditions = (stored?.['status'] as { conditions?: { type: string }[] } | undefined)?.conditions ?? [];
    const services = (await admin.list('v1', 'Service', namespace)).filter((svc) => svc.metadata.name.startsWith(`${name}-`) && !svc.metadata.name.startsWith(deletedName));
    const events = (await admin.list('events.k8s.io/v1', 'Event', namespace)).filter((e) => [name, adapterName].includes((e['regarding'] as { name?: string } | undefined)?.name ?? ''));
    return {
      eventOutcomes: [...new Set(eventOutcomes.filter((o) => o !== 'Skipped'))],
      resyncListed,
      podCliqueSet: (await admin.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName })) !== undefined,
      services: services.length,
      readyCondition: conditions.some((c) => c.type === 'Ready'),
      events: events.length,
      adapterCreated,
      scaledReplicas,
      adapterStatusReplicas,
      adapterDeleted,
      podCliqueReplicas,
      scalingGroupReplicas,
      coherentPodCliqueSet,
      workerHashCommitted,
      legacyWorkerHashRemoved,
      leftToGarbageCollector,
    };
  } catch (error) {
    if (error instanceof FailedEarlyStop) return { failedEarly: error.outcome };
    throw error;
  } finally {
    await server.close();
    // The next run's resync then meets only its own DGD of this file.
    await admin.delete({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name });
    await admin.delete({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: deletedName });
    await admin.delete({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: alphaName });
    await admin.delete({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: gmsName });
    await admin.delete({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: coherentName });
    await admin.delete(adapterRef);
  }
}

/**
 * The DGD's user deletes it while the function's first pass over it runs: the function's client
 * (the ServiceAccount's token) is wrapped only to time that delete, done by the admin just before
 * the DGD status write, which the API server then answers 404. The pass removes what it created
 * (functions/reconcile/dgd.ts undoCreations, a delete with a resourceVersion precondition).
 * Out: the kinds it logged as left to the garbage collector (a refused delete), sorted; or the
 * pass's outcome when it was not Done.
 */
async function runDeletedDuringPass(kubeconfigPath: string, dgdName: string, create: () => Promise<unknown>): Promise<string[]> {
  await create();
  const lines: { msg?: string; kind?: string }[] = [];
  const capture = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line) as { msg?: string; kind?: string }) });
  const base = await reconcile.init({ log: capture, now: () => new Date(), config: defaultConfig({ port: 0, kubeconfigPath }) });
  const dgdRef = { apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: dgdName };
  const kube: Kube = {
    ...base.kube,
    applyStatus: async (obj, options) => {
      if (obj.kind === DGD_KIND && obj.metadata.name === dgdName) {
        await admin.delete(dgdRef);
        await eventually(`DGD ${dgdName} gone`, async () => ((await admin.get(dgdRef)) === undefined ? true : undefined));
      }
      return base.kube.applyStatus(obj, options);
    },
  };
  const route = reconcile.routes.find((r) => r.kind === DGD_KIND);
  // A refused read or write (the role without one of its grants) ends the pass with an error, as the host would see it.
  const outcome = await (route?.handle({ id: randomBytes(8).toString('hex'), type: 'dev.knative.apiserver.ref.add', source: 'test', key: dgdRef, object: undefined }, { ...base, kube }) ?? Promise.resolve({ kind: 'NoRoute' })).then(
    (o) => o.kind,
    (error: unknown) => (error instanceof Error ? error.name : 'Error'),
  );
  if (outcome !== 'Done') return [`outcome ${outcome}`];
  return lines.filter((l) => l.msg?.startsWith('Left ') === true && l.msg.endsWith(' to the garbage collector')).map((l) => l.kind ?? '').sort();
}

/** The rules without one grant. */
function without(rules: readonly PolicyRule[], drop: Grant): PolicyRule[] {
  return grants(rules)
    .filter((g) => !(g.group === drop.group && g.resource === drop.resource && g.verb === drop.verb))
    .map((g) => ({ apiGroups: [g.group], resources: [g.resource], verbs: [g.verb] }));
}

describe('reconcile ServiceAccount (chart templates/reconcile/rbac.yaml)', () => {
  let full: RunResult;

  it('is enough: with a TokenRequest token of the chart role, DGD and adapter events and resyncs are Done and every write lands', async () => {
    const result = await runReconcileAs(await serviceAccountWith(admin, kubeConfig, namespace, 'reconcile', chartRules));
    full = result as RunResult;
    expect(result).toEqual({
      eventOutcomes: ['Done'],
      resyncListed: { dgd: true, dgdsa: true },
      podCliqueSet: true,
      services: expect.any(Number) as number,
      readyCondition: true,
      events: expect.any(Number) as number,
      adapterCreated: true,
      scaledReplicas: 3,
      adapterStatusReplicas: 3,
      adapterDeleted: true,
      podCliqueReplicas: 3,
      scalingGroupReplicas: 2,
      coherentPodCliqueSet: true,
      workerHashCommitted: true,
      legacyWorkerHashRemoved: true,
      leftToGarbageCollector: [],
    });
    expect(full.services).toBeGreaterThan(0);
    expect(full.events).toBeGreaterThan(2);
  });

  it('has no wildcard, no watch or deletecollection (a level-triggered function never sends them), update only for the DGD replicas an adapter drives and for the DGD\'s finalizers (its children\'s blockOwnerDeletion), delete only for adapters and for what a pass created for a DGD deleted during it; beyond the rules of the Roles the function writes, which it holds so the API server lets it write them (RBAC escalation prevention)', () => {
    expect(full).toBeDefined();
    const held = new Set(roleGrants);
    const all = grants(chartRules).filter((g) => !held.has(label(g)));
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((g) => g.group === '*' || g.resource === '*' || g.verb === '*' || ['watch', 'deletecollection'].includes(g.verb)).map(label)).toEqual([]);
    expect(all.filter((g) => g.verb === 'update' || g.verb === 'delete').map(label).sort()).toEqual([
      'delete core/services',
      'delete grove.io/podcliquesets',
      'delete nvidia.com/dynamographdeploymentscalingadapters',
      'update nvidia.com/dynamographdeployments',
      'update nvidia.com/dynamographdeployments/finalizers',
    ]);
  });

  it('"only users with update permission to the finalizers subresource of the referenced owner" may set blockOwnerDeletion (OwnerReferencesPermissionEnforcement): without update on dynamographdeployments/finalizers the DGD\'s children are refused with the plugin\'s message, reported on the DGD', async () => {
    const drop = { group: 'nvidia.com', resource: 'dynamographdeployments/finalizers', verb: 'update' };
    expect(grants(chartRules).map(label)).toContain(label(drop));
    const serviceAccount = await serviceAccountWith(admin, kubeConfig, namespace, 'reconcile-nofin', without(chartRules, drop));
    const kubeconfigPath = await kubeconfigFor(kubeConfig, namespace, serviceAccount, tmpDir);
    const name = `nofin-${randomBytes(3).toString('hex')}`;
    const dgd = aDgd({ metadata: { name, namespace }, spec: { components: [aComponent('frontend', 'frontend'), aComponent('worker', 'worker')] } });
    const { uid: _uid, ...metadata } = dgd.metadata;
    await admin.apply({ apiVersion: dgd.apiVersion, kind: dgd.kind, metadata, spec: dgd.spec } as unknown as KubeObject, { force: true });
    try {
      const deps = await reconcile.init({ log, now: () => new Date(), config: defaultConfig({ port: 0, kubeconfigPath }) });
      const route = reconcile.routes.find((r) => r.kind === DGD_KIND);
      const key = { apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name };
      const outcome = await route?.handle({ id: randomBytes(8).toString('hex'), type: 'dev.knative.apiserver.ref.add', source: 'test', key, object: undefined }, deps);
      const ready = await eventually('the refusal reported on the DGD', async () => {
        const stored = await admin.get(key);
        return ((stored?.['status'] as { conditions?: { type: string; status: string; message?: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready' && c.message !== undefined && c.message !== '');
      });
      const pcs = await admin.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: podCliqueSetName(name, dgd.spec.components) });
      expect({ outcome: outcome?.kind, readyStatus: ready.status, pcs }).toEqual({ outcome: 'Permanent', readyStatus: 'False', pcs: undefined });
      // The plugin's denial (k8s.io/kubernetes plugin/pkg/admission/gc/gc_admission.go).
      expect(ready.message).toContain("is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on");
    } finally {
      await admin.delete({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name });
    }
  });

  it('grants no verb beyond what the function uses: without any one grant, the same run comes out differently', async () => {
    // The whole role's run: its events all Done (asserted above), which a run stopped early is not.
    expect(full.eventOutcomes).toEqual(['Done']);
    const unneeded: string[] = [];
    // One run of the function per grant (about 30), each with its own ServiceAccount, DGD names
    // and function server, RUNS_AT_ONCE at a time: a run mostly waits on the API server. A run
    // stops at the first event whose outcome is not Done: it already comes out differently.
    const pending = [...grants(chartRules)];
    const worker = async () => {
      for (let grant = pending.shift(); grant !== undefined; grant = pending.shift()) {
        const result = await runReconcileAs(await serviceAccountWith(admin, kubeConfig, namespace, 'reconcile', without(chartRules, grant)), { stopOnFailedEvent: true });
        if (JSON.stringify(result) === JSON.stringify(full)) unneeded.push(label(grant));
      }
    };
    await Promise.all(Array.from({ length: RUNS_AT_ONCE }, worker));
    expect(unneeded.sort()).toEqual([]);
    // About 30 runs: well past the file's 120 s default on a loaded machine. Measured with 7
    // engineers on 2 cores, one run after another: 543 s once, and over 600 s once (timed out).
  }, 900_000);
});
