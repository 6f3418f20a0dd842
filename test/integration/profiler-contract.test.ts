/**
 * The real-profiler contract (issue 13 part 7): a DynamoGraphDeploymentRequest goes through our
 * admission (defaults and validation, in-process: the test API server has no webhooks
 * registered) to the API server; the profile function, driven by the event bridge, creates the
 * profiling Job; the job controller runs it on a fake GPU node (kwok completes the pod at once);
 * the local profiler runner takes that Job, runs its `profiler` container with the real Dynamo
 * 1.6.1 profiler offline and writes the output ConfigMap as the Job's output-copier would; the
 * profile function then creates the generated DGD, which must pass our DGD admission chain and
 * the API server, and the reconcile function renders it to a PodCliqueSet.
 *
 * No Grove operator runs here: the test acts as Grove by creating each PodClique of the
 * PodCliqueSet and writing the status Grove writes when all pods are ready. The request must then
 * reach Deployed. Cases: vLLM aggregated (spec1), planner + kvRouter disaggregated (spec3),
 * mocker (spec4), `spec.overrides.dgd` (spec8), the recorded specs of ../shared/fixtures/profiler/.
 *
 * With `spec.overrides.dgd` the profiler itself merges, by running `$DYNAMO_DGD_APPLY_OVERRIDES_BIN`
 * (upstream-notes/profiler.md §1.8). The profile function runs with `OPERATOR_IMAGE` set, as the
 * chart sets it to our image, so the Job carries the init container `dgd-override-installer`; the
 * runner runs it as our image does (the bundle `dgd-apply-overrides.mjs`, built here as `npm run
 * build` builds it, with `--install-to`) into the Job's emptyDir, and the profiler calls the
 * installed, self-contained tool through the Job's own env: our merge, as in the cluster.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

import profileFunction, { initProfile } from '../../functions/profile/index.js';
import reconcileFunction from '../../functions/reconcile/index.js';
import { DGDR_KIND, DGDR_V1BETA1, DGD_KIND, DGD_V1BETA1, PROFILING_PHASES } from '../../shared/api/index.js';
import { startEventBridge, type EventBridge } from '../../shared/dev/bridge.js';
import { podCliqueSetName } from '../../shared/domain/index.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { FIELD_MANAGER_OUTPUT_COPIER, startLocalProfilerRunner, type LocalProfilerRunner } from '../../shared/profiler/cluster-runner.js';
import type { LocalJobRun } from '../../shared/profiler/local-job.js';
import { ensureVenv } from '../../shared/profiler/venv.js';
import { defaultConfig, startFunctionServer, TransientError, type FunctionServer } from '../../shared/runtime/index.js';
import { createGpuNodes, parseGpuFleet } from '../harness/gpu-nodes.js';
import { createLineLog } from '../harness/log.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { buildOverrideToolBundle } from '../support/override-tool-bundle.js';
import { repoRoot, sharedDir } from '../support/paths.js';
import { admitThroughChain } from '../unit/admission-chain.js';
import { admitDgdrThroughChain } from '../unit/dgdr-admission-chain.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const user: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
/** The test's stand-in for Grove's controllers (PodClique objects and their status). */
const grove: Kube = createKube(kubeConfig, { fieldManager: 'grove-operator' });
const NODE_PREFIX = 'profiler-contract-gpu';
// Generous: on a shared 2-core machine a profiler run has taken from 10 s to several minutes.
const PROFILE_TIMEOUT_MS = 600_000;

let profileServer: FunctionServer;
let reconcileServer: FunctionServer;
let bridge: EventBridge;
let runner: LocalProfilerRunner;
let namespace = '';
let nodeNames: string[] = [];
/** The image the chart gives the profile function as OPERATOR_IMAGE (ours); the runner stands in for it. */
const OPERATOR_IMAGE = 'ghcr.io/dynamo-fn/dynamo-fn:contract';
/** Each Job's local run, by Job name. */
const runs = new Map<string, LocalJobRun>();
/** The phases the runner relayed while each Job's profiler ran (its onStatus, logged as 'Profiler reached phase'), by Job name. */
const phases = new Map<string, string[]>();
const runnerLog = {
  info(fields: object, msg: string): void {
    const { name, phase } = fields as { name?: string; phase?: string };
    if (msg === 'Profiler reached phase' && name !== undefined) phases.set(name, [...(phases.get(name) ?? []), phase ?? '']);
    log.info(fields, msg);
  },
  warn(fields: object, msg: string): void {
    log.warn(fields, msg);
  },
};

beforeAll(async () => {
  await ensureVenv({ log: createLineLog() });
  namespace = await createTestNamespace(kubeConfig, 'profiler-contract');
  nodeNames = await createGpuNodes(user, parseGpuFleet('1xNVIDIA-H200:8'), NODE_PREFIX);
  const config = defaultConfig({ port: 0, kubeconfigPath: process.env['KUBECONFIG'] });
  const profileEnv = { ...process.env, OPERATOR_IMAGE };
  profileServer = await startFunctionServer({ ...profileFunction, init: (base) => initProfile(base, profileEnv) }, { config, log, host: '127.0.0.1' });
  reconcileServer = await startFunctionServer(reconcileFunction, { config, log, host: '127.0.0.1' });
  const dgdr = { apiVersion: DGDR_V1BETA1, kind: DGDR_KIND };
  const dgd = { apiVersion: DGD_V1BETA1, kind: DGD_KIND };
  bridge = await startEventBridge({
    kubeConfig,
    log,
    resyncIntervalSeconds: 2,
    retry: { retries: 3, backoffDelayMs: 50 },
    subscriptions: [
      { name: 'profile', url: profileServer.url, kinds: [dgdr, { apiVersion: 'batch/v1', kind: 'Job' }, { apiVersion: 'v1', kind: 'ConfigMap' }, dgd], mode: 'Reference' },
      { name: 'reconcile', url: reconcileServer.url, kinds: [dgd], mode: 'Reference' },
    ],
  });
  const overrideToolBundle = await buildOverrideToolBundle(await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-image-dist-')));
  runner = startLocalProfilerRunner({ kube: createKube(kubeConfig, { fieldManager: FIELD_MANAGER_OUTPUT_COPIER }), log: runnerLog, namespace, overrideToolBundle, keepWorkDir: true, onRun: (job, run) => runs.set(job.metadata.name, run) });
}, 900_000);

afterAll(async () => {
  await runner?.stop();
  await bridge?.stop();
  await profileServer?.close();
  await reconcileServer?.close();
  for (const name of nodeNames) await user.delete({ apiVersion: 'v1', kind: 'Node', name });
});

async function fixtureSpec(name: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(path.join(sharedDir, 'fixtures', 'profiler', name), 'utf8')) as Record<string, unknown>;
}

async function getDgdr(name: string): Promise<KubeObject | undefined> {
  return user.get({ apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, namespace, name });
}

function phaseOf(object: KubeObject | undefined): string | undefined {
  return (object?.['status'] as { phase?: string } | undefined)?.phase;
}

/**
 * Acts as Grove: acknowledges the PodCliqueSet's generation (dgd-reference "Coherent capacity
 * and disruption": until Grove does, ready cliques read as still updating), then one PodClique
 * per clique, all pods ready.
 */
async function actAsGrove(pcs: KubeObject): Promise<void> {
  const namespaceOfPcs = pcs.metadata.namespace ?? namespace;
  await grove.applyStatus({ apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueSet', metadata: { name: pcs.metadata.name, namespace: namespaceOfPcs }, status: { observedGeneration: pcs.metadata.generation ?? 1 } }, { force: true });
  const cliques = ((pcs['spec'] as { template: { cliques: { name: string; spec: Record<string, unknown> }[] } }).template.cliques);
  for (const clique of cliques) {
    const name = `${pcs.metadata.name}-0-${clique.name}`;
    const replicas = Number(clique.spec['replicas'] ?? 1);
    const stored = await grove.apply(
      {
        apiVersion: 'grove.io/v1alpha1',
        kind: 'PodClique',
        metadata: {
          name,
          namespace,
          labels: { 'app.kubernetes.io/part-of': pcs.metadata.name },
          // Grove makes the PodCliqueSet the clique's controller (the DGD reads only its PodCliqueSet's own cliques).
          ownerReferences: [{ apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueSet', name: pcs.metadata.name, uid: pcs.metadata.uid, controller: true, blockOwnerDeletion: true }],
        },
        spec: clique.spec,
      },
      { force: true },
    );
    await grove.applyStatus(
      {
        apiVersion: 'grove.io/v1alpha1',
        kind: 'PodClique',
        metadata: { name, namespace },
        status: { observedGeneration: stored.metadata.generation ?? 1, replicas, updatedReplicas: replicas, readyReplicas: replicas, scheduledReplicas: replicas, scheduleGatedReplicas: 0 },
      },
      { force: true },
    );
  }
}

type Component = { name: string; type?: string; podTemplate?: { spec?: { containers?: { name: string; command?: string[]; args?: string[]; env?: { name: string; value?: string }[] }[] } } };

interface Case {
  readonly name: string;
  readonly fixture: string;
  /** Component names the real profiler generates for this request (dgdr-reference "Generated component names"). */
  readonly components: readonly string[];
  readonly check?: (dgd: KubeObject, components: Component[], job: KubeObject) => Promise<void>;
}

const cases: Case[] = [
  {
    name: 'vLLM aggregated (spec1); its run also proves the output-copier\'s ConfigMap and the relayed phases (the profiler-local case of spec1, from this run: the Job differs only in who built it)',
    fixture: 'spec1.json',
    components: ['Frontend', 'worker'],
    check: async (_dgd, _components, job) => {
      const run = await eventually('the runner to report the Job\'s run', async () => runs.get(job.metadata.name));
      expect(run.exitCode).toBe(0);
      if (!run.output.ok) throw new Error(`output-copier failed: ${run.output.error}`);
      const configMap = run.output.configMap;
      // ConfigMap dgdr-output-<name> with upstream keys, labels and owner.
      const uid = (await getDgdr('qwen-agg'))?.metadata.uid;
      expect(uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(configMap.metadata).toEqual({
        name: 'dgdr-output-qwen-agg',
        namespace,
        labels: { 'dgdr.nvidia.com/name': 'qwen-agg', 'dgdr.nvidia.com/namespace': namespace, 'nvidia.com/managed-by': 'dynamo-operator' },
        ownerReferences: [{ apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, name: 'qwen-agg', uid, blockOwnerDeletion: true, controller: true }],
      });
      expect(Object.keys(configMap.data)).toEqual(['phase', 'message', 'profiler_status', 'final_config.yaml', 'profiler_status.yaml']);
      expect(configMap.data).toMatchObject({ phase: 'Done', message: 'Profiler completed successfully', profiler_status: 'success' });
      // profiler.md §3.3 row 1: aggregated, `worker` x8 TP1.
      const final = parseAllDocuments(configMap.data['final_config.yaml'] ?? '').map((d) => d.toJS() as { kind: string; spec?: { components: Component[] } }).find((d) => d.kind === DGD_KIND);
      expect(final?.spec?.components.map((c) => c.name)).toEqual(['Frontend', 'worker']);
      expect((final?.spec?.components[1]?.podTemplate?.spec?.containers?.find((c) => c.name === 'main') as { image?: string } | undefined)?.image).toBe('nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1');
      // Phases relayed while it ran are a subsequence of ProfilingPhase, ending in Done.
      const seen = phases.get(job.metadata.name) ?? [];
      const order = seen.map((phase) => PROFILING_PHASES.indexOf(phase as never));
      expect(order.every((index, i) => index >= 0 && (i === 0 || index > (order[i - 1] as number)))).toBe(true);
      expect(seen.at(-1)).toBe('Done');
    },
  },
  {
    name: 'planner + kvRouter disaggregated (spec3)',
    fixture: 'spec3.json',
    components: ['Frontend', 'Planner', 'decode', 'prefill'],
    check: async (_dgd, components) => {
      // dgdr-reference "features.kvRouter": DYN_ROUTER_MODE=kv on the Frontend.
      const frontend = components.find((c) => c.name === 'Frontend')?.podTemplate?.spec?.containers?.find((c) => c.name === 'main');
      expect(frontend?.env).toContainEqual({ name: 'DYN_ROUTER_MODE', value: 'kv' });
      // The planner ConfigMap is created in the request's namespace, labelled for the request.
      const configMaps = await user.list('v1', 'ConfigMap', namespace, { labelSelector: 'dgdr.nvidia.com/name=qwen-disagg' });
      expect(configMaps.map((c) => c.metadata.name).some((n) => n.startsWith('planner-config-'))).toBe(true);
    },
  },
  {
    name: 'mocker (spec4)',
    fixture: 'spec4.json',
    components: ['Frontend', 'decode', 'prefill'],
    check: async (_dgd, components) => {
      const decode = components.find((c) => c.name === 'decode')?.podTemplate?.spec?.containers?.find((c) => c.name === 'main');
      expect([...(decode?.command ?? []), ...(decode?.args ?? [])].join(' ')).toContain('dynamo.mocker');
    },
  },
];

cases.push({
  name: 'overrides.dgd (spec8), merged by the profiler through the Job\'s installed dgd-apply-overrides',
  fixture: 'spec8.json',
  components: ['Frontend', 'worker'],
  check: async (_dgd, components, job) => {
    // The Job as upstream's contract has it with an override (profiler.md §1.4): our image installs the tool.
    const podSpec = (job['spec'] as { template: { spec: { initContainers?: Record<string, unknown>[]; containers: { name: string; env?: { name: string; value?: string }[] }[] } } }).template.spec;
    expect(podSpec.initContainers?.[0]).toMatchObject({ name: 'dgd-override-installer', image: OPERATOR_IMAGE, command: ['/dgd-apply-overrides'], args: ['--install-to', '/opt/dynamo/bin/dgd-apply-overrides'] });
    expect(podSpec.containers.find((c) => c.name === 'profiler')?.env).toContainEqual({ name: 'DYNAMO_DGD_APPLY_OVERRIDES_BIN', value: '/opt/dynamo/bin/dgd-apply-overrides' });
    // What the init container installed in the emptyDir: self-contained, nothing of this checkout.
    const run = await eventually('the runner to report the Job\'s run', async () => runs.get(job.metadata.name));
    const toolDir = path.join(path.dirname(run.logFile), 'volumes', 'dgd-override-tool');
    expect(existsSync(path.join(toolDir, '.dgd-apply-overrides', 'node'))).toBe(true);
    expect(await readFile(path.join(toolDir, 'dgd-apply-overrides'), 'utf8')).not.toContain(repoRoot);
    // The override's image on the worker only (the profiler called the tool; without it the profiler fails at GeneratingDGD).
    const image = (name: string) => components.find((c) => c.name === name)?.podTemplate?.spec?.containers?.find((c) => c.name === 'main');
    expect((image('worker') as { image?: string } | undefined)?.image).toBe('registry.example/runtime:1.7.0');
    expect((image('Frontend') as { image?: string } | undefined)?.image).toBe('nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.6.1');
  },
});

const dgdrNames: Record<string, string> = { 'spec1.json': 'qwen-agg', 'spec3.json': 'qwen-disagg', 'spec4.json': 'qwen-mocker', 'spec8.json': 'qwen-override' };

describe('the real profiler, from the Job our profile function created to a Deployed request', () => {
  it.each(cases)('$name: the generated DGD passes our admission and the API server, reconciles to a PodCliqueSet, and the request reaches Deployed', async ({ fixture, components, check }) => {
    const name = dgdrNames[fixture] ?? 'qwen';
    const admitted = admitDgdrThroughChain({ object: { apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, metadata: { name, namespace }, spec: await fixtureSpec(fixture) } });
    expect(admitted.issues).toEqual([]);
    expect(admitted.allowed).toBe(true);
    // A loaded API server can time a request out (TransientError): apply again, as kubectl users do.
    await eventually('the request applied', async () => {
      try {
        return await user.apply(admitted.object as Parameters<Kube['apply']>[0], { force: true });
      } catch (error) {
        if (error instanceof TransientError) return undefined;
        throw error;
      }
    }, 180_000, 1000);

    const job = await eventually('the profiling Job', () => user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: `profile-${name}` }), 180_000);
    expect(job.metadata.labels).toMatchObject({ app: 'dynamo-profiler', dgdr: name });

    const deploying = await eventually(
      'the request past Profiling',
      async () => {
        const dgdr = await getDgdr(name);
        const phase = phaseOf(dgdr);
        if (phase === 'Failed') throw new Error(`request failed: ${JSON.stringify((dgdr?.['status'] as { conditions?: unknown })?.conditions)}`);
        return phase === 'Deploying' || phase === 'Deployed' ? dgdr : undefined;
      },
      PROFILE_TIMEOUT_MS,
      500,
    );
    const dgdName = (deploying['status'] as { dgdName: string }).dgdName;
    expect(dgdName).toBe(`${name}-dgd`);

    const dgd = await eventually('the generated DGD', () => user.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name: dgdName }));
    expect(dgd.metadata.labels).toMatchObject({ 'dgdr.nvidia.com/name': name, 'dgdr.nvidia.com/namespace': namespace, 'nvidia.com/managed-by': 'dynamo-operator' });
    const spec = dgd['spec'] as { components: Component[] };
    expect(spec.components.map((c) => c.name).sort()).toEqual([...components].sort());
    // The stored DGD as a user would submit it: through our CRD schema, defaulting and validation.
    const chain = admitThroughChain({ object: { apiVersion: dgd.apiVersion, kind: dgd.kind, metadata: { name: dgd.metadata.name, namespace, labels: dgd.metadata.labels ?? {} }, spec } });
    expect(chain.issues).toEqual([]);
    expect(chain.allowed).toBe(true);
    await check?.(dgd, spec.components, job);

    const pcsName = podCliqueSetName(dgdName, spec.components.filter((c) => c.type !== 'lpx') as never);
    const pcs = await eventually('the PodCliqueSet', () => user.get({ apiVersion: 'grove.io/v1alpha1', kind: 'PodCliqueSet', namespace, name: pcsName }), 60_000);
    await actAsGrove(pcs);

    const deployed = await eventually('the request Deployed', async () => {
      const dgdr = await getDgdr(name);
      return phaseOf(dgdr) === 'Deployed' ? dgdr : undefined;
    }, 300_000, 500);
    const conditions = (deployed['status'] as { conditions: { type: string; status: string }[] }).conditions;
    expect(conditions.find((c) => c.type === 'Succeeded')).toMatchObject({ status: 'True' });
    expect(conditions.find((c) => c.type === 'DeploymentReady')).toMatchObject({ status: 'True' });
  }, 1_200_000);
});
