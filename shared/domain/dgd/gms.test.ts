/**
 * GPU memory service rules, one describe per rule. Expected values are upstream's: `dra/dra.go`
 * and `dra/dra_test.go` (claim name, template name, GPU resource names), `gms/gms.go` and
 * `gms/gms_test.go` (`TestEnsureServerSidecar`, `TestEnsureServerSidecarIdempotent`,
 * `TestEnsureClientOverridesOperatorOwnedSocketFields`), `dynamo/failover_test.go`
 * (`TestBuildFailoverPod_DRAResourceClaim`: "myapp-worker-gpu").
 */
import { describe, expect, it } from 'vitest';
import type { Component, Container } from '../../api/index.js';
import { aComponent, deepFreeze } from '../../../test/support/builders.js';
import {
  applyDraGpuClaim,
  applyIntraPodGpuMemoryService,
  ensureGmsClient,
  ensureGmsServerSidecar,
  experimentalMode,
  gmsComponentIssues,
  gmsEnginePodSpec,
  gmsRankResourceClaimTemplateName,
  gmsResourceClaimTemplateConfigs,
  gmsResourceClaimTemplateName,
  gmsResourceSharingEntries,
  gmsWeightServerPodSpec,
  gmsResourceClaimTemplateSpec,
  gpuCountOf,
  isGpuResourceName,
  singleNodeGmsRoles,
  type GmsPodSpec,
} from './gms.js';

const podWithMain = (main: Partial<Container> = {}): GmsPodSpec => ({ containers: [{ name: 'main', image: 'test-image:latest', ...main }] });

describe('experimentalMode: presence means enabled, mode defaults to IntraPod (upstream v1beta1 GPUMemoryServiceSpec/FailoverSpec)', () => {
  it.each([
    { name: 'absent', reason: 'no block, no feature', input: undefined, want: undefined },
    { name: 'empty block', reason: '+kubebuilder:default=IntraPod', input: {}, want: 'IntraPod' },
    { name: 'InterPod', reason: 'v1beta1 enum', input: { mode: 'InterPod' }, want: 'InterPod' },
    { name: 'v1alpha1 interPod spelling', reason: 'v1alpha1 enum intraPod;interPod', input: { enabled: true, mode: 'interPod' }, want: 'InterPod' },
    { name: 'v1alpha1 enabled: false', reason: 'the v1alpha1 conversion drops a disabled block', input: { enabled: false }, want: undefined },
  ])('$name', ({ input, want }) => {
    expect(experimentalMode(input)).toBe(want);
  });
});

describe('gmsResourceClaimTemplateName: <parent>-<lower(component)>-gpu (upstream dra.ResourceClaimTemplateName)', () => {
  it('names myapp/Worker "myapp-worker-gpu" (failover_test.go TestBuildFailoverPod_DRAResourceClaim)', () => {
    expect(gmsResourceClaimTemplateName('myapp', 'Worker')).toBe('myapp-worker-gpu');
  });
});

describe('isGpuResourceName: scalar GPU resources DRA replaces (upstream dra.isGPUResourceName)', () => {
  it.each([
    { name: 'nvidia.com/gpu', want: true },
    { name: 'nvidia.com/mig-3g.20gb', want: true },
    { name: 'amd.com/gpu', want: true },
    { name: 'gpu', want: true },
    { name: 'NVIDIA.COM/GPU', want: true },
    { name: 'cpu', want: false },
    { name: 'ephemeral-storage', want: false },
  ])('$name -> $want', ({ name, want }) => {
    expect(isGpuResourceName(name)).toBe(want);
  });
});

describe('gpuCountOf: the first GPU resource of limits, else requests (upstream ExtractGPUCountFromResourceRequirements)', () => {
  it.each([
    { name: 'limits', container: { name: 'main', resources: { limits: { 'nvidia.com/gpu': '4' }, requests: { 'nvidia.com/gpu': '2' } } }, want: 4 },
    { name: 'requests only', container: { name: 'main', resources: { requests: { 'nvidia.com/gpu': 2 } } }, want: 2 },
    { name: 'none', container: { name: 'main', resources: { limits: { cpu: '4' } } }, want: 0 },
  ])('$name -> $want', ({ container, want }) => {
    expect(gpuCountOf(container)).toBe(want);
  });
});

describe('applyDraGpuClaim: the main container trades its scalar GPUs for the shared claim (upstream dra.ApplyClaim)', () => {
  it('removes nvidia.com/gpu, keeps other resources, claims intrapod-shared-gpu, tolerates nvidia.com/gpu:NoSchedule and adds the pod claim', () => {
    const pod = podWithMain({ resources: { limits: { 'nvidia.com/gpu': '2', memory: '8Gi' }, requests: { 'nvidia.com/gpu': '2' } } });
    applyDraGpuClaim(pod, 'myapp-worker-gpu');
    expect(pod).toEqual({
      containers: [{ name: 'main', image: 'test-image:latest', resources: { limits: { memory: '8Gi' }, claims: [{ name: 'intrapod-shared-gpu' }] } }],
      tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
      resourceClaims: [{ name: 'intrapod-shared-gpu', resourceClaimTemplateName: 'myapp-worker-gpu' }],
    });
  });

  it('is idempotent: applied twice, one claim, one toleration, one pod claim', () => {
    const once = podWithMain({ resources: { limits: { 'nvidia.com/gpu': '1' } } });
    applyDraGpuClaim(once, 't');
    const twice = structuredClone(once);
    applyDraGpuClaim(twice, 't');
    expect(twice).toEqual(once);
  });
});

describe('ensureGmsServerSidecar: the GMS server is a native sidecar sharing the claim (upstream gms.EnsureServerSidecar)', () => {
  it('adds gms-server (python3 -m gpu_memory_service.cli.server, restartPolicy Always, no startup probe) and makes main a client (gms_test.go TestEnsureServerSidecar)', () => {
    const pod = podWithMain({ resources: { claims: [{ name: 'intrapod-shared-gpu' }] } });
    const main = pod.containers?.[0] as Container;
    ensureGmsServerSidecar(pod, main, false);
    expect(pod).toEqual({
      containers: [
        {
          name: 'main',
          image: 'test-image:latest',
          resources: { claims: [{ name: 'intrapod-shared-gpu' }] },
          volumeMounts: [{ name: 'gms-intrapod-control', mountPath: '/gms-intrapod-control' }],
          env: [{ name: 'GMS_SOCKET_DIR', value: '/gms-intrapod-control' }],
        },
      ],
      volumes: [{ name: 'gms-intrapod-control', emptyDir: {} }],
      initContainers: [
        {
          name: 'gms-server',
          image: 'test-image:latest',
          command: ['python3', '-m', 'gpu_memory_service.cli.server'],
          env: [{ name: 'GMS_SOCKET_DIR', value: '/gms-intrapod-control' }],
          volumeMounts: [{ name: 'gms-intrapod-control', mountPath: '/gms-intrapod-control' }],
          resources: { claims: [{ name: 'intrapod-shared-gpu' }] },
          restartPolicy: 'Always',
        },
      ],
    });
  });

  it('adds the sidecar once when called twice (gms_test.go TestEnsureServerSidecarIdempotent)', () => {
    const pod = podWithMain();
    ensureGmsServerSidecar(pod, pod.containers?.[0] as Container, false);
    ensureGmsServerSidecar(pod, pod.containers?.[0] as Container, false);
    expect(pod.initContainers).toHaveLength(1);
  });

  it('with the V1 protocol (a checkpointed component) sets DYN_GMS_USE_V1=true on the sidecar and on main (upstream gms.EnableV1)', () => {
    const pod = podWithMain();
    ensureGmsServerSidecar(pod, pod.containers?.[0] as Container, true);
    expect([pod.initContainers?.[0]?.env, pod.containers?.[0]?.env]).toEqual([
      [{ name: 'GMS_SOCKET_DIR', value: '/gms-intrapod-control' }, { name: 'DYN_GMS_USE_V1', value: 'true' }],
      [{ name: 'GMS_SOCKET_DIR', value: '/gms-intrapod-control' }, { name: 'DYN_GMS_USE_V1', value: 'true' }],
    ]);
  });
});

describe('ensureGmsClient: the operator owns the socket volume, mount and env (upstream gms.EnsureClient)', () => {
  it('overrides an authored volume, mount and env of the same names (gms_test.go TestEnsureClientOverridesOperatorOwnedSocketFields)', () => {
    const pod: GmsPodSpec = {
      volumes: [{ name: 'gms-intrapod-control', hostPath: { path: '/wrong' } }],
      containers: [{ name: 'main', env: [{ name: 'GMS_SOCKET_DIR', valueFrom: {} }], volumeMounts: [{ name: 'gms-intrapod-control', mountPath: '/wrong' }] }],
    };
    ensureGmsClient(pod, pod.containers?.[0] as Container);
    expect(pod).toEqual({
      volumes: [{ name: 'gms-intrapod-control', emptyDir: {} }],
      containers: [
        {
          name: 'main',
          env: [{ name: 'GMS_SOCKET_DIR', value: '/gms-intrapod-control' }],
          volumeMounts: [{ name: 'gms-intrapod-control', mountPath: '/gms-intrapod-control' }],
          resources: { claims: [{ name: 'intrapod-shared-gpu' }] },
        },
      ],
    });
  });
});

describe('applyIntraPodGpuMemoryService: claim, server sidecar, then the extra client containers (upstream GenerateBasePodSpec "Intra-pod GMS")', () => {
  const component = (extra: Partial<Component>): Component => deepFreeze(aComponent('worker', 'worker', { experimental: { gpuMemoryService: { extraClientContainers: ['metrics'] } }, ...extra }));

  it('wires an extra client container with the claim and the socket dir, and without a checkpoint no V1 env', () => {
    const pod: GmsPodSpec = { containers: [{ name: 'main', image: 'img:1', resources: { limits: { 'nvidia.com/gpu': '1' } } }, { name: 'metrics', image: 'm:1', resources: { limits: { 'nvidia.com/gpu': '1' } } }] };
    applyIntraPodGpuMemoryService(pod, component({}), 'g-worker-gpu');
    expect(pod.containers?.[1]).toEqual({
      name: 'metrics',
      image: 'm:1',
      volumeMounts: [{ name: 'gms-intrapod-control', mountPath: '/gms-intrapod-control' }],
      env: [{ name: 'GMS_SOCKET_DIR', value: '/gms-intrapod-control' }],
      resources: { claims: [{ name: 'intrapod-shared-gpu' }] },
    });
  });

  it('with experimental.checkpoint the sidecar, main and the extra clients all speak V1 ("Snapshot + intra-pod GMS uses V1 for every backend")', () => {
    const pod: GmsPodSpec = { containers: [{ name: 'main', image: 'img:1' }, { name: 'metrics', image: 'm:1' }] };
    applyIntraPodGpuMemoryService(pod, component({ experimental: { gpuMemoryService: { extraClientContainers: ['metrics'] }, checkpoint: { enabled: true } } }), 'g-worker-gpu');
    const hasV1 = (c: Container | undefined) => (c?.env ?? []).some((e) => e.name === 'DYN_GMS_USE_V1' && e.value === 'true');
    expect([hasV1(pod.initContainers?.[0]), hasV1(pod.containers?.[0]), hasV1(pod.containers?.[1])]).toEqual([true, true, true]);
  });
});

describe('gmsComponentIssues: extra client containers must exist (upstream gmsExtraClientContainersError)', () => {
  it.each([
    { name: 'a declared sidecar', names: ['metrics'], want: [] },
    {
      name: 'main itself',
      names: ['main'],
      want: [{ path: 'spec.components[2].experimental.gpuMemoryService.extraClientContainers[0]', type: 'Invalid', value: 'main', detail: 'must name a container of podTemplate.spec.containers other than "main"' }],
    },
  ])('$name', ({ names, want }) => {
    const component = aComponent('worker', 'worker', {
      podTemplate: { spec: { containers: [{ name: 'main', image: 'img:1' }, { name: 'metrics', image: 'm:1' }] } },
      experimental: { gpuMemoryService: { extraClientContainers: names } },
    });
    expect(gmsComponentIssues(component, 2)).toEqual(want);
  });
});

describe('gmsResourceClaimTemplateSpec: exactly the main container GPU count from the device class (upstream dra.GenerateResourceClaimTemplate)', () => {
  it('defaults the device class to gpu.nvidia.com', () => {
    const component = aComponent('worker', 'worker', { podTemplate: { spec: { containers: [{ name: 'main', image: 'i', resources: { limits: { 'nvidia.com/gpu': '2' } } }] } }, experimental: { gpuMemoryService: {} } });
    expect(gmsResourceClaimTemplateSpec(component)).toEqual({ deviceClassName: 'gpu.nvidia.com', count: 2 });
  });
});

describe('inter-pod GMS: the weight-server and engine pods of a rank (upstream failover.go gmsWeightServerPodSpec, augmentEngineForGMS)', () => {
  const engineBase = (): GmsPodSpec => ({
    containers: [
      {
        name: 'main',
        image: 'vllm-runtime:1.6.0',
        command: ['python3', '-m', 'vllm.entrypoints.openai.api_server'],
        args: ['--model', 'meta-llama/Llama-3-8B'],
        livenessProbe: { httpGet: { path: '/health', port: 'system' } },
        readinessProbe: { httpGet: { path: '/ready', port: 'system' } },
        resources: { limits: { 'nvidia.com/gpu': '8', memory: '64Gi' } },
        env: [{ name: 'DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS', value: '["generate"]' }],
      },
    ],
  });
  const sharedMount = { name: 'gms-shared', mountPath: '/run/gms/shared', subPathExpr: '$(GROVE_PCSG_NAME)-$(GROVE_PCSG_INDEX)/rank-0' };
  const permFix = { name: 'fix-gms-perms', image: 'vllm-runtime:1.6.0', command: ['sh', '-c', 'chmod 1777 /run/gms/shared'], securityContext: { runAsUser: 0, runAsNonRoot: false }, volumeMounts: [sharedMount] };

  it('the weight server runs the GMS script under bash, starts on 2 sockets per GPU, keeps no liveness/readiness probe and non-GPU limits (failover_test.go TestGmsWeightServerPodSpec)', () => {
    const base = deepFreeze(engineBase());
    const pod = gmsWeightServerPodSpec(base, 0, 8);
    const main = pod.containers?.[0] as Container & Record<string, unknown>;
    expect({ command: main.command, startupProbe: main['startupProbe'], liveness: main['livenessProbe'], readiness: main['readinessProbe'], resources: main.resources, mounts: main['volumeMounts'] }).toEqual({
      command: ['bash', '-c'],
      startupProbe: { exec: { command: ['sh', '-c', 'test $(ls /run/gms/shared/gms_*.sock 2>/dev/null | wc -l) -ge 16'] }, periodSeconds: 2, timeoutSeconds: 2, failureThreshold: 150 },
      liveness: undefined,
      readiness: undefined,
      resources: { limits: { memory: '64Gi' } },
      mounts: [sharedMount],
    });
    expect(main.args?.[0]).toContain('python3 -m gpu_memory_service.cli.server &');
    expect(main.env?.at(-1)).toEqual({ name: 'GMS_SOCKET_DIR', value: '/run/gms/shared' });
    expect([pod.volumes, pod.initContainers, pod.tolerations]).toEqual([
      [{ name: 'gms-shared', hostPath: { path: '/run/gms', type: 'DirectoryOrCreate' } }],
      [permFix],
      [{ key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' }],
    ]);
  });

  it('an engine gets ENGINE_ID from the pod index label, the socket dir and lock, notready start, no endpoint health status; Never restarts only with inter-pod failover', () => {
    const base = deepFreeze(engineBase());
    const engine = gmsEnginePodSpec(base, 0, true);
    expect(engine.containers?.[0]?.env).toEqual([
      { name: 'ENGINE_ID', valueFrom: { fieldRef: { fieldPath: "metadata.labels['grove.io/podclique-pod-index']" } } },
      { name: 'GMS_SOCKET_DIR', value: '/run/gms/shared' },
      { name: 'FAILOVER_LOCK_PATH', value: '/run/gms/shared/failover.lock' },
      { name: 'DYN_SYSTEM_STARTING_HEALTH_STATUS', value: 'notready' },
    ]);
    expect([engine['restartPolicy'], gmsEnginePodSpec(base, 0, false)['restartPolicy']]).toEqual(['Never', undefined]);
    expect(engine.initContainers).toEqual([permFix]);
  });
});

describe('inter-pod GMS claim templates and sharing, per rank (upstream gmsResourceClaimTemplateConfigs, gmsResourceSharingEntries)', () => {
  const component = aComponent('svc', 'worker', { podTemplate: { spec: { containers: [{ name: 'main', image: 'i', resources: { limits: { 'nvidia.com/gpu': '4' } } }] } }, experimental: { gpuMemoryService: { mode: 'InterPod' } } });
  const roles = singleNodeGmsRoles(component, 2);

  it('names the roles svc-gms-0 (1 pod) and svc (the engine pods), rank 0 (upstream expandSingleNodeGMSRoles)', () => {
    expect(roles).toEqual([
      { name: 'svc-gms-0', role: 'gms', replicas: 1, rank: 0 },
      { name: 'svc', role: 'main', replicas: 2, rank: 0 },
    ]);
  });

  it('one template svc-gpu-rank-0 for 4 gpu.nvidia.com devices, shared PerReplica by svc-gms-0 and svc (failover_test.go TestGmsResourceSharingEntries_SingleNode)', () => {
    expect(gmsResourceClaimTemplateConfigs(component, roles)).toEqual([
      { name: 'svc-gpu-rank-0', templateSpec: { spec: { devices: { requests: [{ name: 'gpu', exactly: { deviceClassName: 'gpu.nvidia.com', allocationMode: 'ExactCount', count: 4 } }] } } } },
    ]);
    expect(gmsResourceSharingEntries(component, roles)).toEqual([{ name: 'svc-gpu-rank-0', scope: 'PerReplica', filter: { childCliqueNames: ['svc-gms-0', 'svc'] } }]);
  });

  it('lower-cases the component in the template name, so it stays a DNS-1123 name (upstream gmsRCTName with NormalizeKubeResourceName)', () => {
    expect(gmsRankResourceClaimTemplateName('VllmWorker', 0)).toBe('vllmworker-gpu-rank-0');
  });
});
