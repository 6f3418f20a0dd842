/**
 * Resolving a profiling Job's `profiler` container into a local command: the Job is the one our
 * profile function builds (shared/domain/dgdr buildProfilingJob, upstream's contract in
 * upstream-notes/profiler.md §1.1-§1.4); what changes locally is the module docstring's list
 * (§3.2, §3.3).
 */
import { describe, expect, it } from 'vitest';

import { DgdrSchema } from '../api/index.js';
import { buildProfilingJob } from '../domain/index.js';
import { localProfilerCommand, LocalJobError } from './local-job.js';
import { PROFILER_SHIM_DIR } from './venv.js';

function jobFor(spec: Record<string, unknown>): Record<string, unknown> {
  const dgdr = DgdrSchema.parse({
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeploymentRequest',
    metadata: { name: 'qwen', namespace: 'ns', uid: 'uid-1' },
    spec: { model: 'Qwen/Qwen3-0.6B', image: 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1', hardware: { gpuSku: 'h200_sxm', vramMb: 143771, numGpusPerNode: 8, totalGpus: 8 }, ...spec },
  });
  const built = buildProfilingJob(dgdr, { operatorImage: 'operator:1', standardEnv: [{ name: 'NATS_SERVER', value: 'nats://nats:4222' }] });
  if (!built.ok) throw new Error(built.message);
  return built.job;
}

describe('localProfilerCommand', () => {
  it('runs python -m dynamo.profiler from the venv with the Job args, /data mapped to a local folder, literal env kept, offline env added', () => {
    const job = jobFor({});
    const command = localProfilerCommand(job, '/venv', '/work');
    const container = ((job['spec'] as { template: { spec: { containers: { name: string; args: string[] }[] } } }).template.spec.containers)[0];
    expect(command.executable).toBe('/venv/bin/python');
    expect(command.args).toEqual(['-m', 'dynamo.profiler', '--config', container?.args[1], '--output-dir', '/work/volumes/profiling-output']);
    expect(command.outputDir).toBe('/work/volumes/profiling-output');
    expect(command.dgdr).toEqual({ name: 'qwen', namespace: 'ns', uid: 'uid-1' });
    expect(command.model).toBe('Qwen/Qwen3-0.6B');
    expect(command.env).toMatchObject({
      DGDR_NAME: 'qwen',
      DGDR_NAMESPACE: 'ns',
      DGDR_UID: 'uid-1',
      NATS_SERVER: 'nats://nats:4222',
      HF_HOME: '/work/hf',
      HF_HUB_OFFLINE: '1',
      TRANSFORMERS_OFFLINE: '1',
      PYTHONPATH: PROFILER_SHIM_DIR,
      WORKSPACE_DIR: '/workspace',
    });
    // The Hugging Face token comes from a Secret (valueFrom): not resolved, nothing is downloaded.
    expect(command.env).not.toHaveProperty('HUGGING_FACE_HUB_TOKEN');
    expect(command.env).not.toHaveProperty('DYNAMO_DGD_APPLY_OVERRIDES_BIN');
  });

  it('with spec.overrides.dgd the init container installs into the dgd-override-tool emptyDir and the profiler runs it by the Job\'s own DYNAMO_DGD_APPLY_OVERRIDES_BIN (profiler.md §1.4)', () => {
    const job = jobFor({ overrides: { dgd: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' } } });
    const command = localProfilerCommand(job, '/venv', '/work');
    // /opt/dynamo/bin/dgd-apply-overrides in both containers: one emptyDir, one local folder.
    expect(command.overrideToolInstall).toBe('/work/volumes/dgd-override-tool/dgd-apply-overrides');
    expect(command.env['DYNAMO_DGD_APPLY_OVERRIDES_BIN']).toBe('/work/volumes/dgd-override-tool/dgd-apply-overrides');
  });

  it('without spec.overrides.dgd there is no installer to run', () => {
    expect(localProfilerCommand(jobFor({}), '/venv', '/work').overrideToolInstall).toBeUndefined();
  });

  it('refuses an installer that is not /dgd-apply-overrides --install-to <path>', () => {
    const job = jobFor({ overrides: { dgd: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' } } });
    const podSpec = (job['spec'] as { template: { spec: { initContainers: { command: string[] }[] } } }).template.spec;
    (podSpec.initContainers[0] as { command: string[] }).command = ['/bin/cp'];
    expect(() => localProfilerCommand(job, '/venv', '/work')).toThrow('Job profile-qwen: init container dgd-override-installer runs ["/bin/cp","--install-to","/opt/dynamo/bin/dgd-apply-overrides"], not /dgd-apply-overrides --install-to <path>');
  });

  it.each([
    { name: 'not a Job', job: { apiVersion: 'v1', kind: 'Pod' }, error: /^not a batch\/v1 Job with a pod template: / },
    {
      name: 'no profiler container',
      job: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { containers: [{ name: 'main', command: ['python', '-m', 'dynamo.profiler'] }] } } } },
      error: /^Job j has no container named profiler$/,
    },
    {
      name: 'another command',
      job: { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { template: { spec: { containers: [{ name: 'profiler', command: ['aisimulate', 'recommend'] }] } } } },
      error: /^Job j: container profiler runs \["aisimulate","recommend"\], not python -m dynamo.profiler$/,
    },
  ])('refuses $name', ({ job, error }) => {
    expect(() => localProfilerCommand(job, '/venv', '/work')).toThrow(LocalJobError);
    expect(() => localProfilerCommand(job, '/venv', '/work')).toThrow(error);
  });
});
