/**
 * The reconcile function watches its LPX runtime ConfigMaps (issue 11; upstream's LPX controller
 * watches the ConfigMaps it owns, upstream-notes/lpx.md §6.1 "Owned ConfigMaps"): the real
 * reconcile function on loopback behind the event bridge, subscribed as the chart's
 * `dynamo-reconcile-children` source is with lpx.enabled (ConfigMaps labelled
 * `lpx.nvidia.com/deployment-uid` only, Resource mode). A deleted runtime ConfigMap is recreated
 * through its own delete event: the bridge sends no resync here (`resyncIntervalSeconds: 0`) and
 * nothing else changes, so no other event could bring it back. An ordinary ConfigMap is never
 * delivered.
 *
 * The build is a real compiled manifest on disk (test/support/lpx-world.ts prepareLpxBuild);
 * Grove's controller and the LPX scheduler do not run here, and nothing of theirs is needed: the
 * runtime ConfigMaps are created before the PodCliqueSet, from the decoded build alone.
 */
import pino from 'pino';
import type { CloudEvent } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LPXGD_API_VERSION, LPXGD_KIND } from '../../shared/api/index.js';
import { reconcileLpxSubscriptions, startEventBridge, type EventBridge } from '../../shared/dev/bridge.js';
import { createKube } from '../../shared/kube/index.js';
import { defaultConfig, startFunctionServer, type FunctionServer } from '../../shared/runtime/index.js';
import reconcile from '../../functions/reconcile/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { adminReconcileDeps, aHybridDgd, applyDgd, lpxPcsName, prepareLpxBuild, reconcileAll, removeLpxBuild } from '../support/lpx-world.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const user = createKube(kubeConfig, { fieldManager: 'kubectl' });
let server: FunctionServer;
let bridge: EventBridge;
/** What the bridge sent: `<type> <namespace>/<name>` per ConfigMap event. */
const emitted: string[] = [];

beforeAll(async () => {
  await prepareLpxBuild();
  server = await startFunctionServer(reconcile, { config: defaultConfig({ port: 0, kubeconfigPath: process.env['KUBECONFIG'], lpxEnabled: true }), log, host: '127.0.0.1' });
  bridge = await startEventBridge({
    kubeConfig,
    log,
    resyncIntervalSeconds: 0,
    retry: { retries: 8, backoffDelayMs: 100 },
    subscriptions: reconcileLpxSubscriptions(server.url).filter((s) => s.name === 'reconcile-lpx-configmaps'),
    onEmit: (event: CloudEvent<unknown>) => {
      if (event['kind'] === 'ConfigMap') emitted.push(`${event.type} ${String(event['namespace'])}/${String(event['name'])}`);
    },
  });
}, 120_000);

afterAll(async () => {
  await bridge.stop();
  await server.close();
  await removeLpxBuild();
});

describe('LPX runtime ConfigMap events (the chart\'s label-selected ConfigMap source, Resource mode)', () => {
  it('"The LPXGD owns ... the runtime ConfigMaps": a deleted runtime ConfigMap is recreated through its delete event; an ordinary ConfigMap is never delivered', async () => {
    const namespace = await createTestNamespace(kubeConfig, 'lpx-cm-watch');
    const name = 'watched';
    await applyDgd(aHybridDgd(namespace, name, { replicas: 1 }));
    // The first passes, run directly (DGD and LPXGD events are not subscribed here).
    await reconcileAll(adminReconcileDeps(), namespace, name);
    const pcsName = await lpxPcsName(namespace, name);
    const lpxgd = await user.get({ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, namespace, name });
    const tableOf = async () => (await user.list('v1', 'ConfigMap', namespace)).find((c) => c.metadata.name.startsWith(`${pcsName}-lpu-`));
    const original = await eventually('the runtime ConfigMap of the decoded build', tableOf);

    // An ordinary ConfigMap first: the label-selected watch never sees it, and the watch is one
    // ordered stream, so it would have been emitted before the delete below.
    await user.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'ordinary', namespace }, data: { mine: 'yes' } });
    await user.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: original.metadata.name });

    const recreated = await eventually(
      'the runtime ConfigMap recreated by the event of its deletion',
      async () => {
        const table = await tableOf();
        return table !== undefined && table.metadata.uid !== original.metadata.uid ? table : undefined;
      },
      90_000,
      250,
    );
    expect({ name: recreated.metadata.name, immutable: recreated['immutable'], data: recreated['data'], labels: recreated.metadata.labels, owners: recreated.metadata['ownerReferences'] }).toEqual({
      name: original.metadata.name,
      immutable: true,
      data: original['data'],
      labels: { 'lpx.nvidia.com/deployment-uid': lpxgd?.metadata.uid },
      owners: [{ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND, name, uid: lpxgd?.metadata.uid, controller: true, blockOwnerDeletion: true }],
    });
    expect(emitted).toContain(`dev.knative.apiserver.resource.delete ${namespace}/${original.metadata.name}`);
    expect(emitted.filter((e) => e.endsWith(`${namespace}/ordinary`))).toEqual([]);
    // The ordinary ConfigMap is left as it was.
    expect((await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'ordinary' }))?.['data']).toEqual({ mine: 'yes' });
  }, 180_000);
});
