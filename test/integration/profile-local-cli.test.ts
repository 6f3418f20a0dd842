/**
 * `dynamo-fn profile --local` (issue 13 part 8) as a user runs it: the CLI in its own process,
 * the real profiler offline, no cluster. The request is examples/dgdr-qwen3-vllm.yaml; expected
 * values are the reference's rules (named in each test) and the profiler's recorded behaviour
 * (upstream-notes/profiler.md §3.3).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

import { PROFILING_PHASES } from '../../shared/api/index.js';
import { ensureVenv } from '../../shared/profiler/venv.js';
import { createLineLog } from '../harness/log.js';
import { repoRoot } from '../support/paths.js';

const CLI = path.join(repoRoot, 'bin', 'dynamo-fn.js');

async function profileLocal(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [CLI, 'profile', '--local', ...args], { maxBuffer: 16 * 1024 * 1024, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

async function requestFile(spec: Record<string, unknown>): Promise<string> {
  const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'profile-local-')), 'request.yaml');
  await writeFile(file, JSON.stringify({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', metadata: { name: 'what-if' }, spec }));
  return file;
}

type Doc = { kind: string; metadata: { name: string; namespace: string; labels: Record<string, string> }; spec: { components: { name: string; podTemplate: { spec: { containers: { name: string; env?: { name: string; value: string }[] }[] } } }[] } };

describe('dynamo-fn profile --local', () => {
  beforeAll(async () => {
    await ensureVenv({ log: createLineLog() });
  }, 900_000);

  it('prints the DGD the example request would deploy on 8 H200s, with a progress line per profiling phase, and leaves no dynamo-fn-profile-* folder in the temporary directory', async () => {
    // A temporary directory of its own, so other runs on this machine cannot touch what it counts.
    const tmp = await mkdtemp(path.join(os.tmpdir(), 'profile-local-tmp-'));
    const result = await profileLocal(['--gpu-nodes', '1xNVIDIA-H200:8', path.join(repoRoot, 'examples', 'dgdr-qwen3-vllm.yaml')], { ...process.env, TMPDIR: tmp });
    expect((await readdir(tmp)).filter((name) => name.startsWith('dynamo-fn-profile-'))).toEqual([]);
    expect(result.stderr).toContain('Discovered GPU hardware hardware={"gpuSku":"h200_sxm","vramMb":143771,"numGpusPerNode":8,"totalGpus":8,"rdma":false}');
    // One line per phase the status file showed, in the profiler's order (a phase the profiler
    // replaces within milliseconds, such as Initializing, may not be seen).
    const phases = [...result.stderr.matchAll(/Profiling phase=(\w+)/g)].map((m) => m[1]);
    const order = phases.map((phase) => PROFILING_PHASES.indexOf(phase as never));
    expect(order.every((index, i) => index >= 0 && (i === 0 || index > (order[i - 1] as number)))).toBe(true);
    expect(phases).toContain('GeneratingDGD');
    expect(result.stderr).toMatch(/Profiling phase=Done message="Profiler completed successfully"/);
    // Issue 21 item 3: "profile --local prints its phases and elapsed time": each line carries the
    // time since the start, each phase ends with its seconds, and a table gives every phase and the total.
    expect(result.stderr).toMatch(/Profiling phase=SweepingPrefill message="[^"]*" elapsedSeconds=\d+\.\d\n/);
    expect(result.stderr).toMatch(/Finished phase phase=SweepingPrefill seconds=\d+\.\d\n/);
    const table = /Phase times \(seconds\):\n((?: {2}\S+ +\d+\.\d\n)+)/.exec(result.stderr)?.[1] ?? '';
    const rows = table.trimEnd().split('\n').map((line) => line.trim().split(/ +/));
    expect(rows.map(([name]) => name)).toEqual(['StartingCommand', 'CheckingRequest', 'CheckingVenv', 'StartingProfiler', ...phases, 'WritingOutput', 'total']);
    const seconds = rows.map(([, value]) => Number(value));
    // The total is the sum of the phases (each rounded to 0.1 s).
    expect(Math.abs((seconds.at(-1) ?? 0) - seconds.slice(0, -1).reduce((a, b) => a + b, 0))).toBeLessThan(0.1 * rows.length);
    expect(result.code).toBe(0);
    const documents = parseAllDocuments(result.stdout).map((d) => d.toJS() as Doc);
    const dgd = documents.find((d) => d.kind === 'DynamoGraphDeployment');
    // dgdr-reference "Resource ownership" / upstream computeDGDName: <dgdr>-dgd, the request's labels.
    expect(dgd?.metadata).toEqual({
      name: 'qwen3-small-dgd',
      namespace: 'inference',
      labels: { 'dgdr.nvidia.com/name': 'qwen3-small', 'dgdr.nvidia.com/namespace': 'inference', 'nvidia.com/managed-by': 'dynamo-operator' },
    });
    const main = (name: string) => dgd?.spec.components.find((c) => c.name === name)?.podTemplate.spec.containers.find((c) => c.name === 'main');
    // features.kvRouter -> DYN_ROUTER_MODE=kv on the Frontend; the override's env merged by name into the worker.
    expect(main('Frontend')?.env).toContainEqual({ name: 'DYN_ROUTER_MODE', value: 'kv' });
    expect(main('worker')?.env).toEqual([{ name: 'VLLM_LOGGING_LEVEL', value: 'INFO' }]);
  }, 600_000);

  it('a planner request prints the planner ConfigMap first, in the request namespace with the request labels (dgdr-reference "Resource ownership")', async () => {
    const spec = { model: 'Qwen/Qwen3-0.6B', backend: 'vllm', features: { planner: { pre_deployment_sweeping_mode: 'rapid', enable_throughput_scaling: true, enable_load_scaling: false, optimization_target: 'sla' } } };
    const result = await profileLocal(['--gpu-nodes', '1xNVIDIA-H200:8', '--namespace', 'team-a', await requestFile(spec)]);
    expect(result.code).toBe(0);
    const documents = parseAllDocuments(result.stdout).map((d) => d.toJS() as Doc & { data?: Record<string, string> });
    expect(documents.map((d) => d.kind)).toEqual(['ConfigMap', 'DynamoGraphDeployment']);
    const [configMap, dgd] = documents;
    expect(configMap?.metadata.name).toMatch(/^planner-config-[0-9a-f]{4}$/);
    expect(configMap?.metadata.namespace).toBe('team-a');
    expect(configMap?.metadata.labels).toEqual({ 'dgdr.nvidia.com/name': 'what-if', 'dgdr.nvidia.com/namespace': 'team-a', 'nvidia.com/managed-by': 'dynamo-operator' });
    expect(Object.keys(configMap?.data ?? {})).toEqual(['planner_config.json']);
    expect(dgd?.spec.components.map((c) => c.name)).toContain('Planner');
  }, 600_000);

  it('an unknown model fails with the profiler\'s exact error and phase', async () => {
    const result = await profileLocal(['--gpu-nodes', '1xNVIDIA-H200:8', await requestFile({ model: 'acme/unknown-model-7b', backend: 'vllm' })]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/profiling failed at SweepingPrefill: Model 'acme\/unknown-model-7b' not found or config unavailable \(profiler log: /);
  }, 600_000);

  it('an invalid request is refused by admission with the field path, before any profiling (dgdr-reference: concurrency xor requestRate)', async () => {
    const result = await profileLocal([await requestFile({ model: 'Qwen/Qwen3-0.6B', workload: { concurrency: 4, requestRate: 2 } })]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('spec.workload.requestRate: Forbidden: may not be set together with spec.workload.concurrency: they are mutually exclusive');
    expect(result.stderr).not.toContain('Profiling phase=');
  }, 60_000);

  it('a fleet without the requested GPU type fails discovery before any Job (dgdr-reference "hardware")', async () => {
    const result = await profileLocal(['--gpu-nodes', '2xNVIDIA-L40S:4', await requestFile({ model: 'Qwen/Qwen3-0.6B', hardware: { gpuSku: 'h200_sxm' } })]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('GPU hardware discovery failed: no GPU nodes matching spec.hardware.gpuSku "h200_sxm" found');
    expect(result.stderr).not.toContain('Profiling phase=');
  }, 60_000);
});
