/**
 * What a DGDR can do (issue 20 item 7): `spec.overrides.profilingJob` follows upstream's
 * allow-list, so the author of a DGDR shapes the profiling Job's pod: its image, ServiceAccount,
 * volumes (a hostPath `/`), security context (privileged) and init containers. That is upstream's
 * contract; what stops a privileged pod is the namespace's Pod Security admission level. Here the
 * real API server's PodSecurity admission (on by default in kube-apiserver) judges the pod of the
 * Job the profile function would create, with `dryRun=All` (nothing is stored): the level the
 * install doc recommends for namespaces where DGDRs are created admits the default profiling pod
 * and refuses the privileged one. `restricted` refuses both: upstream's profiling containers do
 * not meet it, which is why the doc recommends `baseline`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DgdrSchema } from '../../shared/api/index.js';
import { buildProfilingJob, PROFILING_SERVICE_ACCOUNT } from '../../shared/domain/index.js';
import { createKube, type KubeObject } from '../../shared/kube/index.js';
import { testKubeConfig } from '../harness/testing.js';

type Obj = Record<string, unknown>;

const PRIVILEGED_OVERRIDES = {
  profilingJob: {
    template: {
      spec: {
        volumes: [{ name: 'host-root', hostPath: { path: '/' } }],
        containers: [{ name: 'profiler', securityContext: { privileged: true } }],
      },
    },
  },
};

function profilingPod(namespace: string, overrides?: Obj): Obj {
  const dgdr = DgdrSchema.parse({
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeploymentRequest',
    metadata: { name: 'qwen', namespace, uid: '0b6f2d57-7a53-4c1e-9d7e-2f1d3c7f6b10', generation: 1 },
    spec: {
      model: 'Qwen/Qwen3-0.6B',
      image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1',
      backend: 'vllm',
      hardware: { gpuSku: 'h200_sxm', vramMb: 141312, numGpusPerNode: 8, totalGpus: 8, rdma: false },
      ...(overrides === undefined ? {} : { overrides }),
    },
  });
  const result = buildProfilingJob(dgdr, { operatorImage: undefined, standardEnv: [] });
  if (!result.ok) throw new Error(result.message);
  const template = (result.job['spec'] as Obj)['template'] as Obj;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'profile-qwen-dry-run', namespace }, spec: template['spec'] };
}

describe('a DGDR shapes its profiling pod; the namespace Pod Security level decides what runs (issue 20 item 7)', () => {
  const admin = createKube(testKubeConfig(), { fieldManager: 'kubectl' });
  const namespaces: Record<'baseline' | 'restricted', string> = { baseline: '', restricted: '' };

  beforeAll(async () => {
    for (const level of ['baseline', 'restricted'] as const) {
      const name = `psa-${level}-${Math.random().toString(16).slice(2, 8)}`;
      await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { 'pod-security.kubernetes.io/enforce': level } } });
      // The ServiceAccount admission plugin refuses a pod naming a missing account first.
      await admin.create({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: PROFILING_SERVICE_ACCOUNT, namespace: name } });
      namespaces[level] = name;
    }
  });

  afterAll(async () => {
    for (const name of Object.values(namespaces)) if (name !== '') await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name });
  });

  const dryRun = async (pod: Obj): Promise<{ readonly admitted: boolean; readonly message: string }> => {
    try {
      await admin.create(pod as unknown as KubeObject, { dryRun: true });
      return { admitted: true, message: '' };
    } catch (error) {
      return { admitted: false, message: (error as Error).message };
    }
  };

  it.each(['baseline', 'restricted'] as const)('a `%s` namespace refuses the privileged, hostPath profiling pod an override asks for', async (level) => {
    const answer = await dryRun(profilingPod(namespaces[level], PRIVILEGED_OVERRIDES));
    expect(answer.admitted).toBe(false);
    expect(answer.message).toContain(`violates PodSecurity "${level}:latest"`);
    expect(answer.message).toContain('privileged');
    expect(answer.message).toMatch(/volume "host-root"|hostPath volumes/);
    expect(answer.message).toContain('hostPath');
  });

  it('a `restricted` namespace refuses even the default profiling pod (upstream\'s containers set no allowPrivilegeEscalation, capabilities or seccompProfile), so the install doc recommends `baseline`', async () => {
    const answer = await dryRun(profilingPod(namespaces.restricted));
    expect(answer.admitted).toBe(false);
    expect(answer.message).toContain('violates PodSecurity "restricted:latest"');
    expect(answer.message).not.toContain('privileged (');
  });

  it('a `baseline` namespace (the level the install doc recommends) admits the default profiling pod', async () => {
    expect(await dryRun(profilingPod(namespaces.baseline))).toEqual({ admitted: true, message: '' });
  });
});
