/**
 * Reconcile benchmark (not a test): 500 DGDs on the real API server (etcd + kube-apiserver on
 * loopback, as the integration tests run them) converged by the reconcile function in one
 * resync, repeated until all converge (`RESYNC_CONCURRENCY` 8: list, then per DGD get, list children, apply PodCliqueSet and
 * Services, status, Event), beside 500 bare server-side applies of the same rendered objects at
 * the same concurrency, measured in one run.
 * Aim (issue 12): at most 1.3x the bare applies' time.
 *
 * Usage: npm run bench:reconcile [-- --dgds N]
 * @module
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { request } from 'undici';
import reconcile from '../functions/reconcile/index.js';
import { DGD_KIND, DGD_V1BETA1, parseDgd } from '../shared/api/index.js';
import { renderDgd } from '../shared/domain/index.js';
import { createKube, type ApplyObject } from '../shared/kube/index.js';
import { defaultConfig, mapWithConcurrency, RESYNC_EVENT_TYPE, startFunctionServer } from '../shared/runtime/index.js';
import { startControlPlane } from '../test/harness/apiserver.js';
import { defaultCrdFiles } from '../test/harness/crds.js';
import { createLineLog } from '../test/harness/log.js';
import { renderTable } from './table.js';

const CONCURRENCY = 8;

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

export async function runReconcileBench(dgds: number): Promise<string> {
  const log = createLineLog({ verbose: false });
  // 500 DGDs with two Services each, twice (bare and ours): more than a /24 holds.
  const plane = await startControlPlane({ crdFiles: await defaultCrdFiles(), log, withControllerManager: false, serviceClusterIpRange: '10.0.0.0/16' });
  try {
    const kube = createKube(plane.kubeConfig, { fieldManager: 'bench' });
    for (const namespace of ['bare', 'ours']) await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });

    // Baseline: the rendered PodCliqueSets and Services, applied directly.
    const bareObjects = Array.from({ length: dgds }, (_, index) => {
      const parsed = parseDgd(aGraph('bare', index));
      if (!parsed.ok) throw new Error('bench DGD does not parse');
      const rendered = renderDgd(parsed.dgd);
      if (!rendered.ok) throw new Error('bench DGD does not render');
      return rendered.objects as unknown as ApplyObject[];
    });
    const bareStarted = performance.now();
    await mapWithConcurrency(bareObjects, CONCURRENCY, async (objects) => {
      for (const object of objects) await kube.apply(object, { force: true });
    });
    const bareSeconds = (performance.now() - bareStarted) / 1000;

    // Ours: the DGDs exist; one resync event converges them all.
    await mapWithConcurrency(Array.from({ length: dgds }, (_, index) => index), CONCURRENCY, (index) => kube.apply(aGraph('ours', index), { force: true }));
    const server = await startFunctionServer(reconcile, {
      config: defaultConfig({ port: 0, kubeconfigPath: plane.kubeconfigPath, resyncConcurrency: CONCURRENCY }),
      log: pino({ level: 'silent' }),
      host: '127.0.0.1',
    });
    try {
      // A resync reconciles and reports each DGD on its own (a failure goes on that DGD's status
      // and waits for the next resync), so converging may take more than one: send resyncs, as
      // the PingSource would, until every DGD has its PodCliqueSet (at most 5).
      const started = performance.now();
      let resyncs = 0;
      for (let pcsCount = 0; pcsCount < dgds; ) {
        if (resyncs === 5) throw new Error(`after 5 resyncs ${pcsCount} PodCliqueSets of ${dgds}`);
        resyncs += 1;
        const answer = await request(`${server.url}/`, {
          method: 'POST',
          headers: { 'ce-id': `bench-resync-${resyncs}`, 'ce-specversion': '1.0', 'ce-type': RESYNC_EVENT_TYPE, 'ce-source': '/bench', 'content-type': 'application/json' },
          body: '{}',
          headersTimeout: 600_000,
          bodyTimeout: 600_000,
        });
        await answer.body.text();
        if (answer.statusCode !== 204) throw new Error(`resync answered ${answer.statusCode}`);
        pcsCount = (await kube.list('grove.io/v1alpha1', 'PodCliqueSet', 'ours')).length;
      }
      const oursSeconds = (performance.now() - started) / 1000;
      return renderTable(`Reconcile (${dgds} DGDs by resync, concurrency ${CONCURRENCY}, real API server on loopback)`, [
        { name: `converge ${dgds} DGDs (${resyncs} resync${resyncs === 1 ? '' : 's'})`, value: oursSeconds, unit: 's', baseline: { name: `${dgds} bare applies of the rendered objects`, value: bareSeconds }, aim: { text: '<= 1.3x', isMet: oursSeconds <= 1.3 * bareSeconds } },
      ]);
    } finally {
      await server.close();
    }
  } finally {
    await plane.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { dgds: { type: 'string', default: '500' } } });
  process.stdout.write(await runReconcileBench(Number(values.dgds)));
}
