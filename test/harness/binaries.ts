/**
 * Builds (once) and finds the kube-apiserver, etcd, kube-controller-manager, kube-scheduler and
 * kwok binaries the integration harness runs. They are compiled from the Go consumer module in
 * `test/kube-binaries/` with the Go module proxy as the only source, because the project's
 * machines cannot reach GitHub or dl.k8s.io, and neither npm nor Debian ships kube-apiserver.
 *
 * The binaries go to a cache folder outside git keyed by the versions pinned in that module's
 * go.mod: `${XDG_CACHE_HOME:-~/.cache}/dynamo-fn/kube/<k8s>-etcd-<etcd>/`. A bump of go.mod
 * changes the key, so a stale binary is never reused. `DYNAMO_FN_KUBE_BIN_DIR` names a folder
 * of prebuilt binaries instead; nothing is built then.
 *
 * Source: ../shared/upstream-notes/envtest.md B.0, B.1 (consumer module, CGO_ENABLED=0,
 * -trimpath, version-stamping ldflags), B.2 (etcd's main package is the module root), B.4.
 * @module
 */
import { execFile, spawn } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
import { access, mkdir, readFile, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { HarnessLog } from './log.js';

/** The repository root (this file lives in `<root>/test/harness/`). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The Go consumer module the binaries are built from. */
export const KUBE_BINARIES_MODULE_DIR = path.join(REPO_ROOT, 'test', 'kube-binaries');

/**
 * The Go consumer module kwok is built from: its own, because kwok v0.8.0 needs the k8s.io v0.36
 * client libraries (../shared/upstream-notes/kwok.md "Build").
 */
export const KWOK_MODULE_DIR = path.join(REPO_ROOT, 'test', 'kwok-binary');

/** Env var naming a folder of prebuilt binaries (`etcd`, `kube-apiserver`, optionally `kube-controller-manager`, `kube-scheduler`, `kwok`). */
export const ENV_KUBE_BIN_DIR = 'DYNAMO_FN_KUBE_BIN_DIR';

/** Paths of the binaries the harness runs. */
export interface KubeBinaries {
  /** The folder holding them. */
  readonly dir: string;
  readonly etcd: string;
  readonly kubeApiserver: string;
  /** Absent only when a prebuilt `DYNAMO_FN_KUBE_BIN_DIR` does not carry it. */
  readonly kubeControllerManager: string | undefined;
  /** Absent only when a prebuilt `DYNAMO_FN_KUBE_BIN_DIR` does not carry it. */
  readonly kubeScheduler: string | undefined;
  /** The kwok binary; absent only when a prebuilt `DYNAMO_FN_KUBE_BIN_DIR` does not carry it. */
  readonly kwok: string | undefined;
  /** `v1.35.4`, as pinned in go.mod (or as reported by a prebuilt binary). */
  readonly kubernetesVersion: string;
  /** `v3.6.16`, as pinned in go.mod. */
  readonly etcdVersion: string;
}

/** The versions pinned by `test/kube-binaries/go.mod`. */
export interface PinnedVersions {
  /** `k8s.io/kubernetes`, e.g. `v1.35.4`. */
  readonly kubernetes: string;
  /** `go.etcd.io/etcd/server/v3`, e.g. `v3.6.16`. */
  readonly etcd: string;
  /** `sigs.k8s.io/kwok`, e.g. `v0.8.0` (from test/kwok-binary/go.mod). */
  readonly kwok: string;
}

/** A failure to build or find the binaries; the message says what to do. */
export class KubeBinariesError extends Error {
  override readonly name = 'KubeBinariesError';
  /** go's stderr (the tail), when a go command failed. */
  readonly goStderr: string | undefined;
  constructor(message: string, options: { cause?: unknown; goStderr?: string } = {}) {
    super(message, { cause: options.cause });
    this.goStderr = options.goStderr;
  }
}

interface BinarySpec {
  /** File name in the cache folder. */
  readonly name: 'etcd' | 'kube-apiserver' | 'kube-controller-manager' | 'kube-scheduler' | 'kwok';
  /** Main package built from the consumer module. */
  readonly goPackage: string;
  /** The consumer module it is built in. */
  readonly moduleDir: string;
  /** Whether the k8s version-stamping ldflags apply (the k8s.io/kubernetes binaries). */
  readonly isKubernetes: boolean;
  /** A substring `--version` must print for the binary to count as built from go.mod's pin. */
  readonly expectedVersion: (pinned: PinnedVersions) => string;
}

// etcd first: it is quick, and fails fast if the module graph is broken.
const BINARY_SPECS: readonly BinarySpec[] = [
  {
    name: 'etcd',
    goPackage: 'go.etcd.io/etcd/server/v3',
    moduleDir: KUBE_BINARIES_MODULE_DIR,
    isKubernetes: false,
    expectedVersion: (pinned) => `etcd Version: ${pinned.etcd.replace(/^v/, '')}`,
  },
  {
    name: 'kube-apiserver',
    goPackage: 'k8s.io/kubernetes/cmd/kube-apiserver',
    moduleDir: KUBE_BINARIES_MODULE_DIR,
    isKubernetes: true,
    expectedVersion: (pinned) => `Kubernetes ${pinned.kubernetes}`,
  },
  {
    name: 'kube-controller-manager',
    goPackage: 'k8s.io/kubernetes/cmd/kube-controller-manager',
    moduleDir: KUBE_BINARIES_MODULE_DIR,
    isKubernetes: true,
    expectedVersion: (pinned) => `Kubernetes ${pinned.kubernetes}`,
  },
  {
    name: 'kube-scheduler',
    goPackage: 'k8s.io/kubernetes/cmd/kube-scheduler',
    moduleDir: KUBE_BINARIES_MODULE_DIR,
    isKubernetes: true,
    expectedVersion: (pinned) => `Kubernetes ${pinned.kubernetes}`,
  },
  {
    name: 'kwok',
    goPackage: 'sigs.k8s.io/kwok/cmd/kwok',
    moduleDir: KWOK_MODULE_DIR,
    isKubernetes: false,
    // `kwok version v0.8.0 go1.26.8 (linux/amd64)`: the version is a constant of the module.
    expectedVersion: (pinned) => `${pinned.kwok} go`,
  },
];

const HEARTBEAT_MS = 30_000;
const VERSION_TIMEOUT_MS = 30_000;

/**
 * Reads the pinned versions of k8s.io/kubernetes and go.etcd.io/etcd/server/v3 from the
 * consumer module's go.mod, and of sigs.k8s.io/kwok from kwok's. Throws KubeBinariesError when
 * one is missing.
 */
export async function readPinnedVersions(
  moduleDir: string = KUBE_BINARIES_MODULE_DIR,
  kwokModuleDir: string = KWOK_MODULE_DIR,
): Promise<PinnedVersions> {
  const find = async (dir: string, modulePath: string): Promise<string> => {
    const goMod = await readFile(path.join(dir, 'go.mod'), 'utf8');
    const escaped = modulePath.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    const match = new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v[^\\s]+)`, 'm').exec(goMod);
    if (match?.[1] === undefined) {
      throw new KubeBinariesError(`cannot find a require of ${modulePath} in ${path.join(dir, 'go.mod')}`);
    }
    return match[1];
  };
  return {
    kubernetes: await find(moduleDir, 'k8s.io/kubernetes'),
    etcd: await find(moduleDir, 'go.etcd.io/etcd/server/v3'),
    kwok: await find(kwokModuleDir, 'sigs.k8s.io/kwok'),
  };
}

/** `${XDG_CACHE_HOME:-~/.cache}/dynamo-fn`. */
function cacheRootOf(env: NodeJS.ProcessEnv): string {
  const xdg = env['XDG_CACHE_HOME'];
  return path.join(xdg !== undefined && xdg !== '' ? xdg : path.join(os.homedir(), '.cache'), 'dynamo-fn');
}

/** The cache folder for one pin: `${XDG_CACHE_HOME:-~/.cache}/dynamo-fn/kube/<k8s>-etcd-<etcd>`. */
export function cacheDirFor(pinned: PinnedVersions, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheRootOf(env), 'kube', `${pinned.kubernetes}-etcd-${pinned.etcd}`);
}

/** kwok's cache folder: `${XDG_CACHE_HOME:-~/.cache}/dynamo-fn/kwok/<kwok>` (its own pin, its own key). */
export function kwokCacheDirFor(pinned: PinnedVersions, env: NodeJS.ProcessEnv = process.env): string {
  return path.join(cacheRootOf(env), 'kwok', pinned.kwok);
}

export interface EnsureKubeBinariesOptions {
  readonly log: HarnessLog;
  /** Rebuild even when the cached binaries answer `--version`. */
  readonly force?: boolean;
  /** Defaults to process.env; read for DYNAMO_FN_KUBE_BIN_DIR, XDG_CACHE_HOME, PATH. */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * Returns the paths of etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok,
 * building whichever is missing (or does not answer `--version` with go.mod's pin) from
 * `test/kube-binaries` (kwok from `test/kwok-binary`, cached in its own folder).
 * Idempotent: when all are present this takes about a second.
 *
 * Build: `CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X .../version.gitVersion=..." -o`
 * a temporary file, renamed into place, so an interrupted build never leaves a broken binary.
 * A cold build takes minutes (kube-apiserver is the largest); progress is logged, with a
 * heartbeat every 30 s while go runs.
 *
 * With DYNAMO_FN_KUBE_BIN_DIR set, nothing is built: the folder must hold working `etcd` and
 * `kube-apiserver` (`kube-controller-manager` is optional).
 *
 * Failures: KubeBinariesError when go is missing, a module cannot be downloaded (go's stderr is
 * in the message) or a build fails.
 * Source: ../shared/upstream-notes/envtest.md B.1, B.2, B.4.
 */
export async function ensureKubeBinaries(options: EnsureKubeBinariesOptions): Promise<KubeBinaries> {
  const { log } = options;
  const env = options.env ?? process.env;
  const overrideDir = env[ENV_KUBE_BIN_DIR];
  if (overrideDir !== undefined && overrideDir !== '') {
    return usePrebuilt(path.resolve(overrideDir), log);
  }

  const pinned = await readPinnedVersions();
  const dir = cacheDirFor(pinned, env);
  const kwokDir = kwokCacheDirFor(pinned, env);
  const pathOf = (name: BinarySpec['name']) => path.join(name === 'kwok' ? kwokDir : dir, name);
  const binaries: KubeBinaries = {
    dir,
    etcd: pathOf('etcd'),
    kubeApiserver: pathOf('kube-apiserver'),
    kubeControllerManager: pathOf('kube-controller-manager'),
    kubeScheduler: pathOf('kube-scheduler'),
    kwok: pathOf('kwok'),
    kubernetesVersion: pinned.kubernetes,
    etcdVersion: pinned.etcd,
  };

  const missing: BinarySpec[] = [];
  for (const spec of BINARY_SPECS) {
    const isCurrent =
      options.force !== true && (await answersVersion(pathOf(spec.name), spec.expectedVersion(pinned)));
    if (!isCurrent) missing.push(spec);
  }
  if (missing.length === 0) {
    log.info({ dir, kubernetes: pinned.kubernetes, etcd: pinned.etcd, kwok: pinned.kwok }, 'Found kube binaries in cache');
    return binaries;
  }

  const go = await findGo(env);
  await mkdir(dir, { recursive: true });
  await mkdir(kwokDir, { recursive: true });
  log.info(
    { dir, build: missing.map((spec) => spec.name).join(','), go: go.path, goVersion: go.version },
    'Building kube binaries from the Go module proxy',
  );
  // Said before the first `go build` starts, so nobody takes a long first build for a hang.
  log.info(
    { binaries: missing.length },
    'This first build compiles Kubernetes and kwok from source: it takes tens of minutes on a small machine (about 6 min on an idle 2-core machine with empty caches, over 30 min on a busy one); each binary is cached, so later runs take seconds',
  );
  const started = Date.now();
  for (const moduleDir of new Set(missing.map((spec) => spec.moduleDir))) {
    await downloadModules(go.path, moduleDir, env, log);
  }
  for (const [index, spec] of missing.entries()) {
    await buildBinary(go.path, spec, pinned, pathOf(spec.name), env, log, `${index + 1}/${missing.length}`);
  }
  log.info({ dir, elapsedSeconds: secondsSince(started) }, 'Built kube binaries');
  return binaries;
}

async function usePrebuilt(dir: string, log: HarnessLog): Promise<KubeBinaries> {
  const etcd = path.join(dir, 'etcd');
  const kubeApiserver = path.join(dir, 'kube-apiserver');
  const kcm = path.join(dir, 'kube-controller-manager');
  const apiserverVersion = await runVersion(kubeApiserver);
  const etcdVersion = await runVersion(etcd);
  if (apiserverVersion === undefined || etcdVersion === undefined) {
    throw new KubeBinariesError(
      `${ENV_KUBE_BIN_DIR}=${dir} must hold working etcd and kube-apiserver binaries ` +
        `(etcd: ${etcdVersion === undefined ? 'missing or broken' : 'ok'}, ` +
        `kube-apiserver: ${apiserverVersion === undefined ? 'missing or broken' : 'ok'}); ` +
        `unset it to build them with 'npm run kube:build'`,
    );
  }
  const hasKcm = (await runVersion(kcm)) !== undefined;
  const scheduler = path.join(dir, 'kube-scheduler');
  const kwok = path.join(dir, 'kwok');
  const hasScheduler = (await runVersion(scheduler)) !== undefined;
  const hasKwok = (await runVersion(kwok)) !== undefined;
  const kubernetesVersion = /Kubernetes (v\S+)/.exec(apiserverVersion)?.[1] ?? 'unknown';
  const etcdReported = /etcd Version: (\S+)/.exec(etcdVersion)?.[1];
  log.info(
    { dir, kubernetes: kubernetesVersion, etcd: etcdReported, kubeControllerManager: hasKcm, kubeScheduler: hasScheduler, kwok: hasKwok },
    'Using prebuilt kube binaries',
  );
  return {
    dir,
    etcd,
    kubeApiserver,
    kubeControllerManager: hasKcm ? kcm : undefined,
    kubeScheduler: hasScheduler ? scheduler : undefined,
    kwok: hasKwok ? kwok : undefined,
    kubernetesVersion,
    etcdVersion: etcdReported === undefined ? 'unknown' : `v${etcdReported}`,
  };
}

/** Runs `<binary> --version`; the output, or undefined when the file is absent or fails. */
async function runVersion(binary: string): Promise<string | undefined> {
  try {
    await access(binary, fsConstants.X_OK);
  } catch {
    return undefined;
  }
  return new Promise((resolve) => {
    execFile(binary, ['--version'], { timeout: VERSION_TIMEOUT_MS }, (error, stdout, stderr) => {
      resolve(error === null ? `${stdout}${stderr}` : undefined);
    });
  });
}

async function answersVersion(binary: string, expected: string): Promise<boolean> {
  const output = await runVersion(binary);
  return output !== undefined && output.includes(expected);
}

interface GoTool {
  readonly path: string;
  readonly version: string;
}

/** Finds `go` on PATH, else in the usual install folders (/usr/local/go/bin, ~/go/bin...). */
async function findGo(env: NodeJS.ProcessEnv): Promise<GoTool> {
  const fromPath = (env['PATH'] ?? '').split(path.delimiter).filter((entry) => entry !== '');
  const candidates = [
    ...fromPath.map((entry) => path.join(entry, 'go')),
    '/usr/local/go/bin/go',
    '/usr/lib/go/bin/go',
    path.join(os.homedir(), 'go', 'bin', 'go'),
    path.join(os.homedir(), 'sdk', 'go', 'bin', 'go'),
  ];
  for (const candidate of candidates) {
    const version = await new Promise<string | undefined>((resolve) => {
      execFile(candidate, ['version'], { timeout: VERSION_TIMEOUT_MS, env }, (error, stdout) => {
        resolve(error === null ? stdout.trim() : undefined);
      });
    });
    if (version !== undefined) return { path: candidate, version };
  }
  throw new KubeBinariesError(
    'cannot find the go command on PATH or in /usr/local/go/bin: install Go 1.26 or newer ' +
      '(Debian\'s golang-go is too old), or set DYNAMO_FN_KUBE_BIN_DIR to a folder of prebuilt ' +
      'etcd and kube-apiserver binaries',
  );
}

function goEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  // Static binaries, as the official server builds are (envtest.md B.1 "cgo and build tags").
  return { ...env, CGO_ENABLED: '0' };
}

/** `go mod download`: fails early and clearly when the module proxy does not serve something. */
async function downloadModules(go: string, moduleDir: string, env: NodeJS.ProcessEnv, log: HarnessLog): Promise<void> {
  const started = Date.now();
  log.info({ module: moduleDir }, 'Downloading Go modules');
  const result = await runGo(go, moduleDir, ['mod', 'download'], env, log, 'go mod download');
  if (result.code !== 0) {
    throw new KubeBinariesError(
      `cannot download the Go modules of ${moduleDir} (go mod download exited ${result.code}); ` +
        `check GOPROXY (${env['GOPROXY'] ?? 'default'}) and the network. go said:\n${result.stderr}`,
      { goStderr: result.stderr },
    );
  }
  log.info({ elapsedSeconds: secondsSince(started) }, 'Downloaded Go modules');
}

function ldflags(pinned: PinnedVersions): string {
  const match = /^v(\d+)\.(\d+)\./.exec(pinned.kubernetes);
  const major = match?.[1] ?? '';
  const minor = match?.[2] ?? '';
  const buildDate = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  // Stamp the version the way k8s does (envtest.md B.1 "Version stamping"); without it the
  // binaries report v0.0.0-master. client-go's copy is stamped too, which is harmless.
  const stamps = ['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) => [
    `-X ${pkg}.gitVersion=${pinned.kubernetes}`,
    `-X ${pkg}.gitMajor=${major}`,
    `-X ${pkg}.gitMinor=${minor}`,
    `-X ${pkg}.gitTreeState=clean`,
    `-X ${pkg}.buildDate=${buildDate}`,
  ]);
  return ['-s', '-w', ...stamps].join(' ');
}

async function buildBinary(
  go: string,
  spec: BinarySpec,
  pinned: PinnedVersions,
  target: string,
  env: NodeJS.ProcessEnv,
  log: HarnessLog,
  step: string,
): Promise<void> {
  const started = Date.now();
  const partial = `${target}.partial-${process.pid}`;
  log.info({ binary: spec.name, step, goPackage: spec.goPackage }, 'Building binary');
  const flags = spec.isKubernetes ? ldflags(pinned) : '-s -w';
  const args = ['build', '-trimpath', '-ldflags', flags, '-o', partial, spec.goPackage];
  const result = await runGo(go, spec.moduleDir, args, env, log, spec.name);
  if (result.code !== 0) {
    await rm(partial, { force: true });
    const isDownload = /(?:downloading|verifying|reading|proxy|dial tcp|unknown revision|410 Gone|404 Not Found)/i.test(
      result.stderr,
    );
    throw new KubeBinariesError(
      `cannot build ${spec.name} (go build exited ${result.code})` +
        (isDownload ? '; a module could not be downloaded from the Go module proxy' : '') +
        `. go said:\n${result.stderr}`,
      { goStderr: result.stderr },
    );
  }
  const version = await runVersion(partial);
  if (version === undefined || !version.includes(spec.expectedVersion(pinned))) {
    await rm(partial, { force: true });
    throw new KubeBinariesError(
      `built ${spec.name} but its --version does not report "${spec.expectedVersion(pinned)}": ${version ?? 'it did not run'}`,
    );
  }
  await rename(partial, target);
  log.info(
    { binary: spec.name, step, elapsedSeconds: secondsSince(started), version: firstLine(version) },
    'Built binary',
  );
}

interface GoResult {
  readonly code: number;
  /** The last 8 KB of stderr. */
  readonly stderr: string;
}

/** Runs go in the consumer module with a heartbeat log line every 30 s. */
function runGo(
  go: string,
  moduleDir: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  log: HarnessLog,
  what: string,
): Promise<GoResult> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(go, args, {
      cwd: moduleDir,
      env: goEnv(env),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-8192);
    });
    const heartbeat = setInterval(() => {
      log.info({ what, elapsedSeconds: secondsSince(started) }, 'Still running go');
    }, HEARTBEAT_MS);
    // If this process is interrupted, do not leave a compiler behind.
    const stopChild = () => child.kill('SIGTERM');
    process.once('exit', stopChild);
    child.on('error', (error) => {
      clearInterval(heartbeat);
      process.removeListener('exit', stopChild);
      reject(new KubeBinariesError(`cannot run ${go}: ${error.message}`, { cause: error }));
    });
    child.on('close', (code, signal) => {
      clearInterval(heartbeat);
      process.removeListener('exit', stopChild);
      resolve({ code: code ?? (signal === null ? 1 : 128), stderr: stderr.trim() });
    });
  });
}

function secondsSince(startedMs: number): number {
  return Math.round((Date.now() - startedMs) / 100) / 10;
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0]?.trim() ?? '';
}
