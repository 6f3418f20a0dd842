/**
 * Rendered clique pod specs: volumes, multinode cliques, schedulers, checkpoint gating, typed
 * topology, discovery and v1alpha1 conversions. Expected values come from upstream
 * `internal/dynamo/graph.go`, `grove.go`, `component_worker.go`, `internal/consts/consts.go`
 * and the docs "Portable Topology Environment Variables"; each test names its rule.
 */
import { describe, expect, it } from 'vitest';
import { parseDgd, type Container, type Dgd, type EnvVar, type KvTransferPolicy } from '../../api/index.js';
import { aComponent, aDgd, deepFreeze } from '../../../test/support/builders.js';
import { renderDgd, type RenderConfig } from './render.js';
import { withMissingPvcVolumes } from './volumes.js';
import { GROVE_PCS_CRD, crdValidator } from '../../../test/support/grove-schema.js';

type Json = Record<string, unknown>;
interface Clique {
  name: string;
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  topologyConstraint?: unknown;
  spec: { replicas: number; startsAfter?: string[]; podSpec: Json & { containers: (Container & Json)[]; volumes?: Json[]; initContainers?: Container[] } };
}
interface Pcs {
  metadata: { annotations?: Record<string, string> };
  spec: { template: { cliques: Clique[]; podCliqueScalingGroups?: Json[]; topologyConstraint?: unknown } };
}
const config: RenderConfig = { lpxEnabled: false, terminationDelay: '15m' };
function pcsOf(dgd: Dgd, overrides: Partial<RenderConfig> = {}): Pcs {
  const result = renderDgd(deepFreeze(dgd), { config: { ...config, ...overrides } });
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.objects.find((o) => o.kind === 'PodCliqueSet') as unknown as Pcs;
}
function cliqueOf(dgd: Dgd, name: string, overrides: Partial<RenderConfig> = {}): Clique {
  const clique = pcsOf(dgd, overrides).spec.template.cliques.find((c) => c.name === name);
  if (clique === undefined) throw new Error(`no clique ${name}`);
  return clique;
}
const mainOf = (clique: Clique) => clique.spec.podSpec.containers[0] as Container & Json;
const envOf = (clique: Clique): Record<string, EnvVar> => Object.fromEntries((mainOf(clique).env ?? []).map((e) => [e.name, e]));
const mountsOf = (clique: Clique) => (mainOf(clique)['volumeMounts'] as Json[] | undefined) ?? [];

describe('every mount has its volume', () => {
  it('mounts an 8Gi in-memory /dev/shm by default, a given size, and none for "0" (upstream ApplySharedMemoryVolumeAndMount)', () => {
    const shm = (size: string | undefined) => cliqueOf(aDgd({ spec: { components: [aComponent('worker', 'worker', size === undefined ? {} : { sharedMemorySize: size })] } }), 'worker');
    expect([shm(undefined).spec.podSpec.volumes, mountsOf(shm(undefined))]).toEqual([[{ name: 'shared-memory', emptyDir: { medium: 'Memory', sizeLimit: '8Gi' } }], [{ name: 'shared-memory', mountPath: '/dev/shm' }]]);
    expect(shm('16Gi').spec.podSpec.volumes).toEqual([{ name: 'shared-memory', emptyDir: { medium: 'Memory', sizeLimit: '16Gi' } }]);
    expect([shm('0').spec.podSpec.volumes, mountsOf(shm('0'))]).toEqual([undefined, []]);
  });

  it('adds a PVC volume named after every main-container mount that names no volume, in mount order (upstream appendMissingPVCVolumesForMounts)', () => {
    expect(withMissingPvcVolumes([{ name: 'config', configMap: { name: 'c' } }], [{ name: 'model-cache', mountPath: '/models' }, { name: 'config', mountPath: '/etc/c' }])).toEqual([
      { name: 'model-cache', persistentVolumeClaim: { claimName: 'model-cache' } },
      { name: 'config', configMap: { name: 'c' } },
    ]);
  });

  it('mounts the compilation cache PVC at the vLLM default /root/.cache/vllm and sets VLLM_CACHE_ROOT (upstream applyCompilationCache)', () => {
    const clique = cliqueOf(aDgd({ spec: { components: [aComponent('worker', 'worker', { compilationCache: { pvcName: 'vllm-cache' } })] } }), 'worker');
    expect(mountsOf(clique)).toContainEqual({ name: 'vllm-cache', mountPath: '/root/.cache/vllm' });
    expect(clique.spec.podSpec.volumes).toContainEqual({ name: 'vllm-cache', persistentVolumeClaim: { claimName: 'vllm-cache' } });
    expect(envOf(clique)['VLLM_CACHE_ROOT']?.value).toBe('/root/.cache/vllm');
  });

  it('gives a converted v1alpha1 volumeMounts entry its PVC volume even when spec.pvcs does not list it', () => {
    const parsed = parseDgd({
      apiVersion: 'nvidia.com/v1alpha1',
      kind: 'DynamoGraphDeployment',
      metadata: { name: 'alpha', namespace: 'inference' },
      spec: { backendFramework: 'vllm', services: { VllmWorker: { componentType: 'worker', volumeMounts: [{ name: 'weights', mountPoint: '/models' }], extraPodSpec: { mainContainer: { image: 'vllm-runtime:1.6.0' } } } } },
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const clique = cliqueOf(parsed.dgd, 'vllmworker');
    expect(mountsOf(clique)).toContainEqual({ name: 'weights', mountPath: '/models' });
    expect(clique.spec.podSpec.volumes).toContainEqual({ name: 'weights', persistentVolumeClaim: { claimName: 'weights' } });
  });
});

describe('KV transfer policy (upstream workerKvTransferPolicyEnvVars, TopologyLabelVolume, applyKvTransferPolicyTopologyAnnotations)', () => {
  const policyDgd = (policy: KvTransferPolicy) =>
    aDgd({ spec: { experimental: { kvTransferPolicy: policy }, components: [aComponent('frontend', 'frontend'), aComponent('decode', 'decode', { podTemplate: { spec: { containers: [{ name: 'main', image: 'img:1.6.0', env: [{ name: 'DYN_KV_TRANSFER_DOMAIN', value: 'authored' }] }] } } })] } });

  it('gives workers the policy env (enforcement defaults to required, and then no preferred weight: upstream "Set DYN_KV_TRANSFER_PREFERRED_WEIGHT only when enforcement is preferred"), the topology-labels downward-API volume at /etc/dynamo/topology and the label-key annotation', () => {
    const clique = cliqueOf(policyDgd({ labelKey: 'topology.kubernetes.io/zone', domain: 'zone', preferredWeight: 0.5 }), 'decode');
    const env = envOf(clique);
    expect(['DYN_KV_TRANSFER_DOMAIN', 'DYN_KV_TRANSFER_ENFORCEMENT', 'DYN_KV_TRANSFER_PREFERRED_WEIGHT', 'DYN_TOPOLOGY_ENABLED', 'DYN_TOPOLOGY_MOUNT_PATH'].map((n) => env[n]?.value)).toEqual(['zone', 'required', undefined, 'true', '/etc/dynamo/topology']);
    const preferred = envOf(cliqueOf(policyDgd({ labelKey: 'topology.kubernetes.io/zone', domain: 'zone', enforcement: 'preferred', preferredWeight: 0.5 }), 'decode'));
    expect([preferred['DYN_KV_TRANSFER_ENFORCEMENT']?.value, preferred['DYN_KV_TRANSFER_PREFERRED_WEIGHT']?.value]).toEqual(['preferred', '0.5']);
    expect(mountsOf(clique)).toContainEqual({ name: 'topology-labels', mountPath: '/etc/dynamo/topology', readOnly: true });
    expect(clique.spec.podSpec.volumes).toContainEqual({ name: 'topology-labels', downwardAPI: { items: [{ path: 'zone', fieldRef: { fieldPath: "metadata.labels['topology.kubernetes.io/zone']" } }] } });
    expect(clique.annotations?.['nvidia.com/topology-label-key']).toBe('topology.kubernetes.io/zone');
  });

  it('projects nvidia.com/dynamo-topology.<domain> for a cluster topology and annotates its name', () => {
    const clique = cliqueOf(policyDgd({ clusterTopologyName: 'gb200', domain: 'rack', enforcement: 'preferred' }), 'decode');
    expect(clique.spec.podSpec.volumes).toContainEqual({ name: 'topology-labels', downwardAPI: { items: [{ path: 'rack', fieldRef: { fieldPath: "metadata.labels['nvidia.com/dynamo-topology.rack']" } }] } });
    expect([envOf(clique)['DYN_KV_TRANSFER_ENFORCEMENT']?.value, clique.annotations?.['nvidia.com/topology-cluster-topology-name']]).toEqual(['preferred', 'gb200']);
  });

  it('leaves non-workers alone', () => {
    const frontend = cliqueOf(policyDgd({ labelKey: 'topology.kubernetes.io/zone', domain: 'zone' }), 'frontend');
    expect([envOf(frontend)['DYN_TOPOLOGY_ENABLED'], frontend.annotations?.['nvidia.com/topology-label-key']]).toEqual([undefined, undefined]);
  });
});

describe('multinode cliques', () => {
  // Admission stamps the operator version on CREATE (upstream DGDDefaulter); 1.6.1 is the
  // configured default, so these DGDs are "created here". Pass `null` for an unstamped one.
  const STAMPED = { 'nvidia.com/dynamo-operator-origin-version': '1.6.1' };
  const multinode = (backend: 'sglang' | 'vllm' | 'trtllm', annotations: Record<string, string> | null = {}) =>
    aDgd({
      metadata: { annotations: annotations === null ? undefined : { ...STAMPED, ...annotations } },
      spec: {
        backendFramework: backend,
        components: [aComponent('Decode', 'decode', { multinode: { nodeCount: 2 }, podTemplate: { spec: { containers: [{ name: 'main', image: 'runtime:1.6.0', command: ['python3', '-m', `dynamo.${backend}`], args: ['--tensor-parallel-size', '16'], resources: { limits: { 'nvidia.com/gpu': '8' } } }] } } })],
      },
    });

  it('sets DYNAMO_LEADER_ADDRESS to the leader host and DYNAMO_RANK to the group-wide pod index on both cliques (origin >= 1.6.0)', () => {
    for (const name of ['decode-ldr', 'decode-wkr']) {
      const env = envOf(cliqueOf(multinode('sglang'), name));
      expect([env['DYNAMO_LEADER_ADDRESS']?.value, env['DYNAMO_RANK']?.value]).toEqual(['$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-decode-ldr-0.$(GROVE_HEADLESS_SERVICE)', '$(GROVE_PCSG_POD_INDEX)']);
    }
  });

  it('omits the aliases and names Grove variables for a DGD of origin 1.5.0 ("An operator-only upgrade does not add the variables")', () => {
    const worker = cliqueOf(multinode('sglang', { 'nvidia.com/dynamo-operator-origin-version': '1.5.0' }), 'decode-wkr');
    expect(envOf(worker)['DYNAMO_RANK']).toBeUndefined();
    expect(mainOf(worker).args).toEqual(['exec python3 -m dynamo.sglang --tensor-parallel-size 16 --dist-init-addr $(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-decode-ldr-0.$(GROVE_HEADLESS_SERVICE):29500 --nnodes 2 --node-rank $((GROVE_PCLQ_POD_INDEX + 1))']);
  });

  it('launches vLLM with mp on the aliases and adds the wait-for-leader-mp init container to the worker clique', () => {
    const worker = cliqueOf(multinode('vllm'), 'decode-wkr');
    expect(mainOf(worker).args).toEqual(['--tensor-parallel-size', '16', '--distributed-executor-backend', 'mp', '--nnodes', '2', '--master-addr', '$(DYNAMO_LEADER_ADDRESS)', '--master-port', '29500', '--node-rank', '$(DYNAMO_RANK)', '--headless']);
    expect(worker.spec.podSpec.initContainers?.map((c) => c.name)).toEqual(['wait-for-leader-mp']);
  });

  it('renders an unstamped stored DGD as upstream renders a legacy one: "When the annotation is absent (pre-upgrade DGD), IsEnabled returns false" (upstream OperatorOriginFeatureGate), so multinode vLLM keeps Ray and no topology aliases', () => {
    const legacy = multinode('vllm', null);
    const leader = cliqueOf(legacy, 'decode-ldr');
    const worker = cliqueOf(legacy, 'decode-wkr');
    expect([leader.spec.podSpec.containers[0]?.command, mainOf(leader).args]).toEqual([['/bin/sh', '-c'], ['ray start --head --port=6379 && python3 -m dynamo.vllm --tensor-parallel-size 16 --distributed-executor-backend ray']]);
    expect(mainOf(worker).args).toEqual(['ray start --address=$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)-decode-ldr-0.$(GROVE_HEADLESS_SERVICE):6379 --block']);
    expect([envOf(worker)['DYNAMO_LEADER_ADDRESS'], envOf(worker)['DYNAMO_RANK'], worker.spec.podSpec.initContainers]).toEqual([undefined, undefined, undefined]);
  });

  it('a DGD created here keeps rendering the same after the default operator version is raised: the gates read its stamped origin, never the configured OPERATOR_VERSION (upstream "The origin version is stamped by the mutating webhook at CREATE time and never changes afterwards")', () => {
    for (const backend of ['vllm', 'sglang', 'trtllm'] as const) {
      const stamped = multinode(backend);
      expect(pcsOf(stamped, { defaultOriginVersion: '9.0.0' })).toEqual(pcsOf(stamped, { defaultOriginVersion: '1.6.1' }));
      const legacy = multinode(backend, null);
      expect(pcsOf(legacy, { defaultOriginVersion: '9.0.0' })).toEqual(pcsOf(legacy, { defaultOriginVersion: '1.6.1' }));
    }
    expect(mainOf(cliqueOf(multinode('vllm'), 'decode-wkr', { defaultOriginVersion: '9.0.0' })).args).toContain('mp');
  });

  it('launches vLLM with Ray under nvidia.com/vllm-distributed-executor-backend: ray', () => {
    const leader = cliqueOf(multinode('vllm', { 'nvidia.com/vllm-distributed-executor-backend': 'ray' }), 'decode-ldr');
    expect(mainOf(leader).args).toEqual(['ray start --head --port=6379 && python3 -m dynamo.vllm --tensor-parallel-size 16 --distributed-executor-backend ray']);
  });

  it('wires TensorRT-LLM: SSH secret volume, mpirun leader started after its sshd workers', () => {
    const pcs = pcsOf(multinode('trtllm'), { mpiSshSecretName: 'trtllm-ssh' });
    const [leader, worker] = pcs.spec.template.cliques;
    expect(leader?.spec.startsAfter).toEqual(['decode-wkr']);
    expect(leader?.spec.podSpec.volumes).toContainEqual({ name: 'trtllm-ssh', secret: { secretName: 'trtllm-ssh', defaultMode: 420 } });
    expect(String(mainOf(leader as Clique).args?.[0])).toContain('mpirun');
    expect(String(mainOf(worker as Clique).args?.[0])).toContain('/usr/sbin/sshd -D');
  });
});

describe('schedulers (upstream injectKaiSchedulerIfEnabled, injectVolcanoSchedulerIfEnabled, injectVolcanoQueueAnnotation)', () => {
  it('sets schedulerName kai-scheduler and the kai.scheduler/queue label (default queue "dynamo") under KAI', () => {
    const clique = cliqueOf(aDgd(), 'worker', { scheduler: 'kai' });
    expect([clique.spec.podSpec['schedulerName'], clique.labels['kai.scheduler/queue']]).toEqual(['kai-scheduler', 'dynamo']);
    const queued = cliqueOf(aDgd({ metadata: { annotations: { 'nvidia.com/kai-scheduler-queue': ' team-a ' } } }), 'worker', { scheduler: 'kai' });
    expect(queued.labels['kai.scheduler/queue']).toBe('team-a');
  });

  it('keeps a pod template scheduler other than the integration\'s', () => {
    const dgd = aDgd({ spec: { components: [aComponent('worker', 'worker', { podTemplate: { spec: { schedulerName: 'custom', containers: [{ name: 'main', image: 'i:1' }] } } })] } });
    expect(cliqueOf(dgd, 'worker', { scheduler: 'kai' }).spec.podSpec['schedulerName']).toBe('custom');
  });

  it('sets schedulerName volcano and the PodCliqueSet annotation scheduling.grove.io/volcano-queue under Volcano', () => {
    const dgd = aDgd({ metadata: { annotations: { 'nvidia.com/volcano-queue': 'q1' } } });
    expect(cliqueOf(dgd, 'worker', { scheduler: 'volcano' }).spec.podSpec['schedulerName']).toBe('volcano');
    expect(pcsOf(dgd, { scheduler: 'volcano' }).metadata.annotations?.['scheduling.grove.io/volcano-queue']).toBe('q1');
    expect(cliqueOf(dgd, 'worker').spec.podSpec['schedulerName']).toBeUndefined();
  });
});

describe('checkpoint gating (upstream buildCliqueForRole, shouldGateGroveScalingGroupReplicas; held at 0 through the scale subresource, grove-scaling.test.ts)', () => {
  const checkpointed = (ready: boolean | undefined, multinode = false, minAvailable?: number) => {
    const dgd = aDgd({ spec: { components: [aComponent('worker', 'worker', { replicas: 3, experimental: { checkpoint: { enabled: true, startupPolicy: 'WaitForCheckpoint' } }, ...(multinode ? { multinode: { nodeCount: 2 } } : {}), ...(minAvailable === undefined ? {} : { minAvailable }) })] } });
    return ready === undefined ? dgd : { ...dgd, status: { checkpoints: { worker: { checkpointName: 'c', ready } } } };
  };
  // Changed by issue 20 (was 0, upstream's render): Grove defaults a clique at 0 to 1 and refuses
  // a scaling group at 0 ("replicas must be > 0, and 0 < minAvailable ≤ replicas", grove.md
  // §A.5-§A.6), so a gated component seeds its minimum, as a component at 0 does, and the scale
  // subresource holds the live child at 0 until the checkpoint is ready (pendingScaleIntents).
  it.each([
    { name: 'no checkpoint status yet: seeds its minimum 1', ready: undefined, want: 1 },
    { name: 'checkpoint not ready: seeds its minimum 1', ready: false, want: 1 },
    { name: 'checkpoint ready: the component replicas', ready: true, want: 3 },
  ])('WaitForCheckpoint holds a standalone clique: $name', ({ ready, want }) => {
    expect(cliqueOf(checkpointed(ready), 'worker').spec.replicas).toBe(want);
  });
  it('seeds a gated standalone clique with a minimum of 2 at 2 (Grove would refuse minAvailable 2 over its defaulted 1)', () => {
    const clique = cliqueOf(checkpointed(false, false, 2), 'worker');
    expect([clique.spec.replicas, (clique.spec as { minAvailable?: number }).minAvailable]).toEqual([2, 2]);
  });
  it('gates the scaling group of a multinode component: seeds its minimum (1; Grove refuses 0), not its replicas (3)', () => {
    expect(pcsOf(checkpointed(false, true)).spec.template.podCliqueScalingGroups?.[0]?.['replicas']).toBe(1);
    expect(pcsOf(checkpointed(false, true, 2)).spec.template.podCliqueScalingGroups?.[0]).toMatchObject({ replicas: 2, minAvailable: 2 });
    expect(pcsOf(checkpointed(true, true)).spec.template.podCliqueScalingGroups?.[0]?.['replicas']).toBe(3);
  });
});

describe('typed topology (Grove inherits topologyName downward, grove.md §A.2)', () => {
  it('puts topologyName only on the PodCliqueSet template and pack.required on the component clique', () => {
    const dgd = aDgd({ spec: { topologyConstraint: { clusterTopologyName: 'gb200', packDomain: 'zone' }, components: [aComponent('worker', 'worker', { topologyConstraint: { packDomain: 'rack' } })] } });
    const pcs = pcsOf(dgd);
    expect(pcs.spec.template.topologyConstraint).toEqual({ topologyName: 'gb200', pack: { required: 'zone' } });
    expect(pcs.spec.template.cliques[0]?.topologyConstraint).toEqual({ pack: { required: 'rack' } });
  });
});

describe('labels and annotations', () => {
  it('annotates the discovery backend on every clique (upstream GenerateGrovePodCliqueSet) and drops the discovery labels and env for etcd', () => {
    expect(cliqueOf(aDgd(), 'worker').annotations?.['nvidia.com/dynamo-discovery-backend']).toBe('kubernetes');
    const etcd = cliqueOf(aDgd({ metadata: { annotations: { 'nvidia.com/dynamo-discovery-backend': 'etcd' } } }), 'worker');
    expect([etcd.annotations?.['nvidia.com/dynamo-discovery-backend'], etcd.labels['nvidia.com/dynamo-discovery-enabled'], envOf(etcd)['DYN_DISCOVERY_BACKEND']]).toEqual(['etcd', undefined, undefined]);
  });

  it('labels workers nvidia.com/dynamo-component-class=worker when the graph has an EPP', () => {
    const dgd = aDgd({ spec: { components: [aComponent('epp', 'epp'), aComponent('worker', 'worker')] } });
    expect(cliqueOf(dgd, 'worker').labels['nvidia.com/dynamo-component-class']).toBe('worker');
    expect(cliqueOf(aDgd(), 'worker').labels['nvidia.com/dynamo-component-class']).toBeUndefined();
  });

  it('labels a v1alpha1 subComponentType as nvidia.com/dynamo-sub-component-type', () => {
    const parsed = parseDgd({
      apiVersion: 'nvidia.com/v1alpha1',
      kind: 'DynamoGraphDeployment',
      metadata: { name: 'alpha', namespace: 'inference' },
      spec: { services: { Prefill: { componentType: 'worker', subComponentType: 'prefill', extraPodSpec: { mainContainer: { image: 'vllm-runtime:1.6.0' } } } } },
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    expect(cliqueOf(parsed.dgd, 'prefill').labels).toMatchObject({ 'nvidia.com/dynamo-component-type': 'prefill', 'nvidia.com/dynamo-sub-component-type': 'prefill' });
  });

  it('turns the v1alpha1 frontendSidecar object into a sidecar-frontend container with the frontend defaults (upstream FrontendSidecarSpec, mergeFrontendSidecarDefaults)', () => {
    const parsed = parseDgd({
      apiVersion: 'nvidia.com/v1alpha1',
      kind: 'DynamoGraphDeployment',
      metadata: { name: 'alpha', namespace: 'inference' },
      spec: {
        services: {
          Worker: { componentType: 'worker', frontendSidecar: { image: 'frontend:1.6.0', args: ['-m', 'dynamo.frontend', '--router-mode', 'direct'], envFromSecret: 'hf', envs: [{ name: 'A', value: '1' }] }, extraPodSpec: { mainContainer: { image: 'vllm-runtime:1.6.0' } } },
        },
      },
    });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    expect(parsed.dgd.spec.components[0]?.frontendSidecar).toBe('sidecar-frontend');
    const sidecar = cliqueOf(parsed.dgd, 'worker').spec.podSpec.containers.find((c) => c.name === 'sidecar-frontend') as Container & Json;
    expect({ image: sidecar.image, command: sidecar.command, args: sidecar.args, envFrom: sidecar['envFrom'], ports: sidecar.ports }).toEqual({
      image: 'frontend:1.6.0',
      command: ['python3'],
      args: ['-m', 'dynamo.frontend', '--router-mode', 'direct'],
      envFrom: [{ secretRef: { name: 'hf' } }],
      ports: [{ name: 'http', containerPort: 8000, protocol: 'TCP' }],
    });
    expect(Object.fromEntries((sidecar.env ?? []).map((e) => [e.name, e.value]))).toMatchObject({ A: '1', DYN_COMPONENT: 'frontend', DYN_HTTP_PORT: '8000' });
  });
});

describe('GPU memory service and failover in the rendered pod (upstream GenerateBasePodSpec: GMS, then failover, on the finished pod)', () => {
  // Failover needs container discovery (upstream FailoverSpec); the annotation is set unless a test is about it.
  const gmsDgd = (overrides: Parameters<typeof aDgd>[0]) => aDgd({ ...overrides, metadata: { annotations: { 'nvidia.com/dynamo-kube-discovery-mode': 'container' } } });
  const gpuWorker = (experimental: Json, extra: Partial<Parameters<typeof aComponent>[2]> = {}) =>
    aComponent('worker', 'worker', {
      podTemplate: { spec: { containers: [{ name: 'main', image: 'vllm-runtime:1.6.0', command: ['python3', '-m', 'dynamo.vllm'], resources: { limits: { 'nvidia.com/gpu': '2' } } }] } },
      experimental,
      ...extra,
    });

  it('intra-pod GMS with failover: engine-0 and engine-1 share the intrapod-shared-gpu claim, the gms-server sidecar and the gms-intrapod-control volume (upstream graph.go, gms_test.go TestEnsureServerSidecar, failover.go)', () => {
    const clique = cliqueOf(gmsDgd({ spec: { components: [gpuWorker({ gpuMemoryService: { mode: 'IntraPod' }, failover: { mode: 'IntraPod' } })] } }), 'worker');
    const pod = clique.spec.podSpec;
    expect(pod.containers.map((c) => [c.name, c.resources])).toEqual([
      ['engine-0', { claims: [{ name: 'intrapod-shared-gpu' }] }],
      ['engine-1', { claims: [{ name: 'intrapod-shared-gpu' }] }],
    ]);
    expect(pod.initContainers?.map((c) => c.name)).toEqual(['gms-server']);
    expect(pod['resourceClaims']).toEqual([{ name: 'intrapod-shared-gpu', resourceClaimTemplateName: 'my-graph-worker-gpu' }]);
    expect(pod['tolerations']).toEqual([{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }]);
    expect(pod.volumes).toContainEqual({ name: 'gms-intrapod-control', emptyDir: {} });
  });

  it('renders the ResourceClaimTemplate upstream creates for an intra-pod GMS component: <dgd>-<component>-gpu, one request "gpus" of exactly the main container\'s GPU count from the device class, controlled by the DGD (upstream dra.go TestGenerateResourceClaimTemplate_Enabled/_CustomDeviceClass)', () => {
    const dgd = gmsDgd({ spec: { components: [gpuWorker({ gpuMemoryService: { mode: 'IntraPod', deviceClassName: 'gpu.example.com' }, failover: { mode: 'IntraPod' } })] } });
    const result = renderDgd(deepFreeze(dgd));
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    expect(result.warnings).toEqual([]);
    const template = result.objects.find((o) => o.kind === 'ResourceClaimTemplate');
    expect(template?.apiVersion).toBe('resource.k8s.io/v1');
    expect(template?.metadata.name).toBe('my-graph-worker-gpu');
    expect(template?.metadata.namespace).toBe('inference');
    expect((template?.metadata as { ownerReferences?: { kind: string; name: string; controller?: boolean }[] }).ownerReferences?.map((r) => [r.kind, r.name, r.controller])).toEqual([['DynamoGraphDeployment', 'my-graph', true]]);
    expect(template?.['spec']).toEqual({ spec: { devices: { requests: [{ name: 'gpus', exactly: { deviceClassName: 'gpu.example.com', allocationMode: 'ExactCount', count: 2 } }] } } });
  });

  it('makes no ResourceClaimTemplate when the main container asks for no GPU (upstream: "When gpuCount <= 0 it returns the template skeleton with toDelete=true"), and says so', () => {
    const noGpu = aComponent('worker', 'worker', { podTemplate: { spec: { containers: [{ name: 'main', image: 'vllm-runtime:1.6.0', command: ['python3', '-m', 'dynamo.vllm'] }] } }, experimental: { gpuMemoryService: { mode: 'IntraPod' } } });
    const result = renderDgd(deepFreeze(gmsDgd({ spec: { components: [noGpu] } })));
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    expect(result.objects.map((o) => o.kind)).not.toContain('ResourceClaimTemplate');
    expect(result.warnings).toEqual([
      'spec.components[0].experimental.gpuMemoryService ("worker"): the main container asks for no GPU, so no ResourceClaimTemplate inference/my-graph-worker-gpu is made (upstream makes one only for a GPU count above 0) and the pods cannot be scheduled',
    ]);
  });

  it('single-node inter-pod GMS with failover: a scaling group of <name>-gms-0 and <name> (1 + shadows), the engines starting after the weight server, one claim template per rank (upstream expandSingleNodeGMSRoles, applyCliqueStartupDependencies, gmsResourceSharingEntries)', () => {
    const dgd = gmsDgd({ spec: { components: [gpuWorker({ gpuMemoryService: { mode: 'InterPod' }, failover: { mode: 'InterPod', numShadows: 1 } }, { replicas: 2 })] } });
    const result = renderDgd(deepFreeze(dgd));
    expect(result.ok ? result.warnings : result.issues).toEqual([]);
    const template = pcsOf(dgd).spec.template as Pcs['spec']['template'] & { cliqueStartupType?: string; resourceClaimTemplates?: Json[] };
    expect(template.cliques.map((c) => ({ name: c.name, replicas: c.spec.replicas, minAvailable: (c.spec as Json)['minAvailable'], startsAfter: c.spec.startsAfter, failoverMember: c.labels['nvidia.com/dynamo-failover-engine-group-member'], discovery: c.labels['nvidia.com/dynamo-discovery-enabled'] }))).toEqual([
      { name: 'worker-gms-0', replicas: 1, minAvailable: 1, startsAfter: undefined, failoverMember: undefined, discovery: undefined },
      { name: 'worker', replicas: 2, minAvailable: 1, startsAfter: ['worker-gms-0'], failoverMember: 'true', discovery: 'true' },
    ]);
    expect(template.cliqueStartupType).toBe('CliqueStartupTypeExplicit');
    expect(template.podCliqueScalingGroups).toEqual([
      { name: 'worker', cliqueNames: ['worker-gms-0', 'worker'], replicas: 2, minAvailable: 1, resourceSharing: [{ name: 'worker-gpu-rank-0', scope: 'PerReplica', filter: { childCliqueNames: ['worker-gms-0', 'worker'] } }] },
    ]);
    expect(template.resourceClaimTemplates).toEqual([
      { name: 'worker-gpu-rank-0', templateSpec: { spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.nvidia.com', allocationMode: 'ExactCount', count: 2 } }] } } } },
    ]);
  });

  // Compiling Grove's CRD schema is set-up (seconds of CPU), done once when the file is collected.
  const validate = crdValidator(GROVE_PCS_CRD);
  it('the inter-pod and intra-pod GMS PodCliqueSets pass Grove\'s Coherent CRD schema (../shared/crds/grove)', () => {
    for (const experimental of [{ gpuMemoryService: { mode: 'InterPod' }, failover: { mode: 'InterPod' } }, { gpuMemoryService: {}, failover: {} }]) {
      const result = renderDgd(deepFreeze(gmsDgd({ spec: { components: [gpuWorker(experimental)] } })));
      const pcs = result.ok ? result.objects.find((o) => o.kind === 'PodCliqueSet') : undefined;
      expect(validate(pcs) ? [] : validate.errors).toEqual([]);
    }
  });

  it.each([
    { name: 'intra-pod GMS with failover', experimental: { gpuMemoryService: {}, failover: {} } },
    { name: 'inter-pod GMS with shadows', experimental: { gpuMemoryService: { mode: 'InterPod' }, failover: { mode: 'InterPod' } } },
  ])('$name: the same frozen input gives the same output (STYLE.md §16)', ({ experimental }) => {
    const dgd = deepFreeze(gmsDgd({ spec: { components: [gpuWorker(experimental)] } }));
    expect(renderDgd(dgd)).toEqual(renderDgd(dgd));
  });

  it('multinode inter-pod GMS is not laid out yet: the component renders as a plain multinode engine, with a warning naming the field path', () => {
    const dgd = gmsDgd({ spec: { components: [gpuWorker({ gpuMemoryService: { mode: 'InterPod' }, failover: { mode: 'InterPod' } }, { multinode: { nodeCount: 2 } })] } });
    const result = renderDgd(deepFreeze(dgd));
    expect(result.ok ? result.warnings : []).toEqual([
      'spec.components[0].experimental.gpuMemoryService.mode ("worker"): InterPod on a multinode component is not rendered by this control plane yet; the component renders without the GPU memory service',
      'spec.components[0].experimental.failover.mode ("worker"): InterPod on a multinode component is not rendered by this control plane yet; the component renders without failover',
    ]);
    expect(pcsOf(dgd).spec.template.cliques.map((c) => c.name)).toEqual(['worker-ldr', 'worker-wkr']);
  });

  it('failover without gpuMemoryService still clones the engines, as upstream renders it, and warns that they do not share GPU memory', () => {
    const dgd = gmsDgd({ spec: { components: [gpuWorker({ failover: {} })] } });
    const result = renderDgd(deepFreeze(dgd));
    expect(result.ok ? result.warnings : []).toEqual([
      'spec.components[0].experimental.failover ("worker"): requires experimental.gpuMemoryService; without it the failover engines do not share GPU memory',
    ]);
    expect(cliqueOf(dgd, 'worker').spec.podSpec.containers.map((c) => c.name)).toEqual(['engine-0', 'engine-1']);
  });

  it('warns, naming the field path, when failover runs without nvidia.com/dynamo-kube-discovery-mode: container (upstream FailoverSpec: "Also requires the ... annotation")', () => {
    const result = renderDgd(deepFreeze(aDgd({ spec: { components: [gpuWorker({ gpuMemoryService: {}, failover: {} })] } })));
    expect(result.ok ? result.warnings.filter((w) => w.includes('.experimental.failover')) : []).toEqual([
      'spec.components[0].experimental.failover ("worker"): requires the annotation nvidia.com/dynamo-kube-discovery-mode: container, so that each engine registers on its own',
    ]);
  });

  it('refuses failover on a backend upstream cannot fail over, naming the field ("failover is not supported for backend framework")', () => {
    const component = aComponent('worker', 'worker', { experimental: { gpuMemoryService: {}, failover: {} } });
    const result = renderDgd(deepFreeze(gmsDgd({ spec: { backendFramework: undefined, components: [component] } })));
    expect(result.ok ? [] : result.issues).toEqual([{ path: 'spec.components[0].experimental.failover', type: 'Invalid', detail: 'failover is not supported for backend framework ""' }]);
  });

  it('refuses an extraClientContainers name that is not a podTemplate container (upstream gmsExtraClientContainersError)', () => {
    const result = renderDgd(deepFreeze(gmsDgd({ spec: { components: [gpuWorker({ gpuMemoryService: { extraClientContainers: ['metrics'] } })] } })));
    expect(result.ok ? [] : result.issues).toEqual([
      { path: 'spec.components[0].experimental.gpuMemoryService.extraClientContainers[0]', type: 'Invalid', value: 'metrics', detail: 'must name a container of podTemplate.spec.containers other than "main"' },
    ]);
  });
});

describe('kvTransferPolicy shape (upstream-notes/dgd.md §2.2: exactly one of clusterTopologyName or labelKey, enforcement required|preferred, preferredWeight 0..1)', () => {
  const withPolicy = (kvTransferPolicy: Json) => ({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'g' }, spec: { experimental: { kvTransferPolicy }, components: [aComponent('w', 'worker')] } });
  it.each([
    { name: 'both sources', policy: { labelKey: 'zone', clusterTopologyName: 'ct', domain: 'zone' }, want: ['spec.experimental.kvTransferPolicy: exactly one of clusterTopologyName or labelKey must be set'] },
    { name: 'neither source', policy: { domain: 'zone' }, want: ['spec.experimental.kvTransferPolicy: exactly one of clusterTopologyName or labelKey must be set'] },
    { name: 'an unknown enforcement', policy: { labelKey: 'zone', domain: 'zone', enforcement: 'strict' }, want: ['spec.experimental.kvTransferPolicy.enforcement'] },
    { name: 'a weight above 1', policy: { labelKey: 'zone', domain: 'zone', preferredWeight: 2 }, want: ['spec.experimental.kvTransferPolicy.preferredWeight'] },
  ])('refuses $name with the field path', ({ policy, want }) => {
    const parsed = parseDgd(withPolicy(policy));
    const got = parsed.ok ? [] : parsed.issues.map((i) => (i.path === 'spec.experimental.kvTransferPolicy' ? `${i.path}: ${i.detail}` : i.path));
    expect(got).toEqual(want);
  });
});
