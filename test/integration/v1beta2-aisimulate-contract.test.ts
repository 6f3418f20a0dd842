/**
 * The real-AISimulate contract of a v1beta2 Run (issue 10 part 5): a trace Run on the real API
 * server gets its Job from the profile function (claim finalizer first); the job controller and
 * kwok run that Job's pod on a fake node; the test then runs the Job's `aisimulate` container
 * command exactly as the Job carries it, locally against the cached venv's real AISimulate
 * (upstream-notes/profiler.md §3.5, installed by `npm run py:setup`), over a small generated
 * `dynamo.request.trace.v1` gzip trace standing where the kubelet would mount the claim's file.
 * The only rewrites are the pod's paths to local ones (the trace mount, the output emptyDir, the
 * input file), the downward-API namespace, and the test's kubeconfig for the pod's
 * ServiceAccount. The same command ends with the Job's output step (shared/domain/v1beta2/
 * run-output.ts), which writes AISimulate's results into the Run's output ConfigMap on the real
 * API server. The Run must then publish Candidates that are Valid there and succeed, and the
 * claim be released.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CANDIDATE_KIND, DGDR_V1BETA2, FIELD_MANAGER_CLEANUP, FIELD_MANAGER_PROFILE_PUBLISHER, FIELD_MANAGER_PROFILE_RUN, RUN_KIND, RunSchema, type Condition } from '../../shared/api/index.js';
import { AISIMULATE_INPUT_FILE, AISIMULATE_OUTPUT_DIR, ENV_RUN_OUTPUT_STEP, buildAisimulateInput, renderRunOutputStep, compileAisimulateInputSchema, traceMountPath } from '../../shared/domain/index.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { profilerBaseEnv, ensureVenv, venvDir } from '../../shared/profiler/index.js';
import { defaultConfig, type KubeEvent } from '../../shared/runtime/index.js';
import { depsWithKube as profileDeps } from '../../functions/profile/index.js';
import { handle as handleRun } from '../../functions/profile/run.js';
import { depsWithKube as cleanupDeps } from '../../functions/cleanup/index.js';
import { reconcileClaim } from '../../functions/cleanup/trace-claim.js';
import { createGpuNodes, parseGpuFleet } from '../harness/gpu-nodes.js';
import { createLineLog } from '../harness/log.js';
import { createTestNamespace, testKubeConfig } from '../harness/testing.js';
import { eventually } from '../support/eventually.js';
import { sharedDir } from '../support/paths.js';

const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
const kubeConfig = testKubeConfig();
const kubeconfigPath = inject('kubeconfigPath') ?? process.env['KUBECONFIG'] ?? '';
const user: Kube = createKube(kubeConfig, { fieldManager: 'kubectl' });
const base = { log, now: () => new Date(), config: defaultConfig({ dgdrV1Beta2Enabled: true, aisimulateImage: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1' }) };
const profile = { ...profileDeps(base, createKube(kubeConfig, { fieldManager: FIELD_MANAGER_PROFILE_RUN })), publisherKube: createKube(kubeConfig, { fieldManager: FIELD_MANAGER_PROFILE_PUBLISHER }) };
const cleanup = cleanupDeps(base, createKube(kubeConfig, { fieldManager: FIELD_MANAGER_CLEANUP }));
const RUN = { apiVersion: DGDR_V1BETA2, kind: RUN_KIND } as const;
const SUBPATH = 'windows/2026-12-01T09-00.jsonl.gz';
const AISIMULATE_TIMEOUT_MS = 240_000;

let namespace = '';
let nodes: string[] = [];
let work = '';

/** A small Dynamo request trace (dynamo.request.trace.v1 `request_end` events, the shape of fixtures/aisimulate/trace-sample.jsonl). */
function generateTrace(requests: number): string {
  const start = 1_767_225_600_000;
  const lines: string[] = [];
  for (let i = 0; i < requests; i += 1) {
    const blocks = 2 + (i % 7);
    // 63-bit sequence hashes, written as JSON integers (beyond Number's exact range).
    const hashes = Array.from({ length: blocks }, () => (BigInt(`0x${randomBytes(8).toString('hex')}`) >> 1n).toString());
    const received = start + i * 50;
    lines.push(`{"schema": "dynamo.request.trace.v1", "event_type": "request_end", "event_time_unix_ms": ${received + 400}, "request": {"request_id": "r${i}", "request_received_ms": ${received}, "output_tokens": ${32 + (i % 5) * 16}, "replay": {"trace_block_size": 64, "input_length": ${blocks * 64}, "input_sequence_hashes": [${hashes.join(', ')}]}}}`);
  }
  return `${lines.join('\n')}\n`;
}

beforeAll(async () => {
  await ensureVenv({ log: createLineLog() });
  namespace = await createTestNamespace(kubeConfig, 'v1beta2-aisim');
  nodes = await createGpuNodes(user, parseGpuFleet('1xNVIDIA-H200:8'), 'v1beta2-aisim-node');
  work = await mkdtemp(join(tmpdir(), 'dynamo-fn-aisim-'));
  await mkdir(join(work, 'claim', 'windows'), { recursive: true });
  await writeFile(join(work, 'claim', SUBPATH), gzipSync(generateTrace(40)));
}, 600_000);

afterAll(async () => {
  for (const name of nodes) await user.delete({ apiVersion: 'v1', kind: 'Node', name });
  if (work !== '') await rm(work, { recursive: true, force: true });
});

function event(name: string): KubeEvent {
  return { id: randomUUID(), type: 'dev.knative.apiserver.ref.update', source: 'test', key: { ...RUN, namespace, name }, object: undefined };
}

function condition(object: KubeObject | undefined, type: string): Condition | undefined {
  return (object?.['status'] as { conditions?: Condition[] } | undefined)?.conditions?.find((c) => c.type === type);
}

/**
 * Runs the Job's container command locally: same argv and env, pod paths mapped to local ones
 * (in the argv and in env values), the downward-API namespace resolved to the Job's, and the
 * test's kubeconfig standing for the pod's ServiceAccount (the output step falls back to it).
 */
async function runJobContainerLocally(job: KubeObject, localTrace: string, outputDir: string, inputFile: string): Promise<{ code: number; stderr: string }> {
  type EnvVar = { name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } };
  const container = (job['spec'] as { template: { spec: { containers: { name: string; command: string[]; env: EnvVar[] }[] } } }).template.spec.containers.find((c) => c.name === 'aisimulate');
  if (container === undefined) throw new Error('the Job has no aisimulate container');
  const mountPath = traceMountPath(SUBPATH);
  const local = (text: string) => text.split(mountPath).join(localTrace).split(AISIMULATE_OUTPUT_DIR).join(outputDir).split(AISIMULATE_INPUT_FILE).join(inputFile);
  const resolve = (e: EnvVar): string => {
    if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') return job.metadata.namespace ?? '';
    if (e.value === undefined) throw new Error(`env ${e.name}: only values and the metadata.namespace fieldRef are resolved here`);
    return e.value;
  };
  const env = Object.fromEntries(container.env.map((e) => [e.name, e.name === ENV_RUN_OUTPUT_STEP ? resolve(e) : local(resolve(e))]));
  const command = container.command.map(local);
  const venv = await venvDir();
  const [file, ...args] = command as [string, ...string[]];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(file, args, { env: { ...process.env, ...profilerBaseEnv(), ...env, KUBECONFIG: kubeconfigPath, PATH: `${join(venv, 'bin')}:${process.env['PATH'] ?? ''}` }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4000); });
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stderr }));
  });
}

describe('a v1beta2 trace Run with the real AISimulate', () => {
  it('lowers a valid input, runs the Job command against real AISimulate over the trace, and turns its recommendations into Valid Candidates', async () => {
    const pv = `${namespace}-traces`;
    await user.apply({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: pv }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteMany'], hostPath: { path: join(work, 'claim') }, storageClassName: '', claimRef: { namespace, name: 'request-traces' } } });
    await user.apply({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'request-traces', namespace, annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } }, spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Gi' } }, storageClassName: '', volumeName: pv } });
    // Bound, as the PersistentVolume controller (not run here) would write it.
    await user.applyStatus({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: pv }, status: { phase: 'Bound' } }, { force: true });
    await user.applyStatus({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'request-traces', namespace }, status: { phase: 'Bound', accessModes: ['ReadWriteMany'], capacity: { storage: '1Gi' } } }, { force: true });
    const stored = await user.apply({
      ...RUN,
      metadata: { name: 'qwen3-trace-replay-1', namespace },
      spec: {
        model: { name: 'Qwen/Qwen3-0.6B' },
        backends: ['vllm'],
        hardware: { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } },
        workload: { trace: { source: { persistentVolumeClaim: { claimName: 'request-traces', subPath: SUBPATH } } } },
        // A small search, as a user would bound it; AISimulate needs the aggregated workers section.
        aisim: { inputOverrides: { engine: { mode: 'aggregated', workers: { aggregated: {} } }, optimization: { target: 'throughput' }, optimizer: { algorithm: 'random', max_trials: 2, parallelism: 1, seed: 42 } } },
        recommendation: { maxCandidates: 2 },
      },
    });
    const run = RunSchema.parse(stored);
    const schema = JSON.parse(await readFile(join(sharedDir, 'fixtures', 'aisimulate', 'aisimulate-0.13.0.dev85-recommend-input.schema.json'), 'utf8')) as Record<string, unknown>;
    expect(compileAisimulateInputSchema(schema)(buildAisimulateInput(run.spec))).toEqual([]);

    await handleRun(event('qwen3-trace-replay-1'), profile);
    const claim = await user.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name: 'request-traces' });
    expect(claim?.metadata['finalizers']).toContain(`nvidia.com/dgdr-run-${run.metadata.uid ?? ''}`);
    const job = await eventually('the Run\'s Job to complete on a fake node', async () => {
      const got = await user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'qwen3-trace-replay-1-aisimulate' });
      return (got?.['status'] as { succeeded?: number } | undefined)?.succeeded === 1 ? got : undefined;
    });

    const outputDir = join(work, 'output');
    const result = await runJobContainerLocally(job, join(work, 'claim', SUBPATH), outputDir, join(work, 'aisimulate-input.json'));
    expect(result, result.stderr).toMatchObject({ code: 0 });
    // The Job's output step wrote the results ConfigMap: controlled by the Run, labelled with its uid.
    const output = await user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'qwen3-trace-replay-1-aisimulate-output' });
    expect(output?.metadata.labels).toEqual({ 'nvidia.com/dgdr-run-uid': run.metadata.uid });
    expect(output?.metadata['ownerReferences']).toEqual([{ apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRun', name: 'qwen3-trace-replay-1', uid: run.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    const written = JSON.parse((output?.['data'] as Record<string, string>)['recommendation.json'] ?? '{}') as { schema_version?: string; candidates?: { candidate_id: string }[] };
    const full = JSON.parse(await readFile(join(outputDir, 'recommendation.json'), 'utf8')) as { schema_version: string; candidates: { candidate_id: string; status: string }[] };
    expect(written.schema_version).toBe(full.schema_version);
    expect(written.candidates?.map((c) => c.candidate_id)).toEqual(full.candidates.filter((c) => c.status === 'feasible').map((c) => c.candidate_id));

    const done = await eventually('the Run to finish', async () => {
      await handleRun(event('qwen3-trace-replay-1'), profile);
      const got = await user.get({ ...RUN, namespace, name: 'qwen3-trace-replay-1' });
      return condition(got, 'Completed')?.status === 'True' ? got : undefined;
    });
    expect(condition(done, 'Completed')?.reason).toBe('RunSucceeded');
    expect(condition(done, 'Published')).toMatchObject({ status: 'True', reason: 'PublicationSucceeded' });
    const candidates = await user.list(DGDR_V1BETA2, CANDIDATE_KIND, namespace);
    expect(candidates.length).toBeGreaterThanOrEqual(1);
    expect(candidates.length).toBeLessThanOrEqual(2);
    for (const candidate of candidates) {
      expect(condition(candidate, 'Valid')).toMatchObject({ status: 'True', reason: 'ValidationSucceeded' });
      expect((candidate['spec'] as { backendFramework?: string }).backendFramework).toBe('vllm');
    }
    await reconcileClaim(cleanup, namespace, 'request-traces');
    const released = await user.get({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace, name: 'request-traces' });
    expect(released?.metadata['finalizers'] ?? []).not.toContain(`nvidia.com/dgdr-run-${run.metadata.uid ?? ''}`);
  }, AISIMULATE_TIMEOUT_MS + 120_000);
});

describe('a v1beta2 static Run with admission\'s default workload and the real AISimulate (issue 19)', () => {
  it('reference "When neither field is set ... the profiler uses its default maximum-throughput selection": {isl: 4000, osl: 1000} without concurrency or requestRate lowers to a load and stop the real AISimulate runs, and the Run succeeds', async () => {
    const stored = await user.apply({
      ...RUN,
      metadata: { name: 'static-default-1', namespace },
      spec: {
        model: { name: 'Qwen/Qwen3-0.6B' },
        backends: ['vllm'],
        hardware: { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } },
        workload: { static: { isl: 4000, osl: 1000 } },
        aisim: { inputOverrides: { engine: { mode: 'aggregated', workers: { aggregated: {} } }, optimization: { target: 'throughput' }, optimizer: { algorithm: 'random', max_trials: 2, parallelism: 1, seed: 42 } } },
        recommendation: { maxCandidates: 1 },
      },
    });
    const run = RunSchema.parse(stored);
    expect((buildAisimulateInput(run.spec) as { traffic: unknown }).traffic).toEqual({ source: { type: 'synthetic', input_tokens: 4000, output_tokens: 1000 }, load: { type: 'kv_capacity_fraction', fraction: 1 }, stop: { requests_per_load_unit: 10 } });
    const job = await eventually('the Run\'s Job to complete on a fake node', async () => {
      await handleRun(event('static-default-1'), profile);
      const got = await user.get({ apiVersion: 'batch/v1', kind: 'Job', namespace, name: 'static-default-1-aisimulate' });
      return (got?.['status'] as { succeeded?: number } | undefined)?.succeeded === 1 ? got : undefined;
    });
    const outputDir = join(work, 'output-static');
    const result = await runJobContainerLocally(job, join(work, 'unused-trace'), outputDir, join(work, 'aisimulate-input-static.json'));
    expect(result, result.stderr).toMatchObject({ code: 0 });
    const done = await eventually('the Run to finish', async () => {
      await handleRun(event('static-default-1'), profile);
      const got = await user.get({ ...RUN, namespace, name: 'static-default-1' });
      return condition(got, 'Completed')?.status === 'True' ? got : undefined;
    });
    expect(condition(done, 'Completed')?.reason).toBe('RunSucceeded');
  }, AISIMULATE_TIMEOUT_MS + 120_000);
});

/** Runs only the Job's output step (`python3 -c "$RUN_OUTPUT_STEP"`) with the venv's python, as the container does after AISimulate. */
async function runOutputStep(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const venv = await venvDir();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(join(venv, 'bin', 'python3'), ['-c', renderRunOutputStep()], { env: { ...process.env, ...profilerBaseEnv(), ...env, KUBECONFIG: kubeconfigPath }, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4000); });
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stderr }));
  });
}

describe('the Job\'s output step (shared/domain/v1beta2/run-output.ts) on the real API server', () => {
  it('writes the reduced recommendation.json into the Run\'s ConfigMap, replaces its own on a retry, and never touches a ConfigMap the Run does not control', async () => {
    const run = await user.apply({ ...RUN, metadata: { name: 'output-step-1', namespace }, spec: { model: { name: 'Qwen/Qwen3-0.6B' }, workload: { static: { isl: 4000, osl: 1000 } } } });
    const outputDir = join(work, 'output-step');
    await mkdir(outputDir, { recursive: true });
    const full = await readFile(join(sharedDir, 'fixtures', 'aisimulate', 'rec1.recommendation.first-candidate.json'), 'utf8');
    await writeFile(join(outputDir, 'recommendation.json'), full);
    const env = { RUN_NAME: 'output-step-1', RUN_UID: run.metadata.uid ?? '', POD_NAMESPACE: namespace, RUN_OUTPUT_CONFIGMAP: 'output-step-1-aisimulate-output', RUN_OUTPUT_DIR: outputDir };
    const configMap = () => user.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'output-step-1-aisimulate-output' });

    // Someone else's ConfigMap holds the name: the step fails (so the Job fails) and leaves it as it is.
    await user.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'output-step-1-aisimulate-output', namespace }, data: { note: 'not ours' } });
    const refused = await runOutputStep(env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`ERROR: ConfigMap ${namespace}/output-step-1-aisimulate-output exists and is not controlled by DynamoGraphDeploymentRun output-step-1; it is left untouched`);
    expect((await configMap())?.['data']).toEqual({ note: 'not ours' });
    await user.delete({ apiVersion: 'v1', kind: 'ConfigMap', namespace, name: 'output-step-1-aisimulate-output' });
    await eventually('the foreign ConfigMap to be gone', async () => ((await configMap()) === undefined ? true : undefined));

    const written = await runOutputStep(env);
    expect(written, written.stderr).toMatchObject({ code: 0 });
    const stored = await configMap();
    expect(stored?.metadata['ownerReferences']).toEqual([{ ...RUN, name: 'output-step-1', uid: run.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    type Candidate = { candidate_id: string; status: string; config: Record<string, unknown>; metrics: unknown; used_gpus?: number; score?: number };
    const reduced = JSON.parse((stored?.['data'] as Record<string, string>)['recommendation.json'] ?? '{}') as { schema_version: string; views: unknown; candidates: Candidate[] };
    const original = JSON.parse(full) as { schema_version: string; views: unknown; candidates: Candidate[] };
    expect(reduced.schema_version).toBe(original.schema_version);
    expect(reduced.views).toEqual(original.views);
    // Only what the publisher reads, of the feasible candidates: the scalar config fields (the nested estimator settings dropped), metrics, used GPUs, score.
    expect(reduced.candidates).toEqual(original.candidates.filter((c) => c.status === 'feasible').map((c) => ({
      candidate_id: c.candidate_id,
      status: c.status,
      config: Object.fromEntries(Object.entries(c.config).filter(([, v]) => v === null || typeof v !== 'object')),
      metrics: c.metrics,
      ...(c.used_gpus === undefined ? {} : { used_gpus: c.used_gpus }),
      ...(c.score === undefined ? {} : { score: c.score }),
    })));
    expect(reduced.candidates[0]?.config).toMatchObject({ deployment_mode: 'agg', tp: 2 });
    expect(Buffer.byteLength((stored?.['data'] as Record<string, string>)['recommendation.json'] ?? '')).toBeLessThan(Buffer.byteLength(full));

    // A retried pod (its AISimulate found nothing feasible this time) finds its own ConfigMap and replaces it.
    await writeFile(join(outputDir, 'recommendation.json'), JSON.stringify({ ...original, candidates: [] }));
    const again = await runOutputStep(env);
    expect(again, again.stderr).toMatchObject({ code: 0 });
    const replaced = await configMap();
    expect(JSON.parse((replaced?.['data'] as Record<string, string>)['recommendation.json'] ?? '{}')).toMatchObject({ candidates: [] });
    expect(replaced?.metadata.uid).toBe(stored?.metadata.uid);

    // No recommendation.json (AISimulate wrote none): one ERROR line, exit 1.
    const missing = await runOutputStep({ ...env, RUN_OUTPUT_DIR: join(work, 'no-such-output') });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`ERROR: cannot read ${join(work, 'no-such-output', 'recommendation.json')}`);
  }, 120_000);
});

