/**
 * The profiling Job against upstream's operator <-> Job contract: every value below is quoted from
 * ../shared/upstream-notes/profiler.md §1.1-§1.4 (upstream createProfilingJob and
 * profiling_job_overrides.go; its tests assert Containers[0].Name == "profiler", [1] == "output-copier").
 */
import { describe, expect, it } from 'vitest';
import { DgdrSchema, type Dgdr } from '../../api/index.js';
import { buildProfilingJob, type ProfilingJobConfig } from './profiling-job.js';

type Obj = Record<string, unknown>;

function aDgdr(spec: Obj = {}): Dgdr {
  return DgdrSchema.parse({
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeploymentRequest',
    metadata: { name: 'qwen', namespace: 'team-a', uid: 'uid-1', generation: 1 },
    spec: { model: 'Qwen/Qwen3-0.6B', image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1', backend: 'vllm', hardware: { gpuSku: 'h200_sxm', vramMb: 141312, numGpusPerNode: 8, totalGpus: 16, rdma: false }, ...spec },
  });
}

const CONFIG: ProfilingJobConfig = { operatorImage: undefined, standardEnv: [] };

function job(spec: Obj = {}, config: ProfilingJobConfig = CONFIG): Obj {
  const result = buildProfilingJob(aDgdr(spec), config);
  if (!result.ok) throw new Error(result.message);
  return result.job;
}

const podSpecOf = (j: Obj): Obj => ((j['spec'] as Obj)['template'] as Obj)['spec'] as Obj;
const containersOf = (j: Obj): Obj[] => podSpecOf(j)['containers'] as Obj[];

describe('buildProfilingJob: the upstream Job contract', () => {
  it('names, labels and owns the Job: profile-<dgdr>, app/dgdr/managed-by, controller owner reference', () => {
    const metadata = job()['metadata'];
    expect(metadata).toEqual({
      name: 'profile-qwen',
      namespace: 'team-a',
      labels: { app: 'dynamo-profiler', dgdr: 'qwen', 'nvidia.com/managed-by': 'dynamo-operator' },
      ownerReferences: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', name: 'qwen', uid: 'uid-1', controller: true, blockOwnerDeletion: true }],
    });
  });

  it('"profiling failures are not retried (backoffLimit: 0)"; no TTL or deadline by default', () => {
    const spec = job()['spec'] as Obj;
    expect(spec['backoffLimit']).toBe(0);
    expect(spec['ttlSecondsAfterFinished']).toBeUndefined();
    expect(spec['activeDeadlineSeconds']).toBeUndefined();
  });

  it('the pod: service account dgdr-profiling-job, restartPolicy Never, 1000/1000/1000 non-root, nvcr-imagepullsecret, profiling-output emptyDir', () => {
    const pod = podSpecOf(job());
    expect(pod['serviceAccountName']).toBe('dgdr-profiling-job');
    expect(pod['restartPolicy']).toBe('Never');
    expect(pod['securityContext']).toEqual({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000 });
    expect(pod['imagePullSecrets']).toEqual([{ name: 'nvcr-imagepullsecret' }]);
    expect(pod['volumes']).toEqual([{ name: 'profiling-output', emptyDir: {} }]);
    expect(pod['initContainers']).toBeUndefined();
  });

  it('the profiler container: python -m dynamo.profiler --config <whole spec JSON> --output-dir /data, /workspace, HF token and DGDR env', () => {
    const [profiler, copier] = containersOf(job());
    expect(profiler?.['name']).toBe('profiler');
    expect(copier?.['name']).toBe('output-copier');
    expect(profiler?.['image']).toBe('nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1');
    expect(profiler?.['command']).toEqual(['python', '-m', 'dynamo.profiler']);
    const args = profiler?.['args'] as string[];
    expect(args[0]).toBe('--config');
    expect(JSON.parse(args[1] ?? '')).toEqual(aDgdr().spec);
    expect(args.slice(2)).toEqual(['--output-dir', '/data']);
    expect(profiler?.['workingDir']).toBe('/workspace');
    expect(profiler?.['env']).toEqual([
      { name: 'HUGGING_FACE_HUB_TOKEN', valueFrom: { secretKeyRef: { name: 'hf-token-secret', key: 'HF_TOKEN' } } },
      { name: 'DGDR_NAME', value: 'qwen' },
      { name: 'DGDR_NAMESPACE', value: 'team-a' },
      { name: 'DGDR_UID', value: 'uid-1' },
    ]);
    expect(profiler?.['volumeMounts']).toEqual([{ name: 'profiling-output', mountPath: '/data' }]);
  });

  it('the output-copier: bitnami/kubectl:latest, /bin/sh -c <script for dgdr-output-<name>>, /data read-only', () => {
    const copier = containersOf(job())[1] ?? {};
    expect(copier['image']).toBe('bitnami/kubectl:latest');
    expect(copier['command']).toEqual(['/bin/sh', '-c']);
    const script = (copier['args'] as string[])[0] ?? '';
    expect(script).toContain("CM_NAME='dgdr-output-qwen'");
    expect(script).toContain('ERROR: kubectl not found in the output-copier image. The image set for the output-copier container through spec.overrides.profilingJob must contain kubectl.');
    expect(script).toContain('ERROR: Status file not found after 120s');
    expect(copier['volumeMounts']).toEqual([{ name: 'profiling-output', mountPath: '/data', readOnly: true }]);
  });

  it('issue 20 "the request\'s message names the copier\'s error": the output-copier\'s log tail is its termination message (FallbackToLogsOnError)', () => {
    expect((containersOf(job())[1] ?? {})['terminationMessagePolicy']).toBe('FallbackToLogsOnError');
  });

  it('standard env (NATS, etcd, ...) is added to the profiler when configured', () => {
    const env = containersOf(job({}, { operatorImage: undefined, standardEnv: [{ name: 'NATS_SERVER', value: 'nats://nats:4222' }] }))[0]?.['env'] as Obj[];
    expect(env.at(-1)).toEqual({ name: 'NATS_SERVER', value: 'nats://nats:4222' });
  });

  it('a model cache: PVC volume model-cache read-only, mounted at pvcMountPath (default /opt/model-cache)', () => {
    const j = job({ modelCache: { pvcName: 'weights', pvcModelPath: 'qwen' } });
    expect(podSpecOf(j)['volumes']).toEqual([{ name: 'profiling-output', emptyDir: {} }, { name: 'model-cache', persistentVolumeClaim: { claimName: 'weights', readOnly: true } }]);
    expect(containersOf(j)[0]?.['volumeMounts']).toEqual([{ name: 'profiling-output', mountPath: '/data' }, { name: 'model-cache', mountPath: '/opt/model-cache', readOnly: true }]);
  });

  it('an empty spec.image fails with upstream\'s message', () => {
    const dgdr = aDgdr();
    expect(buildProfilingJob({ ...dgdr, spec: { ...dgdr.spec, image: '' } }, CONFIG)).toEqual({ ok: false, message: 'spec.image is required but not set; ensure the defaulting webhook ran or set spec.image explicitly' });
  });

  it('overrides.dgd without an operator image fails with upstream\'s message', () => {
    expect(buildProfilingJob(aDgdr({ overrides: { dgd: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' } } }), CONFIG)).toEqual({ ok: false, message: 'operator image must be configured when a DGD override is present' });
  });

  it('overrides.dgd installs dgd-apply-overrides: emptyDir, hardened init container, read-only /opt/dynamo/bin, DYNAMO_DGD_APPLY_OVERRIDES_BIN', () => {
    const j = job({ overrides: { dgd: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' } } }, { operatorImage: 'ghcr.io/example/dynamo-fn:1', standardEnv: [] });
    const pod = podSpecOf(j);
    expect(pod['initContainers']).toEqual([
      {
        name: 'dgd-override-installer',
        image: 'ghcr.io/example/dynamo-fn:1',
        imagePullPolicy: 'IfNotPresent',
        command: ['/dgd-apply-overrides'],
        args: ['--install-to', '/opt/dynamo/bin/dgd-apply-overrides'],
        volumeMounts: [{ name: 'dgd-override-tool', mountPath: '/opt/dynamo/bin' }],
        securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } },
      },
    ]);
    const profiler = containersOf(j)[0] ?? {};
    expect((profiler['volumeMounts'] as Obj[]).at(-1)).toEqual({ name: 'dgd-override-tool', mountPath: '/opt/dynamo/bin', readOnly: true });
    expect((profiler['env'] as Obj[]).at(-1)).toEqual({ name: 'DYNAMO_DGD_APPLY_OVERRIDES_BIN', value: '/opt/dynamo/bin/dgd-apply-overrides' });
  });

  it('overrides.profilingJob by the allow-list: scalars, labels (protected keys kept), annotations, tolerations, pull secrets union, profiler image/env, output-copier image only', () => {
    const j = job({
      overrides: {
        profilingJob: {
          backoffLimit: 2,
          ttlSecondsAfterFinished: 600,
          template: {
            metadata: { labels: { app: 'mine', team: 'a' }, annotations: { 'example.com/a': 'b' } },
            spec: {
              tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
              nodeSelector: { pool: 'cpu' },
              imagePullSecrets: [{ name: 'nvcr-imagepullsecret' }, { name: 'mine' }],
              hostNetwork: true,
              containers: [
                { name: 'profiler', image: 'registry.example/planner:1.6.1', env: [{ name: 'DGDR_NAME', value: 'hijack' }, { name: 'EXTRA', value: '1' }], command: ['sh'] },
                { name: 'output-copier', image: 'registry.example/kubectl:1', command: ['false'] },
              ],
            },
          },
        },
      },
    });
    const spec = j['spec'] as Obj;
    expect(spec['backoffLimit']).toBe(2);
    expect(spec['ttlSecondsAfterFinished']).toBe(600);
    const template = spec['template'] as Obj;
    expect(template['metadata']).toEqual({ labels: { team: 'a' }, annotations: { 'example.com/a': 'b' } });
    const pod = template['spec'] as Obj;
    expect(pod['tolerations']).toEqual([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
    expect(pod['nodeSelector']).toEqual({ pool: 'cpu' });
    expect(pod['imagePullSecrets']).toEqual([{ name: 'nvcr-imagepullsecret' }, { name: 'mine' }]);
    expect(pod['hostNetwork']).toBeUndefined();
    const [profiler, copier] = containersOf(j);
    expect(profiler?.['image']).toBe('registry.example/planner:1.6.1');
    expect(profiler?.['command']).toEqual(['python', '-m', 'dynamo.profiler']);
    expect((profiler?.['env'] as Obj[]).map((e) => [e['name'], e['value']])).toEqual([['HUGGING_FACE_HUB_TOKEN', undefined], ['DGDR_NAME', 'hijack'], ['DGDR_NAMESPACE', 'team-a'], ['DGDR_UID', 'uid-1'], ['EXTRA', '1']]);
    expect(copier?.['image']).toBe('registry.example/kubectl:1');
    expect(copier?.['command']).toEqual(['/bin/sh', '-c']);
  });

  it('automountServiceAccountToken: false gives only the output-copier a projected API token', () => {
    const j = job({ overrides: { profilingJob: { template: { spec: { automountServiceAccountToken: false } } } } });
    const pod = podSpecOf(j);
    expect((pod['volumes'] as Obj[]).map((v) => v['name'])).toEqual(['profiling-output', 'output-copier-kube-api-access']);
    expect(((containersOf(j)[1] ?? {})['volumeMounts'] as Obj[]).at(-1)).toEqual({ name: 'output-copier-kube-api-access', mountPath: '/var/run/secrets/kubernetes.io/serviceaccount', readOnly: true });
    expect((containersOf(j)[0] ?? {})['volumeMounts']).toEqual([{ name: 'profiling-output', mountPath: '/data' }]);
  });

  it('is deterministic', () => {
    expect(job()).toEqual(job());
  });
});
