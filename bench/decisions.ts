/**
 * Decision benchmark (not a test): the pure decisions behind the profile and cleanup functions,
 * per call, beside `structuredClone` of the same observed state (the least work a decision
 * over that input could do), in one run:
 * - `decideDgdr` for a request whose profiling Job completed with the real profiler's output
 *   (../shared/fixtures/profiler/out1.final_config.yaml): the step that generates the DGD;
 * - `decideTraceClaim` for a trace claim under deletion read by three Runs (one complete, one
 *   with a running Job to stop, one gone).
 * Aim (issue 12): print each in microseconds (no threshold is set).
 *
 * Usage: npm run bench:decisions [-- --iterations N]
 * @module
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DgdrSchema } from '../shared/api/index.js';
import { decideDgdr, decideTraceClaim, type ClaimReader, type DgdrObserved } from '../shared/domain/index.js';
import { renderTable, timeSync } from './table.js';

const FIXTURE = new URL('../../shared/fixtures/profiler/out1.final_config.yaml', import.meta.url);
const NOW = new Date('2026-12-01T00:00:00Z');

function aCompletedRequest(): DgdrObserved {
  const dgdr = DgdrSchema.parse({
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeploymentRequest',
    metadata: { name: 'qwen', namespace: 'ns', uid: 'uid-1', generation: 1 },
    spec: { model: 'Qwen/Qwen3-0.6B', image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1', backend: 'vllm', autoApply: true, hardware: { gpuSku: 'h200_sxm', vramMb: 141312, numGpusPerNode: 8, totalGpus: 16, rdma: false } },
    status: { phase: 'Profiling', profilingPhase: 'Done', observedGeneration: 1, profilingJobName: 'profile-qwen' },
  });
  return {
    dgdr,
    job: { name: 'profile-qwen', uid: 'job-uid', labels: { app: 'dynamo-profiler', dgdr: 'qwen' }, ownerReferences: [{ uid: 'uid-1', controller: true }], conditions: [{ type: 'Complete', status: 'True' }] },
    jobPods: [],
    output: { name: 'dgdr-output-qwen', labels: {}, ownerReferences: [{ uid: 'uid-1', controller: true }] },
    outputData: { phase: 'Done', message: 'Profiler completed successfully', profiler_status: 'success', 'final_config.yaml': readFileSync(FIXTURE, 'utf8') },
    dgd: undefined,
    nodes: undefined,
    modelCachePvcExists: undefined,
  } as unknown as DgdrObserved;
}

function aClaimUnderDeletion(): Parameters<typeof decideTraceClaim> {
  const claim = { name: 'trace', isDeleting: true, volumeMode: 'Filesystem', phase: 'Bound', finalizers: ['nvidia.com/dgdr-run-run-a', 'nvidia.com/dgdr-run-run-b', 'nvidia.com/dgdr-run-run-c'] };
  const readers = new Map<string, ClaimReader>([
    ['run-a', { runUid: 'run-a', run: { name: 'req-1', isComplete: true, claimName: 'trace' }, jobs: [] }],
    ['run-b', { runUid: 'run-b', run: { name: 'req-2', isComplete: false, claimName: 'trace' }, jobs: [{ name: 'req-2-job', uid: 'j2', isDeleting: false, outcome: 'Active', failureMessage: undefined }] }],
    ['run-c', { runUid: 'run-c', run: undefined, jobs: [] }],
  ]);
  return [claim, readers];
}

export function runDecisionsBench(iterations: number): string {
  const request = aCompletedRequest();
  const claim = aClaimUnderDeletion();
  const config = { operatorImage: 'dynamo-fn:bench', standardEnv: [] };
  const desired = decideDgdr(request, config, NOW);
  if (!JSON.stringify(desired).includes('DynamoGraphDeployment')) throw new Error('bench: decideDgdr did not generate a DGD from the profiler output');
  const dgdrMs = timeSync(() => decideDgdr(request, config, NOW), { iterations, warmup: 100 });
  const dgdrCopyMs = timeSync(() => structuredClone(request), { iterations, warmup: 100 });
  const claimMs = timeSync(() => decideTraceClaim(...claim), { iterations: iterations * 20, warmup: 1000 });
  const claimCopyMs = timeSync(() => structuredClone(claim[0]), { iterations: iterations * 20, warmup: 1000 });
  const us = (ms: number) => ms * 1000;
  return renderTable('Profile and cleanup decisions (median of 9 batches)', [
    { name: 'decideDgdr: profiling done, generate the DGD from the profiler output', value: us(dgdrMs), unit: 'µs', baseline: { name: 'structuredClone of the observed state', value: us(dgdrCopyMs) } },
    { name: 'decideTraceClaim: a deleted claim read by three Runs', value: us(claimMs), unit: 'µs', baseline: { name: 'structuredClone of the claim', value: us(claimCopyMs) } },
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { iterations: { type: 'string', default: '2000' } } });
  process.stdout.write(runDecisionsBench(Number(values.iterations)));
}
