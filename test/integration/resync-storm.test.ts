/**
 * The resync cannot storm (issue 8 part 7): 200 DGDs on an API server whose Service IP range
 * is far too small for their 400 Services settle — every DGD shows its status, the stuck ones
 * with the API server's message — and the function's event rate falls back to the resync's.
 *
 * This file starts its own control plane (etcd + kube-apiserver, no controllers) with
 * `--service-cluster-ip-range` a /28, so that only about a dozen Services can get a cluster
 * IP; the run's shared control plane is not touched. Only our DGD CRD and Grove's CRDs are
 * installed (and the DGDSA CRD, whose events the reconcile function also takes). No Grove controller runs, so no DGD becomes Ready; what matters is that each
 * one's status is written once and stays put.
 */
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DGD_KIND, DGD_V1BETA1 } from '../../shared/api/index.js';
import { reconcileSubscriptions, startEventBridge, type EventBridge } from '../../shared/dev/bridge.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { defaultConfig, startFunctionServer, type FunctionServer } from '../../shared/runtime/index.js';
import reconcile from '../../functions/reconcile/index.js';
import { startControlPlane, type ControlPlane } from '../harness/apiserver.js';
import { ensureKubeBinaries } from '../harness/binaries.js';
import { groveCrdFiles } from '../harness/crds.js';
import { createLineLog } from '../harness/log.js';
import { eventually } from '../support/eventually.js';
import { repoRoot } from '../support/paths.js';

const DGD_COUNT = 200;
const APPLIES_AT_ONCE = 8;
const RESYNC_SECONDS = 15;
/** The window the event rate is measured over: a few resync periods (a resync of 200 DGDs can take longer than one on a loaded machine; the next is coalesced). */
const WINDOW_SECONDS = 30;
const NAMESPACE = 'default';
const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });

let plane: ControlPlane;
let server: FunctionServer;
let bridge: EventBridge;
let user: Kube;

beforeAll(async () => {
  const lineLog = createLineLog({ verbose: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' });
  plane = await startControlPlane({
    binaries: await ensureKubeBinaries({ log: lineLog }),
    crdFiles: [
      path.join(repoRoot, 'infra', 'chart', 'files', 'crds', 'nvidia.com_dynamographdeployments.yaml'),
      path.join(repoRoot, 'infra', 'chart', 'files', 'crds', 'nvidia.com_dynamographdeploymentscalingadapters.yaml'),
      ...(await groveCrdFiles()),
    ],
    log: lineLog,
    serviceClusterIpRange: '10.0.0.0/28',
  });
  user = createKube(plane.kubeConfig, { fieldManager: 'kubectl' });
  server = await startFunctionServer(reconcile, { config: defaultConfig({ port: 0, kubeconfigPath: plane.kubeconfigPath }), log, host: '127.0.0.1' });
  bridge = await startEventBridge({ kubeConfig: plane.kubeConfig, log, resyncIntervalSeconds: RESYNC_SECONDS, retry: { retries: 3, backoffDelayMs: 100 }, subscriptions: reconcileSubscriptions(server.url) });
}, 300_000);

afterAll(async () => {
  await bridge?.stop();
  await server?.close();
  await plane?.stop();
});

/**
 * Sums the samples of a counter in the function's Prometheus text whose labels pass `keep`
 * (e.g. only API events: a non-empty `kind`; resync requests carry none).
 */
async function counter(name: string, keep: (labels: string) => boolean = () => true): Promise<number> {
  const text = await (await fetch(new URL('/metrics', server.url))).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && keep(line.slice(line.indexOf('{'), line.indexOf('}') + 1)))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

const isApiEvent = (labels: string): boolean => !labels.includes('kind=""');

function readyOf(dgd: KubeObject): { status: string; reason: string; message: string } | undefined {
  return ((dgd['status'] as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready');
}

describe('200 DGDs exhausting a small Service range (issue 8 part 7: "a resync that cannot storm")', () => {
  it('settles: every DGD shows its status, the stuck ones with the API server\'s message, and the event rate falls back to the resync\'s', async () => {
    // Applied APPLIES_AT_ONCE at a time (the storm is what follows, not the applies).
    const pending = Array.from({ length: DGD_COUNT }, (_, index) => index);
    const applyNext = async (): Promise<void> => {
      for (let index = pending.shift(); index !== undefined; index = pending.shift()) {
        await user.apply({
          apiVersion: DGD_V1BETA1,
          kind: DGD_KIND,
          metadata: { name: `graph-${index}`, namespace: NAMESPACE },
          spec: {
            backendFramework: 'vllm',
            components: [
              { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } },
              { name: 'worker', type: 'worker', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } },
            ],
          },
        });
      }
    };
    await Promise.all(Array.from({ length: APPLIES_AT_ONCE }, applyNext));

    const settled = await eventually(
      'every DGD with a Ready condition',
      async () => {
        const dgds = await user.list(DGD_V1BETA1, DGD_KIND, NAMESPACE);
        return dgds.length === DGD_COUNT && dgds.every((d) => readyOf(d) !== undefined) ? dgds : undefined;
      },
      240_000,
      1_000,
    );
    const failed = settled.filter((d) => readyOf(d)?.reason === 'failed_to_reconcile_the_resources');
    const services = await user.list('v1', 'Service', NAMESPACE);
    // A /28 holds 16 addresses: the kubernetes Service and our few, nowhere near 400.
    expect(services.length).toBeLessThan(20);
    expect(failed.length).toBeGreaterThan(DGD_COUNT - 20);
    for (const dgd of failed) {
      expect((dgd['status'] as { state: string }).state).toBe('failed');
      expect(readyOf(dgd)?.message).toMatch(/^cannot apply Service default\/graph-\d+-(frontend|worker): 500 InternalError: .*range is full/);
    }

    // Let the first deliveries and their bounded retries drain (minutes when the machine is
    // busy: each DGD's first failure is retried, then left to the resync), then watch a window
    // of resyncs. The drain is watched, not timed: the bridge's queue of API event deliveries
    // (retries included) is empty, so the first window measures the settled rate; a window
    // that still sees more is followed by another, as before.
    await bridge.idle();
    const window = async (): Promise<{ apiEvents: number; resyncObjects: number }> => {
      const apiBefore = await counter('dynamo_fn_events_total', isApiEvent);
      const objectsBefore = await counter('dynamo_fn_resync_objects_total');
      await new Promise((resolve) => setTimeout(resolve, WINDOW_SECONDS * 1000));
      return { apiEvents: (await counter('dynamo_fn_events_total', isApiEvent)) - apiBefore, resyncObjects: (await counter('dynamo_fn_resync_objects_total')) - objectsBefore };
    };
    let last = { apiEvents: -1, resyncObjects: -1 };
    await eventually(
      'the event rate back at the resync\'s',
      async () => {
        last = await window();
        return last.apiEvents <= 10 && last.resyncObjects > 0 ? true : undefined;
      },
      420_000,
      0,
    ).catch((error: unknown) => {
      throw new Error(`last window of ${WINDOW_SECONDS} s: ${last.apiEvents} API events, ${last.resyncObjects} resync reconciles`, { cause: error });
    });
    // The resync keeps reconciling every DGD; beyond that, almost nothing reaches the function.
    expect(last.apiEvents).toBeLessThanOrEqual(10);
    expect(last.resyncObjects).toBeGreaterThan(0);

    // And the statuses stay put: a resync rewrites none of them.
    const versions = new Map(settled.map((d) => [d.metadata.name, d.metadata.resourceVersion]));
    await bridge.resync();
    const after = await user.list(DGD_V1BETA1, DGD_KIND, NAMESPACE);
    const rewritten = after.filter((d) => versions.get(d.metadata.name) !== d.metadata.resourceVersion);
    expect(rewritten.map((d) => d.metadata.name)).toEqual([]);
  }, 900_000);
});
