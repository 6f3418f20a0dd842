/**
 * `dynamo-fn dgd-apply-overrides`, protocol v1, with the cases of upstream's
 * deploy/operator/cmd/dgd-apply-overrides/main_test.go (named in each test) and the profiler's
 * side of the protocol (upstream-notes/profiler.md §1.8).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rename, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

import { buildOverrideToolBundle } from '../../test/support/override-tool-bundle.js';
import { repoRoot } from '../../test/support/paths.js';
import { installOverrideTool, run } from './dgd-apply-overrides.js';

const betaBlueprint = {
  apiVersion: 'nvidia.com/v1beta1',
  kind: 'DynamoGraphDeployment',
  metadata: { name: 'generated', namespace: 'default' },
  spec: {
    backendFramework: 'vllm',
    components: [
      { name: 'Frontend', type: 'frontend' },
      { name: 'Worker', type: 'worker', podTemplate: { spec: { containers: [{ name: 'main', image: 'old-image' }] } } },
    ],
  },
};
const alphaOverride = { apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment', spec: { services: { Worker: { extraPodSpec: { mainContainer: { image: 'new-image' } } } } } };

async function call(argv: string[], stdin = '') {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, { readStdin: async () => stdin, writeStdout: (t) => (stdout += t), writeStderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

const request = (blueprint: unknown, override: unknown) => JSON.stringify({ blueprint, override });

describe('dgd-apply-overrides', () => {
  it('--protocol-version prints 1 (TestRunPrintsProtocolVersion; the 1.6.1 profiler expects "1")', async () => {
    expect(await call(['--protocol-version'])).toEqual({ code: 0, stdout: '1\n', stderr: '' });
  });

  it('applies a versioned override: stdout is the effective DGD, stderr empty (TestRunAppliesVersionedOverride)', async () => {
    const result = await call([], request(betaBlueprint, alphaOverride));
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const dgd = JSON.parse(result.stdout) as typeof betaBlueprint;
    expect(dgd.apiVersion).toBe('nvidia.com/v1beta1');
    expect(dgd.metadata.name).toBe('generated');
    expect(dgd.spec.components[1]).toEqual({ name: 'Worker', type: 'worker', podTemplate: { spec: { containers: [{ name: 'main', image: 'new-image' }] } } });
  });

  it('an empty override preserves the blueprint (TestRunWithEmptyOverridePreservesBlueprint)', async () => {
    const result = await call([], request(betaBlueprint, { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' }));
    expect(result).toEqual({ code: 0, stdout: `${JSON.stringify(betaBlueprint)}\n`, stderr: '' });
  });

  it('a translated target prints a warning: line on stderr (TestRunEmitsMigrationWarningForTranslatedTarget)', async () => {
    const blueprint = JSON.parse(JSON.stringify(betaBlueprint).replaceAll('"Worker"', '"worker"')) as unknown;
    const override = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', spec: { components: [{ name: 'VllmWorker', podTemplate: { spec: { containers: [{ name: 'main', image: 'new-image' }] } } }] } };
    const result = await call([], request(blueprint, override));
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      'warning: spec.components[name=VllmWorker]: deprecated override target "VllmWorker" translated to "worker"; use "worker" directly. Legacy-name translation will be removed in a future release\n',
    );
  });

  it('an unknown target fails with nothing on stdout (TestRunRejectsUnknownOverrideTarget)', async () => {
    const override = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', spec: { components: [{ name: 'Missing', replicas: 2 }] } };
    expect(await call([], request(betaBlueprint, override))).toEqual({
      code: 1,
      stdout: '',
      stderr: 'apply DGD override: spec.components[name=Missing]: override target "Missing" is not present in the generated blueprint\n',
    });
  });

  it.each([
    { name: 'empty request', argv: [], stdin: '', want: /^decode request JSON: / },
    { name: 'malformed request', argv: [], stdin: '{', want: /^decode request JSON: / },
    { name: 'unexpected positional argument', argv: ['extra'], stdin: '', want: /^unexpected positional arguments: extra/ },
    { name: 'removed file flag', argv: ['--blueprint', '/tmp/blueprint'], stdin: '', want: /^flag provided but not defined: --blueprint/ },
    { name: 'protocol version mixed with install mode', argv: ['--protocol-version', '--install-to', '/tmp/tool'], stdin: '', want: /^--install-to and --protocol-version are mutually exclusive/ },
    { name: 'missing blueprint', argv: [], stdin: '{"override": {}}', want: /^request blueprint is required/ },
    { name: 'missing override', argv: [], stdin: '{"blueprint": {}}', want: /^request override is required/ },
    { name: 'unknown request field', argv: [], stdin: '{"blueprint": {}, "override": {}, "extra": {}}', want: /unknown field "extra"/ },
    { name: 'non-object blueprint', argv: [], stdin: request('not-an-object', alphaOverride), want: /^decode request blueprint object/ },
    { name: 'unsupported override version', argv: [], stdin: request(betaBlueprint, { apiVersion: 'nvidia.com/v2', kind: 'DynamoGraphDeployment' }), want: /^apply DGD override: override must be/ },
    { name: 'DGDR resource instead of DGD override', argv: [], stdin: request(betaBlueprint, { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest', spec: {} }), want: /^apply DGD override: .*kind "DynamoGraphDeploymentRequest"/ },
  ])('refuses: $name (TestRunRejectsInvalidArgumentsAndInput / TestRunDoesNotWriteOutputOnFailure)', async ({ argv, stdin, want }) => {
    const result = await call(argv, stdin);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(want);
  });

  it('--install-to writes an executable (mode 0755) that speaks the protocol as a separate process (TestRunInstallsExecutable)', async () => {
    const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'dgd-tool-')), 'bin', 'dgd-apply-overrides');
    await installOverrideTool(file);
    expect((await stat(file)).mode & 0o777).toBe(0o755);
    const { stdout } = await promisify(execFile)(file, ['--protocol-version'], { env: { PATH: '/usr/bin:/bin' } });
    expect(stdout).toBe('1\n');
  }, 30_000);

  it('the bundle\'s --install-to (what the init container dgd-override-installer runs) installs a self-contained tool: Node.js and the bundle beside it, nothing of this checkout, runnable after moving it (the profiler container mounts it elsewhere)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'dgd-tool-'));
    const bundle = await buildOverrideToolBundle(path.join(dir, 'image-dist'));
    await promisify(execFile)(process.execPath, [bundle, '--install-to', path.join(dir, 'emptydir', 'dgd-apply-overrides')]);
    const wrapper = await readFile(path.join(dir, 'emptydir', 'dgd-apply-overrides'), 'utf8');
    expect(wrapper).not.toContain(repoRoot);
    expect(wrapper).not.toContain(process.execPath);
    expect((await stat(path.join(dir, 'emptydir', '.dgd-apply-overrides', 'node'))).mode & 0o111).not.toBe(0);
    // The profiler container mounts the emptyDir at /opt/dynamo/bin: another path than the installer's.
    await rename(path.join(dir, 'emptydir'), path.join(dir, 'mounted'));
    const tool = path.join(dir, 'mounted', 'dgd-apply-overrides');
    const env = { PATH: '/usr/bin:/bin' };
    expect((await promisify(execFile)(tool, ['--protocol-version'], { env })).stdout).toBe('1\n');
    const merged = await new Promise<string>((resolve, reject) => {
      const child = spawn(tool, [], { env });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`exit ${String(code)}`))));
      child.stdin.end(request(betaBlueprint, alphaOverride));
    });
    // The same merge as in-process: the v1alpha1 override's image on the Worker's main container.
    const inProcess = await call([], request(betaBlueprint, alphaOverride));
    expect(merged).toBe(inProcess.stdout);
    expect(JSON.parse(merged).spec.components[1].podTemplate.spec.containers[0].image).toBe('new-image');
  }, 60_000);
});
