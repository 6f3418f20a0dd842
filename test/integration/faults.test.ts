/**
 * Calm under faults (issue 12): the reconcile function runs against the real API server through
 * a proxy where msw fails 10% of its API calls (409, 429, 500, a 504 after 300 ms, connection
 * resets), while the event bridge delivers a workload of creates, edits and deletes with a
 * Broker's bounded retries and a resync. Everything converges to what an unfaulted run gives,
 * nothing is duplicated, and once converged no retry loop keeps calling the API server.
 * kube-controller-manager's garbage collector removes the children of deleted DGDs (owner
 * references), as on a cluster; Grove's controller does not run, so no PodClique exists.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DGD_KIND, DGD_V1BETA1, parseDgd } from '../../shared/api/index.js';
import { renderDgd } from '../../shared/domain/index.js';
import { startEventBridge, type EventBridge } from '../../shared/dev/bridge.js';
import { createKube, type ApplyObject, type KubeObject } from '../../shared/kube/index.js';
import { defaultConfig, startFunctionServer, type FunctionServer } from '../../shared/runtime/index.js';
import reconcile from '../../functions/reconcile/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { faultHandlers, seededRandom, startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const user = createKube(kubeConfig, { fieldManager: 'kubectl' });
const GRAPHS = 12;
const EDITED = 6;
const DELETED = 3;

function aGraph(namespace: string, index: number, marker: string): ApplyObject {
  return {
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    metadata: { name: `fault-${index}`, namespace },
    spec: {
      backendFramework: 'vllm',
      components: [
        { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } },
        {
          name: 'worker',
          type: 'worker',
          replicas: 2,
          podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0', env: [{ name: 'FAULT_TEST_MARKER', value: marker }] }] } },
        },
      ],
    },
  };
}

describe('reconcile under 10% API faults (issue 12)', () => {
  let proxy: FaultProxy;
  let server: FunctionServer;
  let bridge: EventBridge;
  let dir = '';
  let namespace = '';

  beforeAll(async () => {
    const cluster = kubeConfig.getCurrentCluster();
    const token = kubeConfig.getCurrentUser()?.token;
    if (cluster === null || token === undefined) throw new Error('the test kubeconfig has no cluster or token');
    const caPem = Buffer.from(cluster.caData ?? '', 'base64').toString('utf8');
    proxy = await startFaultProxy({ target: cluster.server, caPem, handlers: (stats) => faultHandlers(0.1, seededRandom(42), stats) });
    dir = await mkdtemp(join(tmpdir(), 'faults-'));
    const faultedKubeconfig = join(dir, 'kubeconfig');
    await writeFile(
      faultedKubeconfig,
      `apiVersion: v1\nkind: Config\nclusters: [{name: faulted, cluster: {server: "${proxy.url}", insecure-skip-tls-verify: true}}]\nusers: [{name: admin, user: {token: "${token}"}}]\ncontexts: [{name: faulted, context: {cluster: faulted, user: admin}}]\ncurrent-context: faulted\n`,
    );
    // Plain HTTP to the proxy on loopback; the proxy speaks TLS to the API server.
    server = await startFunctionServer(reconcile, { config: defaultConfig({ port: 0, kubeconfigPath: faultedKubeconfig }), log, host: '127.0.0.1' });
    bridge = await startEventBridge({
      kubeConfig,
      log,
      resyncIntervalSeconds: 4,
      retry: { retries: 6, backoffDelayMs: 50 },
      subscriptions: [{ name: 'reconcile', url: server.url, kinds: [{ apiVersion: DGD_V1BETA1, kind: DGD_KIND }], mode: 'Reference' }],
    });
    namespace = await createTestNamespace(kubeConfig, 'faults');
  });

  afterAll(async () => {
    await bridge.stop();
    await server.close();
    await proxy.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates, edits and deletes converge exactly, with nothing duplicated, and no retry loop outlives the workload', async () => {
    for (let index = 0; index < GRAPHS; index += 1) await user.apply(aGraph(namespace, index, 'created'), { force: true });
    for (let index = 0; index < EDITED; index += 1) await user.apply(aGraph(namespace, index, 'edited'), { force: true });
    for (let index = GRAPHS - DELETED; index < GRAPHS; index += 1) await user.delete({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: `fault-${index}` });

    const survivors = Array.from({ length: GRAPHS - DELETED }, (_, index) => index);
    // What an unfaulted reconcile renders for each survivor: its PodCliqueSet, Services and discovery identity.
    const want = new Map(
      survivors.map((index) => {
        const parsed = parseDgd(aGraph(namespace, index, index < EDITED ? 'edited' : 'created'));
        if (!parsed.ok) throw new Error('test DGD does not parse');
        const rendered = renderDgd(parsed.dgd);
        if (!rendered.ok) throw new Error('test DGD does not render');
        return [index, rendered.objects.map((object) => `${object.kind}/${object.metadata.name}`).sort()];
      }),
    );

    let mismatch = '';
    await eventually(
      'every surviving DGD to have exactly its rendered children, and the deleted ones none',
      async () => {
        const pcs = await user.list('grove.io/v1alpha1', 'PodCliqueSet', namespace);
        const services = await user.list('v1', 'Service', namespace);
        // The Kubernetes discovery identity (ServiceAccount, Role, RoleBinding) is rendered too.
        const identity = (await Promise.all([user.list('v1', 'ServiceAccount', namespace), user.list('rbac.authorization.k8s.io/v1', 'Role', namespace), user.list('rbac.authorization.k8s.io/v1', 'RoleBinding', namespace)])).flat();
        const byOwner = new Map<string, string[]>();
        for (const child of [...pcs, ...services, ...identity]) {
          const refs = (child.metadata['ownerReferences'] ?? []) as { controller?: boolean; name?: string }[];
          const owner = refs.find((ref) => ref.controller === true)?.name;
          if (typeof owner !== 'string') continue;
          byOwner.set(owner, [...(byOwner.get(owner) ?? []), `${child.kind}/${child.metadata.name}`].sort());
        }
        for (const index of survivors) {
          if (JSON.stringify(byOwner.get(`fault-${index}`)) !== JSON.stringify(want.get(index))) {
            mismatch = `fault-${index}: have ${JSON.stringify(byOwner.get(`fault-${index}`))}, want ${JSON.stringify(want.get(index))}`;
            return undefined;
          }
        }
        for (let index = GRAPHS - DELETED; index < GRAPHS; index += 1) {
          if (byOwner.has(`fault-${index}`)) {
            mismatch = `fault-${index} was deleted but still has ${JSON.stringify(byOwner.get(`fault-${index}`))}`;
            return undefined;
          }
        }
        // The edit reached each edited PodCliqueSet, and no create-time template survived it.
        for (const object of pcs) {
          const index = Number(object.metadata.name.replace('fault-', ''));
          const marker = JSON.stringify(object['spec']).includes('"edited"') ? 'edited' : 'created';
          if (marker !== (index < EDITED ? 'edited' : 'created')) {
            mismatch = `${object.metadata.name} carries the ${marker} template`;
            return undefined;
          }
        }
        return pcs.length === survivors.length ? true : undefined;
      },
      120_000,
      500,
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; last mismatch: ${mismatch}; proxy ${JSON.stringify(proxy.stats)}`, { cause: error });
    });

    // Every DGD comes to report on its status for the generation it has, faults or not. A pass
    // whose status write or child apply was faulted writes Ready without advancing
    // observedGeneration (it advances only on a successful pass), so this converges on a later
    // delivery or resync rather than with the children.
    let behind = '';
    await eventually(
      'every surviving DGD to report Ready for its current generation',
      async () => {
        for (const index of survivors) {
          const dgd = (await user.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: `fault-${index}` })) as KubeObject;
          const status = dgd['status'] as { observedGeneration?: number; conditions?: { type: string }[] } | undefined;
          const hasReady = status?.conditions?.some((condition) => condition.type === 'Ready') === true;
          if (!hasReady || status?.observedGeneration !== dgd.metadata.generation) {
            behind = `fault-${index}: Ready condition ${String(hasReady)}, observedGeneration ${String(status?.observedGeneration)}, generation ${String(dgd.metadata.generation)}`;
            return undefined;
          }
        }
        return true;
      },
      60_000,
      500,
    ).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}; last: ${behind}`, { cause: error });
    });

    // Every kind of fault was injected.
    expect(Object.keys(proxy.stats.faults).sort()).toEqual(['409', '429', '500', '504', 'reset']);

    // With the bridge stopped, nothing keeps calling the API server: retries are the Broker's, bounded.
    await bridge.stop();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = proxy.stats.requests;
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(proxy.stats.requests - before).toBe(0);
  }, 240_000);
});
