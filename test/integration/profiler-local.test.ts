/**
 * The real Dynamo 1.6.1 profiler (the venv `dynamo-fn py-setup` installs; `.ci/run` runs it
 * first) run locally from a profiling Job, offline, with our `dgd-apply-overrides` as its
 * override tool, and the output-copier's ConfigMap built from its output.
 *
 * The Jobs come from test/support/profiling-job.ts (upstream's Job contract); the specs are the
 * recorded ones in ../shared/fixtures/profiler/ and their outcomes are the recorded outcomes
 * (upstream-notes/profiler.md §3.3). No API server is used here; the contract test with the
 * profile function is profiler-contract.test.ts.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';

import { runProfilingJobLocally, type LocalJobRun } from '../../shared/profiler/local-job.js';
import type { OutputConfigMap } from '../../shared/profiler/output.js';
import { createLineLog } from '../harness/log.js';
import { ensureVenv } from '../../shared/profiler/venv.js';
import { sharedDir } from '../support/paths.js';
import { aProfilingJob } from '../support/profiling-job.js';

const dgdr = { name: 'qwen-small', namespace: 'default', uid: '00000000-0000-0000-0000-000000000001' };

async function fixtureSpec(name: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(path.join(sharedDir, 'fixtures', 'profiler', name), 'utf8')) as Record<string, unknown>;
}

async function profile(spec: Record<string, unknown>): Promise<LocalJobRun> {
  return runProfilingJobLocally(aProfilingJob({ dgdr, spec }));
}

function configMapOf(run: LocalJobRun): OutputConfigMap {
  if (!run.output.ok) throw new Error(`output-copier failed: ${run.output.error}`);
  return run.output.configMap;
}

type Component = { name: string; podTemplate?: { spec?: { containers?: { name: string; image?: string; args?: string[] }[] } } };

function finalDgd(configMap: OutputConfigMap): { metadata: { name: string }; spec: { components: Component[] } } {
  const documents = parseAllDocuments(configMap.data['final_config.yaml'] ?? '').map((d) => d.toJS() as { kind: string });
  const dgd = documents.find((d) => d.kind === 'DynamoGraphDeployment');
  if (dgd === undefined) throw new Error('final_config.yaml has no DynamoGraphDeployment');
  return dgd as unknown as ReturnType<typeof finalDgd>;
}

function mainContainer(component: Component | undefined) {
  return component?.podTemplate?.spec?.containers?.find((c) => c.name === 'main');
}

// Each case runs the real profiler: 10-40 s alone, minutes on a loaded 2-core machine.
describe('the real profiler, run locally from a profiling Job', { timeout: 600_000 }, () => {
  beforeAll(async () => {
    await ensureVenv({ log: createLineLog() });
  }, 900_000);

  // spec1 alone (success, the ConfigMap dgdr-output-<name> with upstream keys, labels and owner;
  // phases in the profiler order) and overrides.dgd of spec8 (the override image on the worker
  // only) are proved by profiler-contract.test.ts with the same real profiler run each, from the
  // Job the profile function created: one run per request for both files, the assertions this
  // file had kept there.
  // One profiler run for two rules on the Frontend: what the profiler does before it calls our
  // tool (features.kvRouter's env, trustRemoteCode's worker flag) and what our tool merges
  // (a $patch list directive, an env override), each asserted as when they ran alone.
  it('$patch {args: append} on Frontend/main keeps python3 -m dynamo.frontend and appends the KV router flags (dgdr-reference "Generated DGD overrides"); features.kvRouter sets DYN_ROUTER_MODE=kv, and an override of that env wins; trustRemoteCode adds --trust-remote-code to the workers (dgdr-reference "features.kvRouter", "Generated DGD overrides")', async () => {
    const spec = await fixtureSpec('spec1.json');
    spec['features'] = { kvRouter: { enabled: true } };
    spec['overrides'] = {
      trustRemoteCode: true,
      dgd: {
        apiVersion: 'nvidia.com/v1beta1',
        kind: 'DynamoGraphDeployment',
        spec: {
          components: [
            { name: 'Frontend', podTemplate: { spec: { containers: [{ name: 'main', $patch: { args: 'append' }, args: ['--router-mode', 'kv'], env: [{ name: 'DYN_ROUTER_MODE', value: 'round-robin' }] }] } } },
          ],
        },
      },
    };
    const run = await profile(spec);
    expect(run.exitCode).toBe(0);
    const components = finalDgd(configMapOf(run)).spec.components;
    const frontend = mainContainer(components.find((c) => c.name === 'Frontend')) as { args?: string[]; env?: { name: string; value?: string }[] } | undefined;
    expect(frontend?.args).toEqual(['-m', 'dynamo.frontend', '--router-mode', 'kv']);
    expect(frontend).not.toHaveProperty('$patch');
    expect(frontend?.env?.filter((e) => e.name === 'DYN_ROUTER_MODE')).toEqual([{ name: 'DYN_ROUTER_MODE', value: 'round-robin' }]);
    expect(mainContainer(components.find((c) => c.name === 'worker'))?.args).toContain('--trust-remote-code');
  });

  // One profiler run for the two legacy rules: a v1alpha1 override under a deprecated name.
  it('a legacy override without apiVersion/kind is v1alpha1: worker mainContainer args are appended to the generated ones (dgdr-reference "Existing nvidia.com/v1alpha1 overrides"); reference "A recognized deprecated name may be translated to the corresponding component in the selected topology with a warning": VllmWorker is translated to worker for the 1.6.1 profiler, whose blueprints set no spec.backendFramework (the backend is read from the worker\'s python3 -m dynamo.vllm)', async () => {
    const spec = await fixtureSpec('spec1.json');
    spec['overrides'] = { dgd: { spec: { services: { VllmWorker: { replicas: 2, extraPodSpec: { mainContainer: { args: ['--enforce-eager'] } } } } } } };
    const run = await profile(spec);
    expect(run.exitCode).toBe(0);
    const worker = finalDgd(configMapOf(run)).spec.components.find((c) => c.name === 'worker');
    expect(worker).toMatchObject({ replicas: 2 });
    // The generated worker args (profiler.md §3.4) kept, the override's appended at the end.
    expect(mainContainer(worker)?.args?.slice(0, 2)).toEqual(['--tensor-parallel-size', '1']);
    expect(mainContainer(worker)?.args?.at(-1)).toBe('--enforce-eager');
    expect(mainContainer(worker)?.args?.filter((a) => a === '--model')).toHaveLength(1);
  });

  it('an override naming a component the topology lacks fails the profiler at GeneratingDGD with our whole error in profiler_error', async () => {
    const spec = await fixtureSpec('spec1.json');
    spec['overrides'] = { dgd: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', spec: { components: [{ name: 'decode', replicas: 2 }] } } };
    const run = await profile(spec);
    expect(run.exitCode).toBe(1);
    const configMap = configMapOf(run);
    expect(Object.keys(configMap.data)).toEqual(['phase', 'message', 'profiler_status', 'profiler_error', 'profiler_status.yaml']);
    expect(configMap.data['phase']).toBe('GeneratingDGD');
    expect(configMap.data['profiler_status']).toBe('failed');
    // The profiler prefixes our stderr with "failed to apply DGD override: " (profiler.md §1.8);
    // safe_dump folds it over lines in the status file, and the whole text is kept.
    expect(configMap.data['profiler_error']).toBe(
      'failed to apply DGD override: apply DGD override: spec.components[name=decode]: override target "decode" is not present in the generated blueprint',
    );
    expect((parse(configMap.data['profiler_status.yaml'] ?? '') as { error: string }).error).toBe(configMap.data['profiler_error']);
  });

  it('an unknown model (spec5) fails at SweepingPrefill with the recorded error', async () => {
    const run = await profile(await fixtureSpec('spec5.json'));
    expect(run.exitCode).toBe(1);
    expect(configMapOf(run).data).toMatchObject({
      phase: 'SweepingPrefill',
      message: 'Profiler failed with exception: RuntimeError',
      profiler_status: 'failed',
      profiler_error: "Model 'acme/unknown-model-7b' not found or config unavailable",
    });
  });
});
