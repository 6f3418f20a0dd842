/**
 * The OCI image (infra/image/build.sh): built here from package registries only, then its
 * entrypoint, and each function's own bundle as the chart starts it, run as the image's user on
 * its root filesystem mounted read-only (with a tmpfs on /tmp, as the chart's emptyDir), through
 * chroot in a private mount namespace (no container engine on this machine; the network is the
 * host's, so the test talks to the functions on loopback). Needs root (chroot, mount) and umoci. Runs in the `image` vitest
 * project, which `npm test` includes when DYNAMO_FN_IMAGE_TEST=1 (the build takes 1-1.5 min).
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateServingCertificates } from '../../functions/admission/dev-certs.js';
import { functionSnapshotArgs } from '../../shared/cli/function-snapshot.js';
import type { FunctionName } from '../../shared/cli/serve.js';
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

/** The shell command that mounts the rootfs read-only, /tmp, and runs `argv` chrooted as `uid:gid` with the image's environment (plus `env`). */
async function inImageCommand(argv: readonly string[], options: { readonly user?: string; readonly tmpDir?: string; readonly env?: readonly string[] }): Promise<string> {
  const { config } = await imageConfig();
  const rootfs = path.join(out, 'rootfs');
  const [uid, gid] = (options.user ?? config.User ?? '').split(':');
  return [
    `mount --bind ${rootfs} ${rootfs}`,
    `mount -o remount,bind,ro ${rootfs}`,
    options.tmpDir === undefined ? `mount -t tmpfs -o size=64m tmpfs ${rootfs}/tmp` : `mount --bind ${options.tmpDir} ${rootfs}/tmp`,
    // The image's environment only, then chroot to its root as its user.
    `exec env -i ${[...(config.Env ?? []), ...(options.env ?? [])].map((e) => `'${e}'`).join(' ')} /usr/sbin/chroot --userspec=${uid}:${gid} ${rootfs} ${argv.map((a) => `'${a}'`).join(' ')}`,
  ].join(' && ');
}

/**
 * Runs `argv` in the image, on its rootfs mounted read-only, with the image's environment; as the
 * image's user unless `user` says otherwise; /tmp a tmpfs, or the host folder `tmpDir` (bound) when given.
 */
async function runInImage(argv: readonly string[], options: { readonly user?: string; readonly tmpDir?: string } = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return run('/usr/bin/unshare', ['--mount', 'sh', '-c', await inImageCommand(argv, options)]);
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
  it('runs dynamo-fn as a non-root user: entrypoint node /app/dist/bundles/dynamo-fn.mjs (the CLI bundle), user 65532:65532', async () => {
    const { config } = await imageConfig();
    expect(config.Entrypoint).toEqual(['/usr/local/bin/node', '/app/dist/bundles/dynamo-fn.mjs']);
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

  it('holds what the Dockerfile puts in the final image: in /app exactly that, prebuilt JavaScript only (no TypeScript, no node_modules, so no transpiler)', async () => {
    const dockerfile = await readDockerfile();
    const landed = [...dockerfile.copies.filter(({ stage }) => stage === ''), ...dockerfile.copiesFromStages].map(({ destination }) => destination);
    for (const destination of landed) expect(existsSync(path.join(out, 'rootfs', destination)), destination).toBe(true);
    const underApp = new Set(landed.filter((d) => d.startsWith('/app/')).map((d) => path.posix.relative('/app', d).split('/')[0]));
    const app = path.join(out, 'rootfs', 'app');
    expect((await readdir(app)).sort()).toEqual([...underApp].sort());
    const files = await readdir(app, { recursive: true });
    expect(files.filter((file) => file.endsWith('.ts') || file.split('/').includes('node_modules'))).toEqual([]);
    for (const name of ['dynamo-fn', 'admission', 'reconcile', 'profile', 'cleanup']) expect(files, name).toContain(`dist/bundles/${name}.mjs`);
    // Each function's V8 startup snapshot, which the chart starts, and the modules left out of it.
    for (const name of ['admission', 'reconcile', 'profile', 'cleanup']) expect(files, name).toContain(`dist/bundles/${name}.blob`);
    for (const name of ['kubeconfig-file', 'grpc-js']) expect(files, name).toContain(`dist/bundles/snapshot-${name}.cjs`);
    expect(files).toContain('dist/dgd-apply-overrides.mjs');
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

  // The chart's commands (test/integration/chart.test.ts holds the chart to them).
  const chartCommand = (name: FunctionName) => ['/nodejs/bin/node', ...functionSnapshotArgs('/app/dist/bundles', name)];

  /**
   * Starts `argv` in the image (read-only root, /tmp bound to `tmpDir`), waits until `probe`
   * answers, then stops it with SIGTERM. Out: the probe's answer, and the exit code and stderr.
   */
  async function startAndProbe(argv: readonly string[], env: readonly string[], tmpDir: string, probe: () => Promise<string | undefined>): Promise<{ answer: string; code: number | null; stderr: string }> {
    const child = spawn('/usr/bin/unshare', ['--mount', 'sh', '-c', await inImageCommand(argv, { tmpDir, env })], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      for (let attempt = 0; attempt < 1500; attempt += 1) {
        if (child.exitCode !== null) break;
        const answer = await probe().catch(() => undefined);
        if (answer !== undefined) return { answer, code: (child.kill('SIGTERM'), await exited), stderr };
        await sleep(20);
      }
      throw new Error(`no answer from ${argv.join(' ')}; stderr: ${stderr}`);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }

  it.each(['reconcile', 'profile', 'cleanup'] as const)('%s starts from its own bundle as the chart runs it (node --snapshot-blob /app/dist/bundles/<function>.blob --, the V8 startup snapshot the image\'s Node.js built from the bundle, no tsx in the image; KUBECONFIG a file, so the client-node module left out of the snapshot is loaded) on the read-only root filesystem, answers a CloudEvent for an object it reads from the API server, and drains on SIGTERM', async (name) => {
    // A stub API server: discovery, and a 404 for the object (it is gone, so the answer is an empty 2xx).
    const discovery: Record<string, { name: string; kind: string }[]> = {
      '/apis/nvidia.com/v1beta1': [{ name: 'dynamographdeployments', kind: 'DynamoGraphDeployment' }, { name: 'dynamographdeploymentrequests', kind: 'DynamoGraphDeploymentRequest' }],
      '/api/v1': [{ name: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim' }],
    };
    const requests: string[] = [];
    const stub: Server = createServer((req, res) => {
      req.resume();
      requests.push(`${req.method ?? ''} ${req.url ?? ''}`);
      const resources = discovery[(req.url ?? '').split('?')[0] ?? ''];
      res.setHeader('content-type', 'application/json');
      if (resources !== undefined) return res.end(JSON.stringify({ kind: 'APIResourceList', apiVersion: 'v1', resources: resources.map((r) => ({ ...r, namespaced: true, singularName: '', verbs: ['get'] })) }));
      res.statusCode = 404;
      return res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    const tmpDir = await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-fn-tmp-'));
    try {
      await chmod(tmpDir, 0o777);
      await writeFile(path.join(tmpDir, 'kubeconfig'), `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:${(stub.address() as AddressInfo).port}", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`, { mode: 0o644 });
      const object = { reconcile: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment' }, profile: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeploymentRequest' }, cleanup: { apiVersion: 'v1', kind: 'PersistentVolumeClaim' } }[name] ?? { apiVersion: '', kind: '' };
      const port = 20_000 + Math.floor(Math.random() * 10_000);
      const result = await startAndProbe(chartCommand(name), ['KUBECONFIG=/tmp/kubeconfig', `PORT=${port}`, ...(name === 'cleanup' ? ['DGDR_V1BETA2_ENABLED=true'] : [])], tmpDir, async () => {
        const response = await request(`http://127.0.0.1:${port}/`, {
          method: 'POST',
          headers: { 'ce-id': '1', 'ce-specversion': '1.0', 'ce-type': 'dev.knative.apiserver.ref.update', 'ce-source': 'https://127.0.0.1', 'ce-kind': object.kind, 'ce-apiversion': object.apiVersion, 'ce-name': 'gone', 'ce-namespace': 'default', 'content-type': 'application/json' },
          body: JSON.stringify({ ...object, name: 'gone', namespace: 'default' }),
        });
        return `${response.statusCode} ${await response.body.text()}`;
      });
      expect(result).toEqual({ answer: expect.stringMatching(/^20[04] $/), code: 0, stderr: '' });
      if (name !== 'cleanup') expect(requests).toContain(`GET /apis/${object.apiVersion}/namespaces/default/${object.kind.toLowerCase()}s/gone`);
    } finally {
      stub.close();
      await rm(tmpDir, { recursive: true, force: true });
    }
  });

  it('admission starts from its own bundle as the chart runs it (node --snapshot-blob /app/dist/bundles/admission.blob -- --port N --tls-cert F --tls-key F) on the read-only root filesystem and answers an AdmissionReview over TLS', async () => {
    const tmpDir = await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-fn-tmp-'));
    const certs = await generateServingCertificates();
    const tls = new Agent({ connect: { ca: certs.caPem } });
    try {
      await chmod(tmpDir, 0o777);
      await writeFile(path.join(tmpDir, 'tls.crt'), certs.certPem, { mode: 0o644 });
      await writeFile(path.join(tmpDir, 'tls.key'), certs.keyPem, { mode: 0o644 });
      const port = 20_000 + Math.floor(Math.random() * 10_000);
      const review = {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: {
          uid: 'image-test',
          kind: { group: 'nvidia.com', version: 'v1beta1', kind: 'DynamoGraphDeployment' },
          resource: { group: 'nvidia.com', version: 'v1beta1', resource: 'dynamographdeployments' },
          operation: 'CREATE',
          namespace: 'default',
          name: 'image-test',
          userInfo: { username: 'test' },
          object: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata: { name: 'image-test', namespace: 'default' }, spec: { components: [{ name: 'Frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } }] } },
        },
      };
      const result = await startAndProbe([...chartCommand('admission'), '--port', String(port), '--tls-cert', '/tmp/tls.crt', '--tls-key', '/tmp/tls.key', '--shutdown-delay-seconds', '0'], [], tmpDir, async () => {
        const response = await request(`https://127.0.0.1:${port}/validate/nvidia.com/v1beta1/dynamographdeployments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(review), dispatcher: tls });
        const body = (await response.body.json()) as { response?: { uid?: string; allowed?: boolean } };
        return JSON.stringify({ status: response.statusCode, uid: body.response?.uid, allowed: body.response?.allowed });
      });
      expect(result).toEqual({ answer: JSON.stringify({ status: 200, uid: 'image-test', allowed: true }), code: 0, stderr: '' });
    } finally {
      await tls.close();
      await rm(tmpDir, { recursive: true, force: true });
    }
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
