/**
 * Component defaults as rendered into clique pod specs. Expected values are upstream's:
 * `internal/dynamo/component_worker.go`, `component_frontend.go`, `component_planner.go`,
 * `component_epp.go`, `component_common.go`, `graph.go` (`GenerateBasePodSpec`,
 * `mergeContainerByName`, `applyDefaultSecurityContext`), the health rows of
 * `TestWorkerHealthCheckDefaultsByBackendMode`, and `runtimeversion_test.go`.
 */
import { describe, expect, it } from 'vitest';
import type { Component, Container, Dgd, EnvVar } from '../../api/index.js';
import { aComponent, aDgd, deepFreeze } from '../../../test/support/builders.js';
import { mergeMainContainer, mergeOverride, workerBaseContainer } from './component-defaults.js';
import { renderDgd } from './render.js';
import { componentRuntimeVersion, isOriginGateEnabled, parseImageVersion, parseVersion } from './runtime-version.js';

interface PodSpec extends Record<string, unknown> {
  containers: (Container & Record<string, unknown>)[];
}
function podSpecOf(dgd: Dgd, clique: string): PodSpec {
  const result = renderDgd(deepFreeze(dgd));
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  const pcs = result.objects.find((o) => o.kind === 'PodCliqueSet') as unknown as { spec: { template: { cliques: { name: string; spec: { podSpec: PodSpec } }[] } } };
  const found = pcs.spec.template.cliques.find((c) => c.name === clique);
  if (found === undefined) throw new Error(`no clique ${clique}`);
  return found.spec.podSpec;
}
const mainOf = (spec: PodSpec) => spec.containers.find((c) => c.name === 'main') as Container & Record<string, unknown>;
const envOf = (container: Container): Record<string, string | undefined> => Object.fromEntries((container.env ?? []).map((e: EnvVar) => [e.name, e.value]));
const withImage = (image: string, extra: Partial<Container> = {}): Partial<Component> => ({ podTemplate: { spec: { containers: [{ name: 'main', image, ...extra }] } } });
const single = (component: Component) => aDgd({ spec: { components: [component] } });

describe('worker defaults (upstream component_worker.go)', () => {
  const worker = mainOf(podSpecOf(single(aComponent('worker', 'worker', withImage('nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.0', { command: ['python3', '-m', 'dynamo.vllm'] }))), 'worker'));

  it('probes /live, /health and a two-hour startup /live on the system port', () => {
    expect([worker['livenessProbe'], worker['readinessProbe'], worker['startupProbe']]).toEqual([
      { httpGet: { path: '/live', port: 'system' }, periodSeconds: 5, timeoutSeconds: 4, failureThreshold: 3 },
      { httpGet: { path: '/health', port: 'system' }, periodSeconds: 10, timeoutSeconds: 4, failureThreshold: 3 },
      { httpGet: { path: '/live', port: 'system' }, periodSeconds: 10, timeoutSeconds: 5, failureThreshold: 720 },
    ]);
  });

  it('sets the system, NIXL telemetry and forward-pass env', () => {
    expect(envOf(worker)).toMatchObject({
      DYN_SYSTEM_ENABLED: 'true',
      DYN_SYSTEM_USE_ENDPOINT_HEALTH_STATUS: '["generate"]',
      DYN_SYSTEM_PORT: '9090',
      NIXL_TELEMETRY_ENABLE: 'n',
      NIXL_TELEMETRY_EXPORTER: 'prometheus',
      NIXL_TELEMETRY_PROMETHEUS_PORT: '19090',
      DYN_FORWARDPASS_METRIC_PORT: '20380',
      DYN_DISCOVERY_BACKEND: 'kubernetes',
    });
  });

  it('sorts the merged env by name (upstream MergeEnvs)', () => {
    const names = (worker.env ?? []).map((e) => e.name);
    expect(names).toEqual([...names].sort());
  });

  it.each([
    { name: 'runtime 1.4.0 (below CanaryHealthChecks 1.5.0 and IncreasedWorkerFailureThreshold 1.5.0)', image: 'vllm-runtime:1.4.0', canary: 'false', liveFailures: 1 },
    { name: 'runtime 1.5.0', image: 'vllm-runtime:1.5.0', canary: 'true', liveFailures: 3 },
    { name: 'an unparseable tag keeps the features off ("Keep the feature disabled when runtime compatibility cannot be resolved")', image: 'vllm-runtime:latest', canary: 'false', liveFailures: 1 },
  ])('gates the canary health check and liveness failureThreshold on the runtime version: $name', ({ image, canary, liveFailures }) => {
    const main = mainOf(podSpecOf(single(aComponent('worker', 'worker', withImage(image))), 'worker'));
    expect([envOf(main)['DYN_HEALTH_CHECK_ENABLED'], (main['livenessProbe'] as { failureThreshold: number }).failureThreshold]).toEqual([canary, liveFailures]);
  });

  it('reads the runtime version from runtimeVersionOverride before the image tag', () => {
    const main = mainOf(podSpecOf(single(aComponent('worker', 'worker', { ...withImage('registry.example/runtime:sha-123'), runtimeVersionOverride: '1.5.0' })), 'worker'));
    expect(envOf(main)['DYN_HEALTH_CHECK_ENABLED']).toBe('true');
  });

  it.each([
    { name: 'vLLM native decode worker keeps canary disabled', backend: 'vllm' as const, type: 'decode' as const, args: [] as string[], env: [] as EnvVar[], want: 'false' },
    { name: 'vLLM legacy decode flag keeps canary disabled', backend: 'vllm' as const, type: 'worker' as const, args: ['--is-decode-worker'], env: [], want: 'false' },
    { name: 'vLLM disaggregation decode mode keeps canary disabled', backend: 'vllm' as const, type: 'worker' as const, args: ['--disaggregation-mode=decode'], env: [], want: 'false' },
    { name: 'TRT-LLM decode mode keeps canary disabled', backend: 'trtllm' as const, type: 'worker' as const, args: ['--disaggregation-mode decode'], env: [], want: 'false' },
    { name: 'SGLang tokenizer flag keeps canary disabled', backend: 'sglang' as const, type: 'worker' as const, args: ['--use-sglang-tokenizer'], env: [], want: 'false' },
    { name: 'SGLang tokenizer env keeps canary disabled', backend: 'sglang' as const, type: 'worker' as const, args: [], env: [{ name: 'DYN_SGL_USE_TOKENIZER', value: 'true' }], want: 'false' },
    { name: 'SGLang worker enables canary', backend: 'sglang' as const, type: 'worker' as const, args: [], env: [], want: 'true' },
    { name: 'user override is preserved', backend: 'vllm' as const, type: 'worker' as const, args: [], env: [{ name: 'DYN_HEALTH_CHECK_ENABLED', value: 'false' }], want: 'false' },
  ])('TestWorkerHealthCheckDefaultsByBackendMode: $name', ({ backend, type, args, env, want }) => {
    const component = aComponent('w', type, withImage('runtime:1.6.0', { args, env }));
    const main = mainOf(podSpecOf(aDgd({ spec: { backendFramework: backend, components: [component] } }), 'w'));
    expect(envOf(main)['DYN_HEALTH_CHECK_ENABLED']).toBe(want);
  });
});

describe('frontend, planner and EPP defaults (upstream component_frontend.go, component_planner.go, component_epp.go)', () => {
  it('runs python3 -m dynamo.frontend with /live and /health probes on http unless the template sets a command', () => {
    const main = mainOf(podSpecOf(single(aComponent('Frontend', 'frontend')), 'frontend'));
    expect({ command: main.command, args: main.args, liveness: main['livenessProbe'], readiness: main['readinessProbe'] }).toEqual({
      command: ['python3'],
      args: ['-m', 'dynamo.frontend'],
      liveness: { httpGet: { path: '/live', port: 'http' }, initialDelaySeconds: 15, periodSeconds: 10, timeoutSeconds: 1, failureThreshold: 3 },
      readiness: { httpGet: { path: '/health', port: 'http' }, initialDelaySeconds: 10, periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 3 },
    });
    expect(envOf(main)).toMatchObject({ DYNAMO_PORT: '8000', DYN_HTTP_PORT: '8000', DYN_NAMESPACE_PREFIX: 'inference-my-graph', NVIDIA_VISIBLE_DEVICES: 'void' });
    const custom = mainOf(podSpecOf(single(aComponent('Frontend', 'frontend', withImage('fe:1', { command: ['dynamo-frontend'], args: ['--port', '8000'] }))), 'frontend'));
    expect([custom.command, custom.args]).toEqual([['dynamo-frontend'], ['--port', '8000']]);
  });

  it('runs the planner as planner-serviceaccount with its metrics port 9085', () => {
    const spec = podSpecOf(single(aComponent('planner', 'planner')), 'planner');
    expect(spec['serviceAccountName']).toBe('planner-serviceaccount');
    expect(mainOf(spec).ports).toEqual([{ name: 'metrics', containerPort: 9085, protocol: 'TCP' }]);
    expect(envOf(mainOf(spec))).toMatchObject({ PLANNER_PROMETHEUS_PORT: '9085', NVIDIA_VISIBLE_DEVICES: 'void' });
  });

  // Upstream's planner defaults had two variants over time: an older component_planner.go with
  // a `system` 9090 port, /live, /health and a two-hour startup /live probe on it and
  // DYN_SYSTEM_PORT=9090; the current one (and its TestPlannerDefaults_GetBaseContainer) with
  // the `metrics` port 9085 only, no probes, PLANNER_PROMETHEUS_PORT=9085 and
  // NVIDIA_VISIBLE_DEVICES=void. Neither is gated by origin or runtime version, so every DGD,
  // whichever operator version created it (or none: a legacy DGD), renders the current one.
  it.each<{ name: string; annotations: Record<string, string>; image?: string }>([
    { name: 'a legacy DGD (no origin annotation)', annotations: {} },
    { name: 'origin 0.9.0', annotations: { 'nvidia.com/dynamo-operator-origin-version': '0.9.0' } },
    { name: 'origin 1.0.0 (VLLMMultiprocessing)', annotations: { 'nvidia.com/dynamo-operator-origin-version': '1.0.0' } },
    { name: 'origin 1.6.0', annotations: { 'nvidia.com/dynamo-operator-origin-version': '1.6.0' } },
    { name: 'origin 1.6.0 with a runtime 1.6.0 image', annotations: { 'nvidia.com/dynamo-operator-origin-version': '1.6.0' }, image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.0' },
  ])('renders the planner as upstream\'s current PlannerDefaults for $name: metrics 9085 only, no system port, no probes, no DYN_SYSTEM_PORT', ({ annotations, image }) => {
    const planner = aComponent('planner', 'planner', image === undefined ? {} : withImage(image));
    const main = mainOf(podSpecOf(aDgd({ metadata: { annotations }, spec: { components: [planner] } }), 'planner'));
    expect(main.ports).toEqual([{ name: 'metrics', containerPort: 9085, protocol: 'TCP' }]);
    expect([main['livenessProbe'], main['readinessProbe'], main['startupProbe']]).toEqual([undefined, undefined, undefined]);
    const env = envOf(main);
    expect(env['DYN_SYSTEM_PORT']).toBeUndefined();
    expect([env['PLANNER_PROMETHEUS_PORT'], env['NVIDIA_VISIBLE_DEVICES']]).toEqual(['9085', 'void']);
  });

  it('gives the EPP its gRPC ports and probes, epp-serviceaccount and a 130 s grace period', () => {
    const spec = podSpecOf(single(aComponent('epp', 'epp')), 'epp');
    expect([spec['serviceAccountName'], spec['terminationGracePeriodSeconds']]).toEqual(['epp-serviceaccount', 130]);
    expect(mainOf(spec).ports).toEqual([
      { name: 'grpc', containerPort: 9002, protocol: 'TCP' },
      { name: 'grpc-health', containerPort: 9003, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
    ]);
    expect(mainOf(spec)['livenessProbe']).toEqual({ grpc: { port: 9003, service: 'inference-extension' }, initialDelaySeconds: 5, periodSeconds: 10 });
  });
});

describe('pod defaults and user precedence (upstream GenerateBasePodSpec)', () => {
  it.each([
    { name: 'defaults: terminationGracePeriodSeconds 60, restartPolicy Always, fsGroup 1000', spec: {}, want: { terminationGracePeriodSeconds: 60, restartPolicy: 'Always', securityContext: { fsGroup: 1000 } } },
    { name: 'an authored grace period wins', spec: { terminationGracePeriodSeconds: 300 }, want: { terminationGracePeriodSeconds: 300, restartPolicy: 'Always', securityContext: { fsGroup: 1000 } } },
    { name: 'an authored securityContext gets no default ("they get full control with no defaults injected")', spec: { securityContext: { runAsUser: 0 } }, want: { terminationGracePeriodSeconds: 60, restartPolicy: 'Always', securityContext: { runAsUser: 0 } } },
  ])('$name', ({ spec, want }) => {
    const component = aComponent('worker', 'worker', { podTemplate: { spec: { ...spec, containers: [{ name: 'main', image: 'img:1.6.0' }] } } });
    const pod = podSpecOf(single(component), 'worker');
    expect({ terminationGracePeriodSeconds: pod['terminationGracePeriodSeconds'], restartPolicy: pod['restartPolicy'], securityContext: pod['securityContext'] }).toEqual(want);
  });

  it('lets authored ports, probes and env replace the defaults (mergeContainerByName)', () => {
    const base = workerBaseContainer({ component: aComponent('w', 'worker'), runtimeVersion: undefined, commonEnv: [] });
    const user: Container = { name: 'main', ports: [{ name: 'custom', containerPort: 7000 }], livenessProbe: { tcpSocket: { port: 7000 } }, env: [{ name: 'DYN_SYSTEM_PORT', value: '9345' }] };
    const merged = mergeMainContainer(base, user);
    expect([merged.ports, (merged as Record<string, unknown>)['livenessProbe'], envOf(merged)['DYN_SYSTEM_PORT']]).toEqual([[{ name: 'custom', containerPort: 7000 }], { tcpSocket: { port: 7000 } }, '9345']);
  });

  it('keeps sidecars after the main container', () => {
    const component = aComponent('worker', 'worker', { podTemplate: { spec: { containers: [{ name: 'sidecar', image: 's:1' }, { name: 'main', image: 'm:1' }] } } });
    expect(podSpecOf(single(component), 'worker').containers.map((c) => c.name)).toEqual(['main', 'sidecar']);
  });

  it('merges nested objects key by key and skips empty user values like mergo.WithOverride', () => {
    expect(mergeOverride({ a: { x: 1, y: 2 }, b: 'base', c: [1] }, { a: { y: 3 }, b: '', c: [] })).toEqual({ a: { x: 1, y: 3 }, b: 'base', c: [1] });
  });
});

describe('runtime and origin versions (upstream runtimeversion_test.go, compatibility/gate.go)', () => {
  it.each([
    { name: 'parses a tag with a prefix and prerelease suffix', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:v1.2.3-cuda13', want: { major: 1, minor: 2, patch: 3 } },
    { name: 'rejects an unparseable image tag', image: 'registry.example/runtime:sha-123', want: undefined },
    { name: 'a registry port is not a tag', image: 'localhost:5000/runtime', want: undefined },
    { name: 'a digest is ignored', image: 'runtime:1.6.1@sha256:abc', want: { major: 1, minor: 6, patch: 1 } },
  ])('ParseImageVersion: $name', ({ image, want }) => expect(parseImageVersion(image)).toEqual(want));

  it('Parse rejects an incomplete override ("1.2")', () => {
    expect([parseVersion('1.2.3'), parseVersion('1.2')]).toEqual([{ major: 1, minor: 2, patch: 3 }, undefined]);
    expect(componentRuntimeVersion(aComponent('w', 'worker', { runtimeVersionOverride: '1.2' }))).toBeUndefined();
  });

  it.each([
    { name: 'annotated 1.5.0 is below 1.6.0', annotations: { 'nvidia.com/dynamo-operator-origin-version': '1.5.0' } as Record<string, string> | undefined, want: false },
    { name: 'annotated 1.6.0 meets 1.6.0', annotations: { 'nvidia.com/dynamo-operator-origin-version': '1.6.0' }, want: true },
    { name: 'a malformed value keeps the legacy default', annotations: { 'nvidia.com/dynamo-operator-origin-version': 'next' }, want: false },
    { name: 'no annotation: a legacy DGD, "IsEnabled returns false to preserve backward compatibility" (upstream OperatorOriginFeatureGate)', annotations: undefined, want: false },
    { name: 'an empty annotation map: off, as absent', annotations: {} as Record<string, string>, want: false },
  ])('origin gate: $name', ({ annotations, want }) => {
    expect(isOriginGateEnabled({ major: 1, minor: 6, patch: 0 }, aDgd({ metadata: { annotations } }))).toBe(want);
  });
});

describe('strict namespace prefix (upstream TestComponentNamespacePrefixRuntimeCompatibility, TestFrontendSidecarNamespacePrefixRuntimeCompatibility)', () => {
  const versions = [
    { name: 'unknown runtime', image: 'img:latest', strict: undefined },
    { name: 'older runtime 1.5.9', image: 'img:1.5.9', strict: undefined },
    { name: 'supported runtime 1.6.0', image: 'img:1.6.0', strict: 'true' },
    { name: 'newer runtime 1.7.0', image: 'img:1.7.0', strict: 'true' },
  ];
  it.each(['frontend', 'epp'].flatMap((type) => versions.map((v) => ({ ...v, type: type as 'frontend' | 'epp', name: `${type}/${v.name}` }))))('$name', ({ type, image, strict }) => {
    const env = envOf(mainOf(podSpecOf(single(aComponent(type, type, withImage(image))), type)));
    expect([env['DYN_NAMESPACE_PREFIX'], env['DYN_NAMESPACE_PREFIX_STRICT']]).toEqual(['inference-my-graph', strict]);
  });

  it('TestLegacyEPPDoesNotEnableStrictNamespacePrefix: an EPP with eppConfig stays non-strict at 1.6.0', () => {
    const env = envOf(mainOf(podSpecOf(single(aComponent('epp', 'epp', { ...withImage('img:1.6.0'), eppConfig: {} })), 'epp')));
    expect(env['DYN_NAMESPACE_PREFIX_STRICT']).toBeUndefined();
  });

  it.each([
    { name: 'older worker with supported frontend', worker: 'worker:1.5.0', sidecar: 'frontend:1.6.0', env: [] as EnvVar[], want: 'true' },
    { name: 'supported worker with older frontend', worker: 'worker:1.6.0', sidecar: 'frontend:1.5.0', env: [], want: undefined },
    { name: 'digest-only frontend stays unknown', worker: 'worker:1.6.0', sidecar: `frontend@sha256:${'a'.repeat(64)}`, env: [], want: undefined },
    { name: 'supported frontend explicitly disables strict mode', worker: 'worker:1.5.0', sidecar: 'frontend:1.6.0', env: [{ name: 'DYN_NAMESPACE_PREFIX_STRICT', value: 'false' }], want: 'false' },
  ])('frontend sidecar: $name', ({ worker, sidecar, env, want }) => {
    const component = aComponent('worker', 'worker', {
      frontendSidecar: 'sidecar-frontend',
      podTemplate: {
        metadata: { annotations: { 'nvidia.com/dynamo-kube-discovery-mode': 'container' } },
        spec: { containers: [{ name: 'main', image: worker }, { name: 'sidecar-frontend', image: sidecar, env }, { name: 'other-sidecar', image: 'frontend:1.7.0' }] },
      },
    });
    const containers = podSpecOf(single(component), 'worker').containers;
    const sidecarEnv = envOf(containers[1] as Container);
    expect([containers[1]?.name, sidecarEnv['CONTAINER_NAME'], sidecarEnv['DYN_NAMESPACE_PREFIX'], sidecarEnv['DYN_NAMESPACE_PREFIX_STRICT']]).toEqual(['sidecar-frontend', 'sidecar-frontend', 'inference-my-graph', want]);
    expect(envOf(containers[2] as Container)['DYN_NAMESPACE_PREFIX_STRICT']).toBeUndefined();
  });
});

describe('graph env is authored env (upstream applyDGDTemplateDefaults folds spec.env into the main container first)', () => {
  it('keeps a graph-level DYN_HEALTH_CHECK_ENABLED=false on a 1.6.0 worker', () => {
    const dgd = aDgd({ spec: { env: [{ name: 'DYN_HEALTH_CHECK_ENABLED', value: 'false' }], components: [aComponent('worker', 'worker', withImage('runtime:1.6.0'))] } });
    expect(envOf(mainOf(podSpecOf(dgd, 'worker')))['DYN_HEALTH_CHECK_ENABLED']).toBe('false');
  });
});
