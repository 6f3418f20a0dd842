/**
 * The OCI image (infra/image/build.sh): built here from package registries only, then its
 * entrypoint run as the image's user on its root filesystem mounted read-only (with a tmpfs
 * on /tmp, as the chart's emptyDir), through chroot in a private mount namespace (no container
 * engine on this machine). Needs root (chroot, mount) and umoci. Runs in the `image` vitest
 * project, which `npm test` includes when DYNAMO_FN_IMAGE_TEST=1 (the build takes 1-1.5 min).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDockerfile, readImageSpec } from '../support/image-spec.js';
import { repoRoot } from '../support/paths.js';

const version = (JSON.parse(await readFile(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
let out = '';

function run(file: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, [...args], { env, timeout: 600_000, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr }),
    );
  });
}

interface ImageConfig {
  readonly config: {
    User?: string;
    Entrypoint?: string[];
    Cmd?: string[];
    Env?: string[];
    WorkingDir?: string;
    ExposedPorts?: Record<string, unknown>;
    Labels?: Record<string, string>;
  };
}

async function imageConfig(): Promise<ImageConfig> {
  const layout = path.join(out, 'oci');
  const index = JSON.parse(await readFile(path.join(layout, 'index.json'), 'utf8')) as { manifests: { digest: string; annotations?: Record<string, string> }[] };
  const entry = index.manifests.find((m) => m.annotations?.['org.opencontainers.image.ref.name'] === version);
  expect(entry).toBeDefined();
  const blob = (digest: string) => path.join(layout, 'blobs', ...digest.split(':'));
  const manifest = JSON.parse(await readFile(blob(entry?.digest ?? ''), 'utf8')) as { config: { digest: string } };
  return JSON.parse(await readFile(blob(manifest.config.digest), 'utf8')) as ImageConfig;
}

/** Runs the image's entrypoint with `args`, as its user, on its rootfs mounted read-only. */
async function runEntrypoint(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { config } = await imageConfig();
  return runInImage([...(config.Entrypoint ?? []), ...args]);
}

/**
 * Runs `argv` in the image, on its rootfs mounted read-only, with the image's environment; as the
 * image's user unless `user` says otherwise; /tmp a tmpfs, or the host folder `tmpDir` (bound) when given.
 */
async function runInImage(argv: readonly string[], options: { readonly user?: string; readonly tmpDir?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  const { config } = await imageConfig();
  const rootfs = path.join(out, 'rootfs');
  const [uid, gid] = (options.user ?? config.User ?? '').split(':');
  const command = [
    `mount --bind ${rootfs} ${rootfs}`,
    `mount -o remount,bind,ro ${rootfs}`,
    options.tmpDir === undefined ? `mount -t tmpfs -o size=64m tmpfs ${rootfs}/tmp` : `mount --bind ${options.tmpDir} ${rootfs}/tmp`,
    // The image's environment only, then chroot to its root as its user.
    `exec env -i ${(config.Env ?? []).map((e) => `'${e}'`).join(' ')} /usr/sbin/chroot --userspec=${uid}:${gid} ${rootfs} ${argv.map((a) => `'${a}'`).join(' ')}`,
  ].join(' && ');
  return run('/usr/bin/unshare', ['--mount', 'sh', '-c', command]);
}

beforeAll(async () => {
  out = await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-image-'));
  const built = await run(path.join(repoRoot, 'infra', 'image', 'build.sh'), [out, version]);
  expect(built.stderr.split('\n').filter((line) => /error|fail/i.test(line))).toEqual([]);
  expect(built.code).toBe(0);
}, 600_000);

afterAll(async () => {
  await rm(out, { recursive: true, force: true });
});

describe('the OCI image', () => {
  it('runs dynamo-fn as a non-root user: entrypoint node /app/bin/dynamo-fn.js, user 65532:65532', async () => {
    const { config } = await imageConfig();
    expect(config.Entrypoint).toEqual(['/usr/local/bin/node', '/app/bin/dynamo-fn.js']);
    expect(config.User).toBe('65532:65532');
    expect(config.WorkingDir).toBe('/app');
  });

  it('has the config of infra/image/image.json, which the Dockerfile is held to (test/unit/dockerfile.test.ts)', async () => {
    const { config } = await imageConfig();
    const spec = await readImageSpec();
    expect({ ...config, ExposedPorts: Object.keys(config.ExposedPorts ?? {}) }).toMatchObject({
      User: spec.User,
      WorkingDir: spec.WorkingDir,
      Entrypoint: spec.Entrypoint,
      Cmd: spec.Cmd,
      Env: spec.Env,
      ExposedPorts: spec.ExposedPorts,
      Labels: { ...spec.Labels, 'org.opencontainers.image.version': version },
    });
  });

  it('holds what the Dockerfile puts in the final image: in /app exactly that with the production dependencies, no test files', async () => {
    const dockerfile = await readDockerfile();
    // The build stage's /app is copied whole; the final stage's own copies land where they say.
    const landed = [
      ...dockerfile.copies.filter(({ stage }) => stage === 'build' || stage === ''),
      ...dockerfile.copiesFromStages.filter(({ destination }) => destination !== '/app'),
    ].map(({ destination }) => destination);
    for (const destination of landed) expect(existsSync(path.join(out, 'rootfs', destination)), destination).toBe(true);
    const underApp = new Set(landed.filter((d) => d.startsWith('/app/')).map((d) => path.posix.relative('/app', d).split('/')[0]));
    const app = path.join(out, 'rootfs', 'app');
    expect((await readdir(app)).sort()).toEqual([...underApp, 'node_modules'].sort());
    const tests = (await readdir(app, { recursive: true })).filter((file) => !file.startsWith('node_modules') && file.endsWith('.test.ts'));
    expect(tests).toEqual([]);
  });

  it('`dynamo-fn --version` runs on a read-only root filesystem and prints the package version', async () => {
    const result = await runEntrypoint(['--version']);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(new RegExp(`^dynamo-fn ${version.replace(/\./g, '\\.')} \\(Node\\.js v24\\.\\d+\\.\\d+\\)\\n$`));
    expect(result.code).toBe(0);
  });

  it('`dynamo-fn serve reconcile --help` prints the serve usage', async () => {
    const result = await runEntrypoint(['serve', 'reconcile', '--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: dynamo-fn serve FUNCTION [--port N]');
  });

  it('cannot write outside /tmp (the root filesystem is read-only)', async () => {
    const result = await runEntrypoint(['crds', '--out', '/app/written-by-test']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('dynamo-fn crds: cannot write to /app/written-by-test');
  });

  it('/dgd-apply-overrides, the command of a profiling Job\'s init container dgd-override-installer (upstream-notes/profiler.md §1.4), installs as its user 1000 on the emptyDir an override tool that runs outside the image', async () => {
    // The emptyDir: a host folder bound on /tmp; the profiler container (another image) then runs the tool from it.
    const emptyDir = await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-emptydir-'));
    await chmod(emptyDir, 0o777);
    try {
      const installed = await runInImage(['/dgd-apply-overrides', '--install-to', '/tmp/bin/dgd-apply-overrides'], { user: '1000:1000', tmpDir: emptyDir });
      expect(installed).toEqual({ code: 0, stdout: '', stderr: '' });
      const tool = await run(path.join(emptyDir, 'bin', 'dgd-apply-overrides'), ['--protocol-version'], { PATH: '/usr/bin:/bin' });
      expect(tool).toEqual({ code: 0, stdout: '1\n', stderr: '' });
    } finally {
      await rm(emptyDir, { recursive: true, force: true });
    }
  });
});
