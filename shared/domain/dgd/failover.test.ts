/**
 * Intra-pod failover rules, one describe per rule. Expected values are upstream's:
 * `dynamo/failover.go` (`buildEngineContainer`, `buildFailoverPod`, the `gms*Default`
 * constants, `applyTRTLLMFailoverOverrides`), `failover_vllm.go` (ports 5600+id, 20080+id,
 * master-port stride 100), `failover_sglang.go`, `graph.go` (`detectBackendFrameworkFromArgs`)
 * and `internal/consts` (DynamoSystemPort 9090, DynamoFPMBasePort 20380, MpiRunSshPort 2222);
 * cross-checked with `failover_test.go` (`TestBuildEngineContainer_EnvVars`).
 */
import { describe, expect, it } from 'vitest';
import type { Container, EnvVar } from '../../api/index.js';
import { aComponent } from '../../../test/support/builders.js';
import {
  applySglangFailoverOverrides,
  applyTrtllmFailoverOverrides,
  applyVllmFailoverOverrides,
  buildFailoverPod,
  failoverBackendFramework,
  failoverComponentIssues,
  failoverEngineContainer,
  failoverWarnings,
  interPodEnginePods,
  isIntraPodFailover,
  staggerFlagValue,
} from './failover.js';
import type { GmsPodSpec } from './gms.js';

const env = (c: Container | undefined): Record<string, string | undefined> => Object.fromEntries((c?.env ?? []).map((e: EnvVar) => [e.name, e.value]));
const base = (): Container => ({
  name: 'main',
  image: 'vllm-runtime:1.6.0',
  command: ['python3', '-m', 'dynamo.vllm'],
  ports: [{ name: 'system', containerPort: 9090, protocol: 'TCP' }],
  env: [
    { name: 'DYN_NAMESPACE', value: 'ns-g' },
    { name: 'DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS', value: '["generate"]' },
    { name: 'DYN_SYSTEM_PORT', value: '9090' },
    { name: 'DYN_HEALTH_CHECK_ENABLED', value: 'true' },
    { name: 'CONTAINER_NAME', value: 'main' },
    { name: 'DYN_FORWARDPASS_METRIC_PORT', value: '20380' },
  ],
  livenessProbe: { httpGet: { path: '/live', port: 'system' } },
  readinessProbe: { httpGet: { path: '/health', port: 'system' } },
  startupProbe: { httpGet: { path: '/live', port: 'system' } },
});

describe('isIntraPodFailover: failover present in mode IntraPod, the default (upstream IsIntraPodFailoverEnabled)', () => {
  it.each([
    { name: 'no failover', experimental: {}, want: false },
    { name: 'empty failover', experimental: { failover: {} }, want: true },
    { name: 'IntraPod', experimental: { failover: { mode: 'IntraPod' } }, want: true },
    { name: 'InterPod', experimental: { failover: { mode: 'InterPod' } }, want: false },
  ])('$name -> $want', ({ experimental, want }) => {
    expect(isIntraPodFailover(aComponent('w', 'worker', { experimental }))).toBe(want);
  });
});

describe('failoverEngineContainer: engine-<id> on system port 9090+id (upstream buildEngineContainer)', () => {
  it('engine-1: port system-1 9091, probes on system-1, the failover env replacing the system env (failover_test.go TestBuildEngineContainer_EnvVars)', () => {
    const engine = failoverEngineContainer(base(), 1);
    expect({ name: engine.name, ports: engine.ports, probes: [engine['livenessProbe'], engine['readinessProbe'], engine['startupProbe']], env: engine.env }).toEqual({
      name: 'engine-1',
      ports: [{ protocol: 'TCP', name: 'system-1', containerPort: 9091 }],
      probes: [{ httpGet: { path: '/live', port: 'system-1' } }, { httpGet: { path: '/health', port: 'system-1' } }, { httpGet: { path: '/live', port: 'system-1' } }],
      env: [
        { name: 'DYN_NAMESPACE', value: 'ns-g' },
        { name: 'ENGINE_ID', value: '1' },
        { name: 'CONTAINER_NAME', value: 'engine-1' },
        { name: 'FAILOVER_LOCK_PATH', value: '/gms-intrapod-control/failover.lock' },
        { name: 'DYN_GMS_FAILOVER_PRIMARY_ENGINE_ID', value: '0' },
        { name: 'DYN_GMS_FAILOVER_SHADOW_MODE', value: 'true' },
        { name: 'DYN_SYSTEM_STARTING_HEALTH_STATUS', value: 'notready' },
        { name: 'DYN_SYSTEM_PORT', value: '9091' },
        { name: 'DYN_SYSTEM_ENABLED', value: 'true' },
        { name: 'DYN_KUBE_DISCOVERY_DEBOUNCE_MS', value: '25' },
        { name: 'DYN_VLLM_GMS_LOCK_BEFORE_INIT', value: '0' },
        { name: 'DYN_SGLANG_GMS_LOCK_BEFORE_INIT', value: '0' },
        { name: 'DYN_TRTLLM_GMS_LOCK_BEFORE_INIT', value: '0' },
        { name: 'DYN_FORWARDPASS_METRIC_PORT', value: '20381' },
      ],
    });
  });

  it('engine-0 takes the lock before init ("1") and keeps the base ports 9090 and 20380', () => {
    expect(env(failoverEngineContainer(base(), 0))).toMatchObject({ DYN_VLLM_GMS_LOCK_BEFORE_INIT: '1', DYN_SGLANG_GMS_LOCK_BEFORE_INIT: '1', DYN_TRTLLM_GMS_LOCK_BEFORE_INIT: '1', DYN_SYSTEM_PORT: '9090', DYN_FORWARDPASS_METRIC_PORT: '20380' });
  });

  it('does not modify the base container', () => {
    const original = base();
    failoverEngineContainer(original, 1);
    expect(original).toEqual(base());
  });
});

describe('buildFailoverPod: two engines replace main, other containers follow (upstream buildFailoverPod)', () => {
  it('keeps the sidecars after the engines and gives sidecar-frontend the fast-failover env (25, 1000, 2, 500, 1500)', () => {
    const pod: GmsPodSpec = { containers: [base(), { name: 'sidecar-frontend', image: 'f:1', env: [{ name: 'DYN_KUBE_DISCOVERY_DEBOUNCE_MS', value: '100' }] }, { name: 'logger', image: 'l:1' }] };
    buildFailoverPod(pod, 1, 'sglang');
    expect(pod.containers?.map((c) => c.name)).toEqual(['engine-0', 'engine-1', 'sidecar-frontend', 'logger']);
    expect(pod.containers?.[2]?.env).toEqual([
      { name: 'DYN_KUBE_DISCOVERY_DEBOUNCE_MS', value: '25' },
      { name: 'DYN_BULWARK_GATEWAY_NOTREADY_GRACE_MS', value: '1000' },
      { name: 'DYN_MIGRATION_RETRY_CONCURRENCY', value: '2' },
      { name: 'DYN_MIGRATION_FIRST_CHUNK_TIMEOUT_MS', value: '500' },
      { name: 'DYN_MIGRATION_RECENT_FAILOVER_WINDOW_MS', value: '1500' },
    ]);
    expect(pod.containers?.[3]).toEqual({ name: 'logger', image: 'l:1' });
  });
});

describe('applyVllmFailoverOverrides: vLLM engines stagger their side-channel, KV-event and master ports (upstream failover_vllm.go)', () => {
  it('appends --master-port 29600 to engine-1 when absent, with NIXL 5600+id and KV events 20080+id', () => {
    const pod: GmsPodSpec = { containers: [{ name: 'engine-0', args: ['--model', 'm'] }, { name: 'engine-1', args: ['--model', 'm'] }] };
    applyVllmFailoverOverrides(pod, 1);
    expect(pod.containers).toEqual([
      { name: 'engine-0', args: ['--model', 'm'], env: [{ name: 'DYN_VLLM_GMS_SHADOW_MODE', value: 'true' }, { name: 'VLLM_NIXL_SIDE_CHANNEL_PORT', value: '5600' }, { name: 'DYN_VLLM_KV_EVENT_PORT', value: '20080' }] },
      {
        name: 'engine-1',
        args: ['--model', 'm', '--master-port', '29600'],
        env: [{ name: 'DYN_VLLM_GMS_SHADOW_MODE', value: 'true' }, { name: 'VLLM_NIXL_SIDE_CHANNEL_PORT', value: '5601' }, { name: 'DYN_VLLM_KV_EVENT_PORT', value: '20081' }],
      },
    ]);
  });

  it('multinode engines also get NNODES', () => {
    const pod: GmsPodSpec = { containers: [{ name: 'engine-0' }] };
    applyVllmFailoverOverrides(pod, 2);
    expect(env(pod.containers?.[0])['NNODES']).toBe('2');
  });

  it.each([
    { name: 'separate tokens', container: { name: 'engine-1', args: ['--master-port', '29500'] }, want: { name: 'engine-1', args: ['--master-port', '29600'] } },
    { name: 'inside a shell line', container: { name: 'engine-1', args: ['exec python3 -m dynamo.vllm --master-port 29500 --x'] }, want: { name: 'engine-1', args: ['exec python3 -m dynamo.vllm --master-port 29600 --x'] } },
    { name: 'inside the command', container: { name: 'engine-1', command: ['sh -c "vllm --master-port 30000"'] }, want: { name: 'engine-1', command: ['sh -c "vllm --master-port 30100"'] } },
  ])('staggerFlagValue: $name (upstream staggerFlagValue)', ({ container, want }) => {
    const copy: Container = structuredClone(container);
    staggerFlagValue(copy, '--master-port', 100);
    expect(copy).toEqual(want);
  });
});

describe('applySglangFailoverOverrides: SGLang engines disable piecewise CUDA graphs (upstream failover_sglang.go)', () => {
  it('appends --disable-piecewise-cuda-graph once, to engines only', () => {
    const pod: GmsPodSpec = { containers: [{ name: 'engine-0', args: ['--disable-piecewise-cuda-graph'] }, { name: 'engine-1' }, { name: 'sidecar', args: [] }] };
    applySglangFailoverOverrides(pod);
    expect(pod.containers?.map((c) => c.args)).toEqual([['--disable-piecewise-cuda-graph'], ['--disable-piecewise-cuda-graph'], []]);
  });
});

describe('applyTrtllmFailoverOverrides: multinode TensorRT-LLM engines after the first move SSH to 2222+id (upstream retargetTRTLLMSshPort)', () => {
  it('rewrites "Port 2222" and "-p 2222" and the TCP readiness probe on engine-1; single node and engine-0 unchanged', () => {
    const engine = (name: string): Container => ({ name, args: ["printf 'Port 2222' && mpirun --mca plm_rsh_args \"-p 2222\""], readinessProbe: { tcpSocket: { port: 2222 } } });
    const multinode: GmsPodSpec = { containers: [engine('engine-0'), engine('engine-1')] };
    applyTrtllmFailoverOverrides(multinode, 2);
    expect(multinode.containers).toEqual([engine('engine-0'), { name: 'engine-1', args: ["printf 'Port 2223' && mpirun --mca plm_rsh_args \"-p 2223\""], readinessProbe: { tcpSocket: { port: 2223 } } }]);
    const single: GmsPodSpec = { containers: [engine('engine-0'), engine('engine-1')] };
    applyTrtllmFailoverOverrides(single, 1);
    expect(single.containers).toEqual([engine('engine-0'), engine('engine-1')]);
  });
});

describe('failoverBackendFramework: spec.backendFramework, else python -m dynamo.<backend> (upstream detectBackendFrameworkFromArgs)', () => {
  const withCommand = (command: string[], args: string[] = []) => aComponent('w', 'worker', { podTemplate: { spec: { containers: [{ name: 'main', image: 'i', command, args }] } } });
  it.each([
    { name: 'declared', backend: 'sglang', component: withCommand(['python3', '-m', 'dynamo.vllm']), want: 'sglang' },
    { name: 'detected vllm', backend: undefined, component: withCommand(['python3', '-m', 'dynamo.vllm']), want: 'vllm' },
    { name: 'detected trtllm in a shell line', backend: undefined, component: withCommand(['sh', '-c'], ['python3 -m dynamo.trtllm --x']), want: 'trtllm' },
    { name: 'nothing to detect', backend: undefined, component: withCommand(['/bin/run']), want: undefined },
  ])('$name -> $want', ({ backend, component, want }) => {
    expect(failoverBackendFramework(backend, component)).toBe(want);
  });
});

describe('failoverComponentIssues and failoverWarnings', () => {
  it('refuses an undetectable backend at the failover field ("failover is not supported for backend framework")', () => {
    expect(failoverComponentIssues(aComponent('w', 'worker', { experimental: { failover: {} } }), 3, undefined)).toEqual([
      { path: 'spec.components[3].experimental.failover', type: 'Invalid', detail: 'failover is not supported for backend framework ""' },
    ]);
  });

  it('warns when the failover mode differs from the GMS mode (upstream FailoverSpec: "failover.mode matches gpuMemoryService.mode")', () => {
    expect(failoverWarnings(aComponent('w', 'worker', { experimental: { gpuMemoryService: { mode: 'InterPod' }, failover: { mode: 'IntraPod' } } }), 0, 'container')).toEqual([
      'spec.components[0].experimental.failover.mode ("w"): IntraPod must match experimental.gpuMemoryService.mode InterPod',
    ]);
  });
});

describe('interPodEnginePods: the primary plus numShadows (at least 1) with inter-pod failover (upstream GetNumShadows, GetTotalEnginePods)', () => {
  it.each([
    { name: 'no failover', failover: undefined, want: 1 },
    { name: 'intra-pod failover', failover: {}, want: 1 },
    { name: 'inter-pod, numShadows unset (CRD default 1)', failover: { mode: 'InterPod' }, want: 2 },
    { name: 'inter-pod, numShadows 0 (clamped to 1)', failover: { mode: 'InterPod', numShadows: 0 }, want: 2 },
  ])('$name -> $want', ({ failover, want }) => {
    expect(interPodEnginePods(aComponent('w', 'worker', { experimental: failover === undefined ? {} : { failover } }))).toBe(want);
  });
});
