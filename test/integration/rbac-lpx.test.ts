/**
 * Least privilege, proven for the LPX part of the reconcile function (issue 9 part 4): with
 * lpx.enabled=true the chart's `dynamo-reconcile` ClusterRole (infra/chart/templates/reconcile/rbac.yaml,
 * rendered by `helm template`) gains LPX rules; the function runs with a TokenRequest token of a
 * ServiceAccount bound to exactly that role, through a loopback recorder that notes the verb and
 * resource of every request (test/support/rbac.ts). Representative LPX flows run (as
 * test/integration/lpx.test.ts runs them): the lpx.enabled start-up check, a hybrid graph
 * (LPXGraphDeployment, LPX PodCliqueSet and serving Service, the scaling group scaled from its
 * seed, one pipeline request per replica), a scheduler receipt's event, fewer replicas (the
 * scaling group scaled down, the trailing request deleted), an incompatible layout (the LPX
 * PodCliqueSet deleted for replacement), the runtime ConfigMaps of a second graph (its build's
 * table created; a recompiled build's created and the old one deleted once Ready, see
 * reconcileLpxRebuilt in test/support/lpx-world.ts) and the resync's listing. Then:
 *
 * - every flow does what it should and the API server refused nothing: the role is enough;
 * - every verb the LPX rules add was used by some request: none is beyond what the function
 *   uses (the rules without LPX are proven by test/integration/rbac.test.ts); a `<resource>/finalizers`
 *   update is used by an accepted write that set `blockOwnerDeletion` on an owner of that kind
 *   (the API server runs the OwnerReferencesPermissionEnforcement admission plugin);
 * - without `podcliquesets/finalizers` (upstream-notes/lpx.md §7) the pipeline requests the LPX
 *   PodCliqueSet controls are refused with the plugin's message, reported on the LPXGD.
 *
 * Grove's controller and the LPX scheduler do not run here: the test writes what they would
 * (test/support/lpx-world.ts says what).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DGD_KIND, DGD_V1BETA1, LPR_API_VERSION, LPR_KIND, LPXGD_API_VERSION, LPXGD_KIND } from '../../shared/api/index.js';
import { createKube, type Kube } from '../../shared/kube/index.js';
import { defaultConfig, type Outcome } from '../../shared/runtime/index.js';
import reconcile from '../../functions/reconcile/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import {
  actAsGroveRoleCliques,
  actAsGroveScalingGroup,
  aHybridDgd,
  applyDgd,
  ensureGroveScalingGroup,
  eventFor,
  lpxPcsName,
  ordinalOf,
  prepareLpxBuild,
  reconcileAll,
  reconcileLpxRebuilt,
  removeLpxBuild,
  requestsOf,
  writeGroveScalingGroupStatus,
  withRebuiltPartitions,
  writeReceipt,
} from '../support/lpx-world.js';
import { chartClusterRoles, forbidden, grants, kubeconfigFor, label, serviceAccountWith, startRequestRecorder, usedGrants, type PolicyRule, type RequestRecorder } from '../support/rbac.js';

const log = pino({ level: 'silent' });
const kubeConfig = testKubeConfig();
const admin: Kube = createKube(kubeConfig, { fieldManager: 'rbac-test' });
const GROVE = 'grove.io/v1alpha1';

let namespace = '';
let tmpDir = '';
let withLpx: PolicyRule[] = [];
let lpxOnly: string[] = [];
let recorder: RequestRecorder;

beforeAll(async () => {
  withLpx = (await chartClusterRoles('templates/reconcile/rbac.yaml', { 'lpx.enabled': 'true' })).get('dynamo-reconcile') ?? [];
  const base = new Set(grants((await chartClusterRoles('templates/reconcile/rbac.yaml')).get('dynamo-reconcile') ?? []).map(label));
  lpxOnly = [...new Set(grants(withLpx).map(label))].filter((g) => !base.has(g)).sort();
  namespace = await createTestNamespace(kubeConfig, 'rbac-lpx');
  tmpDir = await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-rbac-lpx-'));
  recorder = await startRequestRecorder(kubeConfig);
  await prepareLpxBuild();
});

afterAll(async () => {
  await recorder?.close();
  await removeLpxBuild();
  await rm(tmpDir, { recursive: true, force: true });
});

const specReplicas = async (name: string) => ((await admin.get({ apiVersion: GROVE, kind: 'PodCliqueScalingGroup', namespace, name }))?.['spec'] as { replicas?: number } | undefined)?.replicas;
const liveOrdinals = async () => (await requestsOf(namespace)).filter((r) => r.metadata.deletionTimestamp === undefined).map(ordinalOf).sort();

describe('reconcile ServiceAccount with lpx.enabled (chart templates/reconcile/rbac.yaml)', () => {
  let done = false;

  it('adds no wildcard, no watch or deletecollection (a level-triggered function never sends them)', () => {
    expect(lpxOnly.length).toBeGreaterThan(0);
    expect(lpxOnly.filter((g) => g.includes('*') || g.startsWith('watch ') || g.startsWith('deletecollection '))).toEqual([]);
  });

  it('is enough: with a TokenRequest token of the chart role, the LPX start-up check and LPX flows do their writes and nothing is refused', async () => {
    const serviceAccount = await serviceAccountWith(admin, kubeConfig, namespace, 'reconcile-lpx', withLpx);
    const kubeconfigPath = await kubeconfigFor(kubeConfig, namespace, serviceAccount, tmpDir, recorder.url);
    // init runs the lpx.enabled start-up check (the LpuPipelineRequest, PodGang and LPXGD APIs listed).
    const deps = await reconcile.init({ log, now: () => new Date(), config: defaultConfig({ port: 0, kubeconfigPath, lpxEnabled: true }) });
    const outcome = (promise: Promise<Outcome>) => promise.then((o) => o.kind, (error: unknown) => `threw ${error instanceof Error ? error.message : String(error)}`);
    const route = (kind: string) => {
      const found = reconcile.routes.find((r) => r.kind === kind);
      if (found === undefined) throw new Error(`no reconcile route for ${kind}`);
      return found;
    };
    const name = 'hybrid';

    // A hybrid graph with two engines: the LPXGD, the LPX PodCliqueSet and Service; as Grove,
    // the scaling group from the seed; then the group scaled to 2 and one request per replica.
    await applyDgd(aHybridDgd(namespace, name, { replicas: 2 }));
    await reconcileAll(deps, namespace, name);
    const pcsName = await lpxPcsName(namespace, name);
    await actAsGroveScalingGroup(namespace, pcsName);
    const outcomes: Record<string, string> = {};
    outcomes['lpx'] = await outcome(route(LPXGD_KIND).handle(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), deps));
    const lpxgd = await admin.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name });
    const scaledUp = await specReplicas(`${pcsName}-0-lpx`);
    const published = await liveOrdinals();

    // The scheduler's receipt on request 0, and its event (followed to the LPXGD by annotation).
    const first = (await requestsOf(namespace)).find((r) => ordinalOf(r) === 0);
    if (first !== undefined) await writeReceipt(first, 'bound');
    outcomes['request'] = await outcome(route(LPR_KIND).handle(eventFor(LPR_API_VERSION, LPR_KIND, namespace, first?.metadata.name ?? ''), deps));

    // One engine: the scaling group scaled down, the trailing request deleted.
    await applyDgd(aHybridDgd(namespace, name, { replicas: 1 }));
    outcomes['dgd'] = await outcome(route(DGD_KIND).handle(eventFor(DGD_V1BETA1, DGD_KIND, namespace, name), deps));
    outcomes['fewer'] = await outcome(route(LPXGD_KIND).handle(eventFor(LPXGD_API_VERSION, LPXGD_KIND, namespace, name), deps));
    const scaledDown = await specReplicas(`${pcsName}-0-lpx`);
    const afterScaleDown = await eventually('the trailing request deleted', async () => {
      const ordinals = await liveOrdinals();
      return ordinals.length === 1 ? ordinals : undefined;
    });

    // An incompatible layout (a new minAvailable) replaces the whole LPX PodCliqueSet (lpx.md §6.2).
    const oldPcs = await admin.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
    await applyDgd(aHybridDgd(namespace, name, { replicas: 2, minAvailable: 2 }));
    await reconcileAll(deps, namespace, name);
    const replaced = await eventually('the old LPX PodCliqueSet deleted', async () => {
      const current = await admin.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace, name: pcsName });
      return current === undefined || current.metadata.uid !== oldPcs?.metadata.uid || current.metadata.deletionTimestamp !== undefined ? true : undefined;
    }, 60_000, 250);

    // The runtime ConfigMaps of a second graph (lpx.md §5.3 steps 12 and 19): its build's table
    // created; as Grove, its engine available with ready role cliques; a recompiled build's
    // table created; the requests bound; then the LPXGD Ready and the first table deleted.
    await applyDgd(aHybridDgd(namespace, 'configs', { replicas: 1 }));
    await reconcileAll(deps, namespace, 'configs');
    const configsPcs = await lpxPcsName(namespace, 'configs');
    const tablesOf = async () => (await admin.list('v1', 'ConfigMap', namespace)).filter((c) => c.metadata.name.startsWith(`${configsPcs}-lpu-`)).map((c) => c.metadata.name);
    const tableA = await tablesOf();
    const configsGroup = await ensureGroveScalingGroup(namespace, configsPcs);
    await writeGroveScalingGroupStatus(namespace, configsGroup.name, configsGroup.group, { replicas: 1, scheduledReplicas: 1, updatedReplicas: 1, availableReplicas: 1 });
    await actAsGroveRoleCliques(namespace, configsPcs, 1);
    await reconcileLpxRebuilt(deps, namespace, 'configs', withRebuiltPartitions);
    const ofConfigs = (r: { metadata: { annotations?: Record<string, string> } }) => r.metadata.annotations?.['lpx.nvidia.com/deployment-name'] === 'configs';
    for (const request of (await requestsOf(namespace)).filter(ofConfigs)) await writeReceipt(request, 'bound');
    const tables = await eventually('the recompiled build\'s table, and the first deleted once Ready', async () => {
      const desired = await reconcileLpxRebuilt(deps, namespace, 'configs', withRebuiltPartitions);
      return desired.deleteConfigMaps.length > 0 ? { deleted: desired.deleteConfigMaps.map((c) => c.name), kept: (await tablesOf()).length } : undefined;
    }, 60_000, 250);

    const listed = await (route(LPXGD_KIND).listKeys?.(deps).then(() => true, () => false) ?? Promise.resolve(false));
    expect(forbidden(recorder.requests)).toEqual([]);
    expect({ outcomes, lpxgdOwner: (lpxgd?.metadata['ownerReferences'] as { kind: string }[] | undefined)?.[0]?.kind, scaledUp, published, scaledDown, afterScaleDown, replaced, tableA: tableA.length, tables, listed }).toEqual({
      outcomes: { lpx: 'Done', request: 'Done', dgd: 'Done', fewer: 'Done' },
      // lpx.md §2.3 ownership chain: the DGD controls its LPXGraphDeployment.
      lpxgdOwner: DGD_KIND,
      // Explicit replicas 2: the scaling group is scaled from its seed, one request per replica (lpx.md §3.2).
      scaledUp: 2,
      published: [0, 1],
      scaledDown: 1,
      afterScaleDown: [0],
      replaced: true,
      // One LPU table per decoded build; the old one deleted once Ready (upstream deleteUnusedConfigMaps).
      tableA: 1,
      tables: { deleted: tableA, kept: 1 },
      listed: true,
    });
    done = true;
  });

  it('grants no verb beyond what the function uses: every verb the LPX rules add was sent by some request of the flows (a finalizers grant: some accepted write set blockOwnerDeletion on an owner of that resource)', () => {
    expect(done).toBe(true);
    const used = usedGrants(recorder.requests);
    expect(lpxOnly.filter((g) => !used.has(g))).toEqual([]);
  });

  it('"only users with update permission to the finalizers subresource of the referenced owner" may set blockOwnerDeletion (OwnerReferencesPermissionEnforcement): without update on podcliquesets/finalizers the pipeline requests the LPX PodCliqueSet controls are refused with the plugin\'s message, reported on the LPXGraphDeployment', async () => {
    const drop = 'update grove.io/podcliquesets/finalizers';
    expect(lpxOnly).toContain(drop);
    const rules = grants(withLpx)
      .filter((g) => label(g) !== drop)
      .map((g) => ({ apiGroups: [g.group], resources: [g.resource], verbs: [g.verb] }));
    // Its own namespace: the requests listed there are this graph's only.
    const other = await createTestNamespace(kubeConfig, 'rbac-lpx-nofin');
    const serviceAccount = await serviceAccountWith(admin, kubeConfig, other, 'reconcile-lpx-nofin', rules);
    const kubeconfigPath = await kubeconfigFor(kubeConfig, other, serviceAccount, tmpDir);
    const deps = await reconcile.init({ log, now: () => new Date(), config: defaultConfig({ port: 0, kubeconfigPath, lpxEnabled: true }) });
    const name = 'nofin';
    await applyDgd(aHybridDgd(other, name, { replicas: 1 }));
    await reconcileAll(deps, other, name);
    const pcsName = await lpxPcsName(other, name);
    await actAsGroveScalingGroup(other, pcsName);
    const lpxRoute = reconcile.routes.find((r) => r.kind === LPXGD_KIND);
    await lpxRoute?.handle(eventFor(LPXGD_API_VERSION, LPXGD_KIND, other, name), deps);
    const ready = await eventually('the refusal reported on the LPXGraphDeployment', async () => {
      const lpxgd = await admin.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace: other, name });
      return ((lpxgd?.['status'] as { conditions?: { type: string; status: string; message?: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready' && (c.message ?? '').includes('blockOwnerDeletion'));
    });
    // The LPX PodCliqueSet (owned by the LPXGD, whose finalizers the role may update) was written; no request was.
    expect({ pcs: (await admin.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace: other, name: pcsName })) !== undefined, requests: (await requestsOf(other)).length, readyStatus: ready.status }).toEqual({ pcs: true, requests: 0, readyStatus: 'False' });
    // The plugin's denial (k8s.io/kubernetes plugin/pkg/admission/gc/gc_admission.go).
    expect(ready.message).toContain("is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on");
  });
});
