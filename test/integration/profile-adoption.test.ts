/**
 * The profile function hands a planner ConfigMap to the request's DGD (an owner reference) by
 * server-side apply, on a real kube-apiserver. A server-side apply whose object does not exist
 * creates it, whatever `metadata.resourceVersion` it carries (the precondition is checked only
 * against an existing object); one that carries `metadata.uid` is refused (409 Conflict, "uid
 * mismatch ... no existing object was found"). So a ConfigMap deleted between the pass's read
 * and the hand-over must not come back, empty, under the DGD: "nothing is half-written".
 * The handler is called directly, in a namespace of its own; no webhook, no event bridge.
 */
import pino from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { handle, type ProfileDeps } from '../../functions/profile/dgdr.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { TransientError, defaultConfig } from '../../shared/runtime/index.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const user: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
const DGDR = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest' } as const;
const DGD = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' } as const;
const HARDWARE = { gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8 };

describe('profile: handing a planner ConfigMap to the DGD on the real API server', () => {
  let namespace = '';
  beforeAll(async () => {
    namespace = await createTestNamespace(kubeConfig, 'profile-adopt');
  });

  it('"nothing is half-written": a planner ConfigMap deleted after the pass read it is not created again, empty, under the DGD; the pass is retried (Transient) and the next one hands over nothing', async () => {
    const dgdr = await user.create({ ...DGDR, metadata: { name: 'qwen', namespace }, spec: { model: 'Qwen/Qwen3-0.6B', image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1', backend: 'vllm', autoApply: true, hardware: HARDWARE } } as never);
    const uid = dgdr?.metadata.uid ?? '';
    const labels = { 'dgdr.nvidia.com/name': 'qwen', 'dgdr.nvidia.com/namespace': namespace, 'nvidia.com/managed-by': 'dynamo-operator', 'dgdr.nvidia.com/uid': uid };
    await user.applyStatus({ ...DGDR, metadata: { name: 'qwen', namespace }, status: { phase: 'Deploying', dgdName: 'qwen-dgd', observedGeneration: 1 } } as never, { force: true });
    await user.create({ ...DGD, metadata: { name: 'qwen-dgd', namespace, labels }, spec: { components: [{ name: 'Frontend', type: 'frontend' }] } } as never);
    await user.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'planner-config-x', namespace, labels }, data: { 'planner_config.json': '{}' } } as never);
    const plannerRef = { apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'planner-config-x' };

    const kube = createKube(kubeConfig, { fieldManager: 'dynamo-profile' });
    let isDeleted = false;
    const racing: Kube = {
      ...kube,
      fieldManager: kube.fieldManager,
      list: async (apiVersion, kind, ns, options) => {
        const listed = await kube.list(apiVersion, kind, ns, options);
        if (kind === 'ConfigMap' && !isDeleted) {
          isDeleted = true;
          // As a user would, after the pass listed the request's ConfigMaps and before it hands them over.
          await user.delete(plannerRef);
        }
        return listed;
      },
    };
    const deps: ProfileDeps = { kube: racing, log, now: () => new Date(), config: defaultConfig({ kubeconfigPath: process.env['KUBECONFIG'] }), profilingJob: { operatorImage: undefined, standardEnv: [] }, instance: 'test' };
    const event = { id: 'e1', type: 'dev.knative.apiserver.ref.update', source: 'test', key: { ...DGDR, namespace, name: 'qwen' }, object: undefined };

    const outcome: unknown = await handle(event, deps).catch((error: unknown) => error);
    expect(isDeleted).toBe(true);
    const recreated: KubeObject | undefined = await user.get(plannerRef);
    expect(recreated === undefined ? undefined : { owners: recreated.metadata['ownerReferences'], data: recreated['data'] }).toBeUndefined();
    expect(outcome).toBeInstanceOf(TransientError);
    // Decided again on a fresh read: nothing to hand over, nothing created.
    await handle(event, { ...deps, kube });
    expect(await user.get(plannerRef)).toBeUndefined();
  });
});
