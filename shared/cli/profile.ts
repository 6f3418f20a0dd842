/**
 * `dynamo-fn profile --local REQUEST.yaml [--gpu-nodes FLEET]`: what would this
 * DynamoGraphDeploymentRequest deploy, answered on one machine without a cluster.
 *
 * The same pipeline as in a cluster: our admission defaults and validation, hardware discovery
 * over the given (or default) GPU fleet, the profiling Job our profile function would create, its
 * `profiler` container run with the real Dynamo 1.6.1 profiler offline (progress line per
 * profiling phase on stderr), our `spec.overrides.dgd` merge (the profiler calls
 * `dgd-apply-overrides`), then the generated DGD as the request would create it (name, labels,
 * `runtimeVersionOverride`), after the planner ConfigMaps, as a YAML stream on stdout; or the
 * exact failure on stderr.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { stringify } from 'yaml';

import { DGDR_KIND, DgdrSchema, formatIssues, fromZodIssues, type Dgdr } from '../api/index.js';
import {
  applyRuntimeVersionOverride,
  buildProfilingJob,
  DEFAULT_DGDR_ADMISSION_CONFIG,
  defaultDgdr,
  discoverHardware,
  generatedDgdName,
  needsHardwareDiscovery,
  splitGeneratedOutput,
  trackingLabels,
  validateDgdr,
} from '../domain/index.js';
import { DEFAULT_GPU_FLEET, GpuFleetError, gpuNodeObjects, parseGpuFleet } from '../../test/harness/gpu-nodes.js';
import { createLineLog } from '../../test/harness/log.js';
import { LocalJobError, runProfilingJobLocally } from '../profiler/local-job.js';
import { ensureVenv, VenvError } from '../profiler/venv.js';
import { createPhaseClock, formatPhaseTable, formatSeconds } from './phase-clock.js';
import { readKubeObjects } from './yaml-input.js';
import { formatUnknownField, unknownDgdrFields } from './strict-fields.js';

export const summary = 'Profile a DynamoGraphDeploymentRequest on this machine with the real profiler and print the DGD it would deploy';

export const usage = `Usage: dynamo-fn profile --local [--gpu-nodes FLEET] [--namespace NS] [--work-dir DIR] REQUEST.yaml

Runs what a DynamoGraphDeploymentRequest (nvidia.com/v1beta1) would do in a cluster, on this
machine: strict field validation (an unknown field fails with its path), admission defaults
and validation, GPU discovery over FLEET, the profiling Job's profiler container with the real
Dynamo 1.6.1 profiler (offline, rapid search; no GPU needed), and the spec.overrides.dgd merge. Prints the planner ConfigMaps and the DynamoGraphDeployment
the request would create, as YAML, or the failure and exit 1. Progress goes to stderr: a line
per phase with the time since the start (ours: StartingCommand, i.e. Node.js start and
loading, CheckingRequest, CheckingVenv, StartingProfiler, WritingOutput; the profiler's:
Initializing ... Done), a "Finished phase" line with each phase's seconds, and at the end a
table of phase times and the total.
Times measured here (2026-12-02; examples/dgdr-qwen3-vllm.yaml on 1xNVIDIA-H200:8; a 2-core
machine shared with other engineers' builds and tests): at load average 5-8, 41 s and 50 s
wall (SweepingPrefill 22-26 s, StartingProfiler 7-12 s, StartingCommand 5-7 s); at load
average 17-26, 3 min 06 s and 3 min 22 s (SweepingPrefill 130 s, StartingProfiler 21-37 s).
The first run also installs the 2.1 GB profiler venv (about 2 min; see py-setup).

Options:
  --local            run locally (required; in a cluster the profile function runs the Job)
  --gpu-nodes FLEET  the GPU nodes discovery sees, <nodes>x<gpu.product>:<gpus>[:<MiB>],...
                     (default ${DEFAULT_GPU_FLEET})
  --namespace NS     namespace of a request without one (default "default")
  --work-dir DIR     keep the profiler's output and log here (default a temporary folder)

Example:
  dynamo-fn profile --local --gpu-nodes 1xNVIDIA-H200:8 examples/dgdr-qwen3-vllm.yaml`;

export async function run(argv: readonly string[]): Promise<number> {
  let values: { local?: boolean; 'gpu-nodes'?: string; namespace?: string; 'work-dir'?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { local: { type: 'boolean' }, 'gpu-nodes': { type: 'string' }, namespace: { type: 'string' }, 'work-dir': { type: 'string' } },
    }));
  } catch (error) {
    process.stderr.write(`dynamo-fn profile: ${(error as Error).message}\n\n${usage}\n`);
    return 2;
  }
  if (values.local !== true) {
    process.stderr.write(`dynamo-fn profile: --local is required (in a cluster, the profile function runs the profiling Job)\n\n${usage}\n`);
    return 2;
  }
  if (positionals.length !== 1) {
    process.stderr.write(`dynamo-fn profile: expected one REQUEST.yaml, got ${positionals.length}\n\n${usage}\n`);
    return 2;
  }
  const file = positionals[0] as string;
  const log = createLineLog();
  // Each phase (ours, then the profiler's as its status file names them) with its elapsed time,
  // and the table of phase times at the end, on success or failure.
  const clock = createPhaseClock(() => performance.now(), { phase: 'StartingCommand', atMs: 0 });
  // Our phases log `Started phase`; the profiler's keep their `Profiling phase=<ProfilingPhase>` line.
  const enterPhase = (phase: string, fields: Record<string, unknown>, message: 'Started phase' | 'Profiling' = 'Started phase') => {
    const { closed, elapsedMs } = clock.enter(phase);
    if (closed !== undefined) log.info({ phase: closed.phase, seconds: formatSeconds(closed.durationMs) }, 'Finished phase');
    log.info({ phase, ...fields, elapsedSeconds: formatSeconds(elapsedMs) }, message);
  };
  const printPhaseTimes = () => {
    const { phases, totalMs } = clock.finish();
    process.stderr.write(formatPhaseTable(phases, totalMs));
  };
  let isTimed = false;
  const fail = (message: string): number => {
    if (isTimed) printPhaseTimes();
    process.stderr.write(`${message}\n`);
    return 1;
  };

  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return fail(`dynamo-fn profile: cannot read ${file}: ${(error as Error).message}`);
  }
  const read = readKubeObjects(text, file);
  if (read.errors.length > 0) return fail(read.errors.join('\n'));
  const requests = read.objects.filter((o) => o.object['kind'] === DGDR_KIND);
  if (requests.length !== 1) return fail(`${file}: expected exactly one ${DGDR_KIND}, found ${requests.length}`);
  const source = requests[0] as (typeof requests)[number];
  const unknown = unknownDgdrFields(source.object);
  if (unknown.length > 0) return fail(unknown.map((path) => `${source.where}: ${DGDR_KIND}: ${formatUnknownField(path)}`).join('\n'));

  let fleet;
  try {
    fleet = parseGpuFleet(values['gpu-nodes'] ?? DEFAULT_GPU_FLEET);
  } catch (error) {
    if (error instanceof GpuFleetError) return fail(`dynamo-fn profile: --gpu-nodes: ${error.message}`);
    throw error;
  }

  // Admission, as the API server would run it on CREATE.
  isTimed = true;
  enterPhase('CheckingRequest', { message: 'admission and GPU discovery, as in a cluster' });
  const metadata = { namespace: values.namespace ?? 'default', ...((source.object['metadata'] ?? {}) as Record<string, unknown>) };
  const defaulted = defaultDgdr({ ...source.object, metadata }, DEFAULT_DGDR_ADMISSION_CONFIG, 'CREATE');
  const admitted = validateDgdr(defaulted, undefined);
  for (const warning of admitted.warnings) process.stderr.write(`Warning: ${warning}\n`);
  if (admitted.issues.length > 0) return fail(`${source.where}: ${DGDR_KIND} is invalid: ${formatIssues(admitted.issues)}`);
  const parsed = DgdrSchema.safeParse(defaulted);
  if (!parsed.success) return fail(`${source.where}: ${formatIssues(fromZodIssues(parsed.error.issues))}`);
  let dgdr: Dgdr = { ...parsed.data, metadata: { ...parsed.data.metadata, uid: parsed.data.metadata.uid ?? randomUUID() } };

  // Hardware discovery over the simulated fleet, as the profile function does before the Job.
  if (needsHardwareDiscovery(dgdr.spec.hardware)) {
    const nodes = gpuNodeObjects(fleet).map((node) => ({ name: node.metadata.name, labels: (node.metadata['labels'] ?? {}) as Record<string, string> }));
    const discovered = discoverHardware(dgdr.spec.hardware, nodes);
    if (!discovered.ok) return fail(`GPU hardware discovery failed: ${discovered.message}`);
    dgdr = { ...dgdr, spec: { ...dgdr.spec, hardware: discovered.hardware } };
    log.info({ hardware: discovered.hardware }, 'Discovered GPU hardware');
  }

  // The Job the profile function would create; its init-container image is not used locally.
  const built = buildProfilingJob(dgdr, { operatorImage: 'dynamo-fn:local', standardEnv: [] });
  if (!built.ok) return fail(built.message);

  enterPhase('CheckingVenv', { message: 'the profiler venv (installed once)' });
  try {
    await ensureVenv({ log });
  } catch (error) {
    if (error instanceof VenvError) return fail(`dynamo-fn profile: ${error.message}`);
    throw error;
  }
  enterPhase('StartingProfiler', { message: 'the profiler process, until its first status' });
  let result;
  try {
    result = await runProfilingJobLocally(built.job, {
      ...(values['work-dir'] === undefined ? {} : { workDir: values['work-dir'] }),
      // A status without a phase keeps the current one.
      onStatus: (status) => (status.phase === undefined ? log.info({ message: status.message }, 'Profiling') : enterPhase(status.phase, { message: status.message }, 'Profiling')),
    });
  } catch (error) {
    if (error instanceof LocalJobError) return fail(`dynamo-fn profile: ${error.message}`);
    throw error;
  }
  if (!result.output.ok) return fail(`output-copier: ${result.output.error} (profiler log: ${result.logFile})`);
  const data = result.output.configMap.data;
  if (data['profiler_status'] === 'failed') {
    const error = data['profiler_error'] ?? '';
    return fail(`profiling failed at ${data['phase'] ?? ''}: ${error === '' ? 'profiler reported failure (no details available)' : error} (profiler log: ${result.logFile})`);
  }

  // What the profile function would create: the DGD renamed and labelled, planner ConfigMaps.
  enterPhase('WritingOutput', { message: 'the generated DGD and planner ConfigMaps' });
  const dgdName = generatedDgdName(dgdr.metadata.name ?? '', dgdr.spec);
  const generated = splitGeneratedOutput(data['final_config.yaml'] ?? '', dgdName);
  if (!generated.ok) return fail(`spec generation failed: ${generated.message}`);
  const namespace = dgdr.metadata.namespace ?? 'default';
  const labels = trackingLabels(dgdr);
  const dgd = applyRuntimeVersionOverride(generated.dgd, dgdr.spec.runtimeVersionOverride);
  const dgdMetadata = (dgd['metadata'] ?? {}) as Record<string, unknown>;
  const documents = [
    ...generated.additional
      .filter((d) => d['kind'] === 'ConfigMap')
      .map((cm) => ({ ...cm, metadata: { ...((cm['metadata'] ?? {}) as Record<string, unknown>), namespace, labels: { ...(((cm['metadata'] as Record<string, unknown> | undefined)?.['labels'] ?? {}) as Record<string, string>), ...labels } } })),
    { ...dgd, metadata: { ...dgdMetadata, namespace, labels: { ...((dgdMetadata['labels'] ?? {}) as Record<string, string>), ...labels } } },
  ];
  process.stdout.write(documents.map((d) => stringify(d, { lineWidth: 0 })).join('---\n'));
  // The temporary folder goes once its output is printed; a --work-dir is the user's and stays.
  await result.removeWorkDir();
  printPhaseTimes();
  log.info({ dgd: `${namespace}/${dgdName}`, ...(values['work-dir'] === undefined ? {} : { outputDir: result.outputDir }) }, 'Profiled');
  return 0;
}
