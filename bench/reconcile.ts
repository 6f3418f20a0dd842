/**
 * Reconcile benchmark (not a test): 500 DGDs on the real API server (etcd + kube-apiserver on
 * loopback, as the integration tests run them) converged by the reconcile function in one
 * resync (`RESYNC_CONCURRENCY` 8: one LIST per kind, then per DGD the applies of the children
 * that differ, status, Event), beside 500 bare server-side applies of the same rendered objects
 * at the same concurrency, measured in one run; then a resync of the same, now unchanged, DGDs.
 * Every request of both sides goes through one loopback recorder, which counts them by verb.
 * Aims (issue 17 item 3): converge in one pass in at most 1.3x the bare applies' time; a quiet
 * resync makes 0 writes and at most one LIST (plus its pages) per kind read.
 * Every side runs in the same API server state, beside the same 500 DGDs (ours', created
 * first), each after a 3 s quiet pause, and the bare side twice, before ours and after it
 * (ours' children deleted first), its baseline the mean of the two: the API server's cost per
 * write grows through a run (its heap, its etcd history), and the 500 DGDs themselves make
 * every write dearer. Measured 2026-12-03: the same bare applies took 1.3-1.5x as long after
 * ours as before, and 10-20% longer beside the DGDs than without them; before then the bare
 * side ran first, without the DGDs, and the ratio read 1.17-1.58x for the same code. Each bare
 * side's objects are deleted before the next side runs: the API server allocates each new
 * Service's cluster IP by listing the IPAddress objects already allocated
 * (`ipallocator.(*Allocator).Used`), and 3,000 more objects in its watch caches cost its
 * garbage collector on every cycle.
 * Beside the times, the CPU each side cost: the API server's and etcd's (their processes'
 * utime + stime, Linux /proc) and this process's (the recorder, the bare applies' client, and
 * on our side the reconcile function, which runs in it). On a machine whose cores the API
 * server saturates, the converge time follows the total of those.
 *
 * Usage: npm run bench:reconcile [-- --dgds N]
 * (BENCH_APISERVER_PPROF=DIR writes the API server's CPU profile of the first 18 s of each side
 * into DIR/bare.pprof, DIR/ours.pprof and DIR/bare-after.pprof, from its /debug/pprof/profile; read them with
 * `go tool pprof -top -cum FILE`.)
 * @module
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import reconcile from '../functions/reconcile/index.js';
import { DGD_KIND, DGD_V1BETA1, parseDgd } from '../shared/api/index.js';
import { renderDgd } from '../shared/domain/index.js';
import { KubeConfig } from '@kubernetes/client-node';
import { createKube, type ApplyObject } from '../shared/kube/index.js';
import { defaultConfig, mapWithConcurrency, RESYNC_EVENT_TYPE, startFunctionServer } from '../shared/runtime/index.js';
import { startControlPlane } from '../test/harness/apiserver.js';
import { defaultCrdFiles } from '../test/harness/crds.js';
import { createLineLog } from '../test/harness/log.js';
import { startRequestRecorder, type RecordedRequest } from '../test/support/rbac.js';
import { WRITE_VERBS, countByResource, countByVerb, recordedKubeconfig } from '../test/support/request-count.js';
import { renderTable } from './table.js';

function loadKubeConfig(file: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(file);
  return config;
}

const CONCURRENCY = 8;
/** A quiet pause before each side is measured, so neither pays for the writes just before it (the API server's and etcd's background work after a burst). */
const SETTLE_MS = 3000;

/** The pids of the control plane's processes: those whose command line names its folder (etcd's data dir, the API server's certificates). Linux only; [] elsewhere. */
function controlPlanePids(dir: string): number[] {
  try {
    return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry) && Number(entry) !== process.pid).filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
      } catch {
        return false;
      }
    }).map(Number);
  } catch {
    return [];
  }
}

/** CPU seconds (user + system) the processes used so far, from /proc/<pid>/stat (clock ticks of 10 ms). */
function cpuSecondsOf(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // Gone: counted no further.
    }
  }
  return ticks / 100;
}

/**
 * Starts an 18 s CPU profile of the API server (its /debug/pprof/profile, as the admin) and
 * writes it to `<dir>/<label>.pprof` when done; nothing without a directory.
 */
async function profileApiServer(server: string, token: string, dir: string | undefined, label: string): Promise<void> {
  if (dir === undefined) return;
  const answer = await request(`${server}/debug/pprof/profile?seconds=18`, { headers: { authorization: `Bearer ${token}` }, dispatcher: new Agent({ connect: { rejectUnauthorized: false } }) });
  writeFileSync(path.join(dir, `${label}.pprof`), Buffer.from(await answer.body.arrayBuffer()));
}

const processCpuSeconds = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
};

function aGraph(namespace: string, index: number): ApplyObject {
  return {
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    metadata: { name: `graph-${index}`, namespace },
    spec: {
      backendFramework: 'vllm',
      components: [
        { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } },
        { name: 'worker', type: 'worker', replicas: 2, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0', args: ['--model', 'Qwen/Qwen3-0.6B'] }] } } },
      ],
    },
  };
}

/**
 * The objects `renderDgd` makes for each of the `dgds` bench DGDs in `namespace`, rendered for a
 * DGD with a uid so they carry the controller reference ours carry (with the API server's
 * OwnerReferencesPermissionEnforcement on, a create with one is checked against the owner).
 */
function renderedObjectsOf(namespace: string, dgds: number): ApplyObject[][] {
  return Array.from({ length: dgds }, (_, index) => {
    const parsed = parseDgd(aGraph(namespace, index));
    if (!parsed.ok) throw new Error('bench DGD does not parse');
    const uid = `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;
    const rendered = renderDgd({ ...parsed.dgd, metadata: { ...parsed.dgd.metadata, uid } });
    if (!rendered.ok) throw new Error('bench DGD does not render');
    return rendered.objects as unknown as ApplyObject[];
  });
}

/** Sends one resync to the function and waits for its answer. */
async function sendResync(url: string, id: string): Promise<void> {
  const answer = await request(`${url}/`, {
    method: 'POST',
    headers: { 'ce-id': id, 'ce-specversion': '1.0', 'ce-type': RESYNC_EVENT_TYPE, 'ce-source': '/bench', 'content-type': 'application/json' },
    body: '{}',
    headersTimeout: 600_000,
    bodyTimeout: 600_000,
  });
  await answer.body.text();
  if (answer.statusCode !== 204) throw new Error(`resync answered ${answer.statusCode}`);
}

const verbs = (requests: readonly RecordedRequest[]) => Object.entries(countByVerb(requests)).map(([verb, count]) => `${verb} ${count}`).join(', ') || 'none';

export async function runReconcileBench(dgds: number): Promise<string> {
  const log = createLineLog({ verbose: false });
  // 500 DGDs with two Services each, twice (bare and ours): more than a /24 holds.
  const plane = await startControlPlane({ crdFiles: await defaultCrdFiles(), log, withControllerManager: false, serviceClusterIpRange: '10.0.0.0/16' });
  const dir = await mkdtemp(path.join(tmpdir(), 'bench-reconcile-'));
  // Every request of both sides goes through one loopback recorder (verb and resource as the
  // API server's authorizer sees them), so the calls are counted and both pay the same hop.
  const recorder = await startRequestRecorder(plane.kubeConfig);
  try {
    const kubeconfigPath = await recordedKubeconfig(dir, recorder.url, plane.token);
    const kube = createKube(loadKubeConfig(kubeconfigPath), { fieldManager: 'bench' });
    for (const namespace of ['bare', 'ours']) await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });

    // Baseline: the rendered PodCliqueSets and Services, applied directly. Rendered for a DGD
    // with a uid, so they carry the controller reference to it that ours carry (with the API
    // server's OwnerReferencesPermissionEnforcement on, as the tests run it, a create with one is
    // checked against the owner: 10-15% of the bare side's API server CPU, measured 2026-12-02;
    // before then the bare objects had none).
    const bareObjects = renderedObjectsOf('bare', dgds);
    const planePids = controlPlanePids(plane.dir);
    const pprofDir = process.env['BENCH_APISERVER_PPROF'];
    // Ours' DGDs exist before anything is measured, so every side runs beside them.
    await mapWithConcurrency(Array.from({ length: dgds }, (_, index) => index), CONCURRENCY, (index) => kube.apply(aGraph('ours', index), { force: true }));

    /**
     * One bare side: the rendered objects applied at the same concurrency after a quiet pause,
     * then deleted again, so the next side runs in the API server this one started from (the
     * Services' cluster IPs released: each new Service's IP is allocated by listing the
     * allocated ones; 3,000 objects fewer in the watch caches, whose heap the API server's
     * garbage collector marks on every cycle).
     */
    const runBare = async (label: string) => {
      await sleep(SETTLE_MS);
      const from = recorder.requests.length;
      const cpu = { plane: cpuSecondsOf(planePids), self: processCpuSeconds() };
      const profile = profileApiServer(plane.server, plane.token, pprofDir, label);
      const started = performance.now();
      await mapWithConcurrency(bareObjects, CONCURRENCY, async (objects) => {
        for (const object of objects) await kube.apply(object, { force: true });
      });
      const seconds = (performance.now() - started) / 1000;
      const measured = { seconds, plane: cpuSecondsOf(planePids) - cpu.plane, self: processCpuSeconds() - cpu.self, requests: recorder.requests.slice(from) };
      await profile;
      await mapWithConcurrency(bareObjects.flat(), CONCURRENCY, (object) => kube.delete({ apiVersion: object.apiVersion, kind: object.kind, namespace: 'bare', name: object.metadata.name }));
      return measured;
    };
    const bareBefore = await runBare('bare');
    const bareRequests = bareBefore.requests;
    const bareCalls = bareRequests.length;
    let from = 0;

    // Ours: the DGDs exist; one resync event converges them all.
    await sleep(SETTLE_MS);
    const server = await startFunctionServer(reconcile, {
      config: defaultConfig({ port: 0, kubeconfigPath, resyncConcurrency: CONCURRENCY }),
      log: pino({ level: 'silent' }),
      host: '127.0.0.1',
    });
    try {
      // A resync reconciles and reports each DGD on its own (a failure goes on that DGD's status
      // and waits for the next resync), so converging may take more than one: send resyncs, as
      // the PingSource would, until every DGD has its PodCliqueSet (at most 5).
      from = recorder.requests.length;
      const oursCpu = { plane: cpuSecondsOf(planePids), self: processCpuSeconds() };
      const oursProfile = profileApiServer(plane.server, plane.token, pprofDir, 'ours');
      const started = performance.now();
      let resyncs = 0;
      for (let pcsCount = 0; pcsCount < dgds; ) {
        if (resyncs === 5) throw new Error(`after 5 resyncs ${pcsCount} PodCliqueSets of ${dgds}`);
        resyncs += 1;
        await sendResync(server.url, `bench-resync-${resyncs}`);
        pcsCount = (await kube.list('grove.io/v1alpha1', 'PodCliqueSet', 'ours')).length;
      }
      const oursSeconds = (performance.now() - started) / 1000;
      oursCpu.plane = cpuSecondsOf(planePids) - oursCpu.plane;
      oursCpu.self = processCpuSeconds() - oursCpu.self;
      await oursProfile;
      // The PodCliqueSet count is read through the recorder too: not the function's.
      const convergeRequests = recorder.requests.slice(from).filter((r) => !(r.verb === 'list' && r.namespace === 'ours'));

      // The DGDs' statuses settle on the pass after their children appear (resource not found ->
      // pods not ready): resync until a resync writes nothing (at most 3), then time a quiet one.
      for (let settle = 0; settle < 3; settle += 1) {
        from = recorder.requests.length;
        await sendResync(server.url, `bench-settle-${settle}`);
        if (recorder.requests.slice(from).every((r) => !WRITE_VERBS.has(r.verb))) break;
      }
      from = recorder.requests.length;
      const quietStarted = performance.now();
      await sendResync(server.url, 'bench-quiet');
      const quietSeconds = (performance.now() - quietStarted) / 1000;
      const quiet = recorder.requests.slice(from);
      const quietWrites = quiet.filter((r) => WRITE_VERBS.has(r.verb)).length;
      const quietLists = quiet.filter((r) => r.verb === 'list');
      const quietGets = quiet.filter((r) => r.verb === 'get').length;
      // One LIST per kind read, with its pages (500 objects a page), every namespace.
      const listedKinds = [...new Set(quietLists.map((r) => `${r.group}/${r.resource}`))];
      const pages = (await Promise.all(listedKinds.map(async (resource) => {
        const [group, plural] = resource.split('/') as [string, string];
        const counted = await countObjects(kube, group, plural);
        return Math.max(1, Math.ceil(counted / 500));
      }))).reduce((sum, n) => sum + n, 0);

      // The bare side again, after ours' children are deleted: the API server's cost per write
      // grows through a run (its etcd history and heap; the same bare applies measured after
      // ours cost 1.3-1.5x those measured before, 2026-12-03), so the baseline is the mean of
      // a bare side before ours and one after, each beside the same 500 DGDs.
      const oursObjects = renderedObjectsOf('ours', dgds).flat();
      await mapWithConcurrency(oursObjects, CONCURRENCY, (object) => kube.delete({ apiVersion: object.apiVersion, kind: object.kind, namespace: 'ours', name: object.metadata.name }));
      const bareAfter = await runBare('bare-after');
      const bareSeconds = (bareBefore.seconds + bareAfter.seconds) / 2;
      const bareCpu = { plane: (bareBefore.plane + bareAfter.plane) / 2, self: (bareBefore.self + bareAfter.self) / 2 };
      const bareName = `${dgds} bare applies of the rendered objects (mean of ${bareBefore.seconds.toFixed(1)} s before ours and ${bareAfter.seconds.toFixed(1)} s after)`;

      return [
        renderTable(`Reconcile (${dgds} DGDs by resync, concurrency ${CONCURRENCY}, real API server on loopback, every request through one recorder)`, [
          { name: `converge ${dgds} DGDs (${resyncs} resync${resyncs === 1 ? '' : 's'})`, value: oursSeconds, unit: 's', baseline: { name: bareName, value: bareSeconds }, aim: { text: '<= 1.3x', isMet: oursSeconds <= 1.3 * bareSeconds && resyncs === 1 } },
          { name: 'converge: API calls per DGD', value: convergeRequests.length / dgds, unit: 'calls', baseline: { name: 'bare applies per DGD', value: bareCalls / dgds } },
          { name: `converge: API server and etcd CPU (${planePids.length} processes)`, value: oursCpu.plane, unit: 's', baseline: { name: `the same, bare applies (${bareBefore.plane.toFixed(1)} s, ${bareAfter.plane.toFixed(1)} s)`, value: bareCpu.plane } },
          { name: 'converge: this process\'s CPU (recorder, reconcile)', value: oursCpu.self, unit: 's', baseline: { name: 'the same, bare applies (recorder, client)', value: bareCpu.self } },
          { name: `quiet resync of ${dgds} unchanged DGDs: writes`, value: quietWrites, unit: 'writes', aim: { text: '0', isMet: quietWrites === 0 } },
          { name: 'quiet resync: LIST and GET requests', value: quietLists.length + quietGets, unit: 'reads', baseline: { name: `one LIST per kind read (${listedKinds.length}), with its pages`, value: pages }, aim: { text: '<= 1.0x', isMet: quietGets === 0 && quietLists.length <= pages } },
          { name: 'quiet resync: time', value: quietSeconds, unit: 's', baseline: { name: `converge ${dgds} DGDs`, value: oursSeconds } },
        ]),
        `calls by verb: bare applies: ${verbs(bareRequests)}; converge: ${verbs(convergeRequests)}; quiet resync: ${verbs(quiet)}\n`,
        `quiet resync by resource: ${Object.entries(countByResource(quiet)).map(([k, v]) => `${k} ${v}`).join(', ')}\n`,
      ].join('');
    } finally {
      await server.close();
    }
  } finally {
    await recorder.close();
    await plane.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** How many objects of a resource the cluster holds (every namespace), by discovery's plural. */
async function countObjects(kube: ReturnType<typeof createKube>, group: string, plural: string): Promise<number> {
  const kinds: Record<string, [string, string]> = {
    '/services': ['v1', 'Service'],
    '/serviceaccounts': ['v1', 'ServiceAccount'],
    '/persistentvolumeclaims': ['v1', 'PersistentVolumeClaim'],
    'rbac.authorization.k8s.io/roles': ['rbac.authorization.k8s.io/v1', 'Role'],
    'rbac.authorization.k8s.io/rolebindings': ['rbac.authorization.k8s.io/v1', 'RoleBinding'],
    'resource.k8s.io/resourceclaimtemplates': ['resource.k8s.io/v1', 'ResourceClaimTemplate'],
    'grove.io/podcliquesets': ['grove.io/v1alpha1', 'PodCliqueSet'],
    'grove.io/podcliques': ['grove.io/v1alpha1', 'PodClique'],
    'grove.io/podcliquescalinggroups': ['grove.io/v1alpha1', 'PodCliqueScalingGroup'],
    'nvidia.com/dynamographdeployments': [DGD_V1BETA1, DGD_KIND],
    'nvidia.com/dynamographdeploymentscalingadapters': ['nvidia.com/v1beta1', 'DynamoGraphDeploymentScalingAdapter'],
  };
  const kind = kinds[`${group}/${plural}`];
  if (kind === undefined) throw new Error(`bench: no kind for ${group}/${plural}`);
  return (await kube.list(kind[0], kind[1])).length;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { dgds: { type: 'string', default: '500' } } });
  process.stdout.write(await runReconcileBench(Number(values.dgds)));
}
