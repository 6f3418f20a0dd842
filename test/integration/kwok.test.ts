/**
 * The simulated parts of the control plane: kwok keeps fake GPU nodes Ready, kube-scheduler
 * binds pods to them by `nvidia.com/gpu`, the job controller runs Jobs, and the harness's kwok
 * Stages move their pods to Succeeded, Failed or a waiting container. Other tests rely on these
 * behaviours (profiling Jobs, trace-claim Runs), so they are pinned here.
 * Source: ../shared/upstream-notes/kwok.md; test/harness/kwok/stages.yaml.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createKube, type KubeObject } from '../../shared/kube/index.js';
import { createGpuNodes, parseGpuFleet } from '../harness/gpu-nodes.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';

const NODE_PREFIX = 'kwok-test-gpu';

function aJob(namespace: string, name: string, annotations: Record<string, string> = {}, gpus = 1) {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace },
    spec: {
      backoffLimit: 0,
      template: {
        metadata: { annotations },
        spec: {
          restartPolicy: 'Never',
          containers: [
            { name: 'main', image: 'registry.invalid/job:1', resources: { limits: { 'nvidia.com/gpu': String(gpus) } } },
            { name: 'sidecar', image: 'registry.invalid/sidecar:1' },
          ],
        },
      },
    },
  };
}

function jobCondition(job: KubeObject | undefined, type: string): Record<string, unknown> | undefined {
  const conditions = (job?.['status'] as { conditions?: Record<string, unknown>[] } | undefined)?.conditions ?? [];
  return conditions.find((condition) => condition['type'] === type && condition['status'] === 'True');
}

describe('kwok, kube-scheduler and the job controller', () => {
  const kubeConfig = testKubeConfig();
  const kube = createKube(kubeConfig, { fieldManager: 'kwok-test' });
  let namespace = '';
  let nodeNames: string[] = [];

  beforeAll(async () => {
    namespace = await createTestNamespace(kubeConfig, 'kwok');
    nodeNames = await createGpuNodes(kube, parseGpuFleet('2xNVIDIA-H100-80GB-HBM3:8'), NODE_PREFIX);
  });

  afterAll(async () => {
    for (const name of nodeNames) await kube.delete({ apiVersion: 'v1', kind: 'Node', name });
  });

  it('fake GPU nodes become Ready with their GPU Feature Discovery labels and nvidia.com/gpu capacity', async () => {
    for (const name of nodeNames) {
      const node = await eventually(`node ${name} Ready`, async () => {
        const got = await kube.get({ apiVersion: 'v1', kind: 'Node', name });
        const ready = (got?.['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.find(
          (condition) => condition.type === 'Ready',
        );
        return ready?.status === 'True' ? got : undefined;
      });
      expect(node.metadata.labels).toMatchObject({
        'nvidia.com/gpu.product': 'NVIDIA-H100-80GB-HBM3',
        'nvidia.com/gpu.count': '8',
        'nvidia.com/gpu.memory': '81559',
      });
      expect((node['status'] as { capacity: Record<string, string> }).capacity['nvidia.com/gpu']).toBe('8');
    }
  });

  it('a Job requesting a GPU is scheduled on a fake node and reaches Complete', async () => {
    await kube.apply(aJob(namespace, 'completes'));
    const job = await eventually('Job completes to be Complete', async () => {
      const got = await kube.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'completes' });
      return jobCondition(got, 'Complete') !== undefined ? got : undefined;
    });
    expect((job['status'] as { succeeded?: number }).succeeded).toBe(1);
    const [pod] = await kube.list('v1', 'Pod', namespace, { labelSelector: 'job-name=completes' });
    expect(nodeNames).toContain((pod?.['spec'] as { nodeName?: string }).nodeName);
  });

  it('kwok.dynamo-fn.dev/outcome: fail makes the pod fail with the given exit code and reason, and the Job (backoffLimit 0) Failed', async () => {
    await kube.apply(
      aJob(namespace, 'fails', {
        'kwok.dynamo-fn.dev/outcome': 'fail',
        'kwok.dynamo-fn.dev/container-name': 'main',
        'kwok.dynamo-fn.dev/exit-code': '3',
        'kwok.dynamo-fn.dev/reason': 'Error',
        'kwok.dynamo-fn.dev/message': 'profiler exited',
      }),
    );
    await eventually('Job fails to be Failed', async () => {
      const got = await kube.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'fails' });
      return jobCondition(got, 'Failed');
    });
    const [pod] = await kube.list('v1', 'Pod', namespace, { labelSelector: 'job-name=fails' });
    const status = pod?.['status'] as { phase: string; containerStatuses: { name: string; state: Record<string, Record<string, unknown>> }[] };
    expect(status.phase).toBe('Failed');
    const main = status.containerStatuses.find((container) => container.name === 'main');
    expect(main?.state['terminated']).toMatchObject({ exitCode: 3, reason: 'Error', message: 'profiler exited' });
  });

  it('kwok.dynamo-fn.dev/outcome: wait keeps the pod Pending with its containers waiting for the given reason', async () => {
    await kube.apply(
      aJob(namespace, 'waits', {
        'kwok.dynamo-fn.dev/outcome': 'wait',
        'kwok.dynamo-fn.dev/reason': 'ErrImagePull',
        'kwok.dynamo-fn.dev/message': 'pull access denied',
      }),
    );
    const pod = await eventually('a waiting container', async () => {
      const [got] = await kube.list('v1', 'Pod', namespace, { labelSelector: 'job-name=waits' });
      const statuses = (got?.['status'] as { containerStatuses?: unknown[] } | undefined)?.containerStatuses;
      return statuses !== undefined ? got : undefined;
    });
    const status = pod['status'] as { phase: string; containerStatuses: { state: Record<string, unknown> }[] };
    expect(status.phase).toBe('Pending');
    expect(status.containerStatuses.map((container) => container.state['waiting'])).toEqual([
      { reason: 'ErrImagePull', message: 'pull access denied' },
      { reason: 'ErrImagePull', message: 'pull access denied' },
    ]);
  });

  it('a pod asking for more GPUs than any node has stays Pending, unscheduled (Insufficient nvidia.com/gpu)', async () => {
    await kube.apply(aJob(namespace, 'too-big', {}, 9));
    const pod = await eventually('the scheduler to report the pod unschedulable', async () => {
      const [got] = await kube.list('v1', 'Pod', namespace, { labelSelector: 'job-name=too-big' });
      const conditions = (got?.['status'] as { conditions?: { type: string; reason?: string }[] } | undefined)?.conditions;
      return conditions?.some((condition) => condition.type === 'PodScheduled' && condition.reason === 'Unschedulable') === true ? got : undefined;
    });
    expect((pod['spec'] as { nodeName?: string }).nodeName).toBeUndefined();
    const conditions = (pod['status'] as { conditions: { type: string; message?: string }[] }).conditions;
    expect(conditions.find((condition) => condition.type === 'PodScheduled')?.message).toContain('Insufficient nvidia.com/gpu');
  });
});
