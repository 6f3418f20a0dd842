/**
 * Builds (once) and finds the `helm` command the chart tests, `dynamo-fn install` and
 * `dynamo-fn dev --chart` run, and fetches cert-manager's CRDs for the test API server. Both
 * come from the Go module proxy alone (no GitHub release download is reachable here):
 *
 * - helm: `go build helm.sh/helm/v3/cmd/helm` in the consumer module `test/helm-binary/`
 *   (its go.mod pins helm and lifts the k8s.io libraries to the kube binaries' v0.35.4, so the
 *   Go build cache is shared), into `${XDG_CACHE_HOME:-~/.cache}/dynamo-fn/helm/<version>/helm`.
 *   Stamped with its version and the Kubernetes version `helm template` assumes (helm's own
 *   Makefile sets both with -X).
 * - cert-manager CRDs: `go mod download github.com/cert-manager/cert-manager@<version>`; the
 *   module ships them in `deploy/crds/` (plain CustomResourceDefinitions, "for reference,
 *   development and testing"); copied to `.../dynamo-fn/cert-manager/<version>/`.
 *
 * Cold build measured on this 2-core machine: 118 s with an empty GOCACHE and the modules
 * already downloaded (about 10 s more to download helm's own modules).
 * @module
 */
import { execFile, spawn } from 'node:child_process';
import { constants as fsConstants, existsSync } from 'node:fs';
import { access, copyFile, mkdir, readFile, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import type { Kube, KubeObject } from '../../shared/kube/index.js';
import { REPO_ROOT } from './binaries.js';
import { loadCrds } from './crds.js';
import type { HarnessLog } from './log.js';

/** The Go consumer module helm is built from. */
export const HELM_MODULE_DIR = path.join(REPO_ROOT, 'test', 'helm-binary');

/** The cert-manager release whose CRDs the tests install (Go module github.com/cert-manager/cert-manager). */
export const CERT_MANAGER_VERSION = 'v1.21.2';

/** The cert-manager CRDs the chart uses (Issuer, Certificate) and those they reference. */
export const CERT_MANAGER_CRD_FILES = [
  'cert-manager.io_certificaterequests.yaml',
  'cert-manager.io_certificates.yaml',
  'cert-manager.io_clusterissuers.yaml',
  'cert-manager.io_issuers.yaml',
] as const;

/** Env var naming a helm binary to use instead (nothing is built then). */
export const ENV_HELM = 'DYNAMO_FN_HELM';

/** The Kubernetes version `helm template` and `helm lint` assume without a cluster (the harness's). */
const HELM_KUBE_VERSION = { major: '1', minor: '35' } as const;

/** A failure to build or find helm or the cert-manager CRDs; the message says what to do. */
export class HelmToolError extends Error {
  override readonly name = 'HelmToolError';
}

function cacheRoot(env: NodeJS.ProcessEnv): string {
  const xdg = env['XDG_CACHE_HOME'];
  return path.join(xdg !== undefined && xdg !== '' ? xdg : path.join(os.homedir(), '.cache'), 'dynamo-fn');
}

/** The helm version pinned by `test/helm-binary/go.mod`, e.g. `v3.20.2`. */
export async function pinnedHelmVersion(moduleDir: string = HELM_MODULE_DIR): Promise<string> {
  const goMod = await readFile(path.join(moduleDir, 'go.mod'), 'utf8');
  const match = /^\s*(?:require\s+)?helm\.sh\/helm\/v3\s+(v\S+)/m.exec(goMod);
  if (match?.[1] === undefined) throw new HelmToolError(`cannot find a require of helm.sh/helm/v3 in ${moduleDir}/go.mod`);
  return match[1];
}

/**
 * The path of a working helm: `$DYNAMO_FN_HELM` if set, else (with `preferPath`) a helm 3 on
 * PATH, else the cached build for go.mod's pin,
 * building it first when missing or when it does not report that version.
 * Failures: HelmToolError when go is missing or the build fails (go's stderr in the message).
 */
export async function ensureHelm(options: {
  readonly log: HarnessLog;
  readonly env?: NodeJS.ProcessEnv;
  readonly force?: boolean;
  /** Use a helm 3 found on PATH before the cached build (`install`, `dev --chart`); the tests pin the build. */
  readonly preferPath?: boolean;
}): Promise<string> {
  const env = options.env ?? process.env;
  const override = env[ENV_HELM];
  if (override !== undefined && override !== '') {
    if ((await helmVersion(override)) === undefined) throw new HelmToolError(`${ENV_HELM}=${override} is not a working helm`);
    return override;
  }
  if (options.preferPath === true && options.force !== true) {
    const onPath = await findHelmOnPath(env);
    if (onPath !== undefined) {
      options.log.info({ helm: onPath.helm, version: onPath.version }, 'Found helm on PATH');
      return onPath.helm;
    }
  }
  const version = await pinnedHelmVersion();
  const dir = path.join(cacheRoot(env), 'helm', version);
  const helm = path.join(dir, 'helm');
  if (options.force !== true && (await helmVersion(helm))?.includes(`Version:"${version}"`) === true) {
    options.log.info({ helm, version }, 'Found helm in cache');
    return helm;
  }
  await mkdir(dir, { recursive: true });
  const partial = `${helm}.partial-${process.pid}`;
  const ldflags = [
    '-s',
    '-w',
    `-X helm.sh/helm/v3/internal/version.version=${version}`,
    `-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=${HELM_KUBE_VERSION.major}`,
    `-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=${HELM_KUBE_VERSION.minor}`,
    `-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=${HELM_KUBE_VERSION.major}`,
    `-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=${HELM_KUBE_VERSION.minor}`,
  ].join(' ');
  const started = Date.now();
  options.log.info({ module: HELM_MODULE_DIR, version }, 'Building helm from the Go module proxy');
  const result = await runGo(['build', '-trimpath', '-ldflags', ldflags, '-o', partial, 'helm.sh/helm/v3/cmd/helm'], HELM_MODULE_DIR, env, options.log);
  if (result.code !== 0) {
    await rm(partial, { force: true });
    throw new HelmToolError(`cannot build helm (go build exited ${result.code}). go said:\n${result.stderr}`);
  }
  await rename(partial, helm);
  options.log.info({ helm, elapsedSeconds: Math.round((Date.now() - started) / 1000) }, 'Built helm');
  return helm;
}

/**
 * The folder holding cert-manager's CRD files (CERT_MANAGER_CRD_FILES), downloading the
 * cert-manager module through the Go module proxy when the cache lacks them.
 * Failures: HelmToolError when go is missing or the download fails.
 */
export async function ensureCertManagerCrds(options: { readonly log: HarnessLog; readonly env?: NodeJS.ProcessEnv }): Promise<string> {
  const env = options.env ?? process.env;
  const dir = path.join(cacheRoot(env), 'cert-manager', CERT_MANAGER_VERSION);
  const present = await Promise.all(CERT_MANAGER_CRD_FILES.map((file) => exists(path.join(dir, file))));
  if (present.every(Boolean)) return dir;
  await mkdir(dir, { recursive: true });
  const result = await runGo(['mod', 'download', '-json', `github.com/cert-manager/cert-manager@${CERT_MANAGER_VERSION}`], dir, env, options.log);
  if (result.code !== 0) throw new HelmToolError(`cannot download cert-manager ${CERT_MANAGER_VERSION} from the Go module proxy: ${result.stdout}${result.stderr}`);
  const moduleDir = (JSON.parse(result.stdout) as { Dir?: string }).Dir;
  if (moduleDir === undefined) throw new HelmToolError(`go mod download gave no folder for cert-manager ${CERT_MANAGER_VERSION}`);
  for (const file of CERT_MANAGER_CRD_FILES) await copyFile(path.join(moduleDir, 'deploy', 'crds', file), path.join(dir, file));
  options.log.info({ dir, version: CERT_MANAGER_VERSION }, 'Fetched cert-manager CRDs');
  return dir;
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file, fsConstants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** `helm version` output, or undefined when the file is absent or fails. */
/**
 * The first `helm` on PATH that is a helm 3 (the chart is an apiVersion v2 chart with a
 * values.schema.json, which every helm 3 reads), with its version; undefined when there is none.
 */
export async function findHelmOnPath(env: NodeJS.ProcessEnv): Promise<{ readonly helm: string; readonly version: string } | undefined> {
  for (const dir of (env['PATH'] ?? '').split(path.delimiter).filter((entry) => entry !== '')) {
    const helm = path.join(dir, 'helm');
    if (!(await exists(helm))) continue;
    const version = await new Promise<string | undefined>((resolve) => {
      execFile(helm, ['version', '--template', '{{.Version}}'], { timeout: 30_000 }, (error, stdout) => resolve(error === null ? stdout.trim() : undefined));
    });
    if (version !== undefined && /^v3\.\d+\.\d+/.test(version)) return { helm, version };
  }
  return undefined;
}

async function helmVersion(helm: string): Promise<string | undefined> {
  if (!(await exists(helm))) return undefined;
  return new Promise((resolve) => {
    execFile(helm, ['version'], { timeout: 30_000 }, (error, stdout) => resolve(error === null ? stdout : undefined));
  });
}

function findGo(env: NodeJS.ProcessEnv): string {
  const dirs = [...(env['PATH'] ?? '').split(path.delimiter), '/usr/local/go/bin'].filter((dir) => dir !== '');
  const go = dirs.map((dir) => path.join(dir, 'go')).find((candidate) => existsSync(candidate));
  if (go === undefined) {
    throw new HelmToolError(`cannot find the go command on PATH or in /usr/local/go/bin: install Go 1.26 or newer, or set ${ENV_HELM} to a helm binary`);
  }
  return go;
}

function runGo(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, log: HarnessLog): Promise<{ code: number; stdout: string; stderr: string }> {
  const go = findGo(env);
  return new Promise((resolve, reject) => {
    const child = spawn(go, args, { cwd, env: { ...env, CGO_ENABLED: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-8192)));
    const heartbeat = setInterval(() => log.info({ what: `go ${args[0] ?? ''}` }, 'Still running go'), 30_000);
    const stop = () => child.kill('SIGTERM');
    process.once('exit', stop);
    child.on('error', (error) => {
      clearInterval(heartbeat);
      process.removeListener('exit', stop);
      reject(new HelmToolError(`cannot run ${go}: ${error.message}`, { cause: error }));
    });
    child.on('close', (code) => {
      clearInterval(heartbeat);
      process.removeListener('exit', stop);
      resolve({ code: code ?? 1, stdout, stderr: stderr.trim() });
    });
  });
}

/** What one helm run printed and how it ended. */
export interface HelmResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `helm <args>` (no shell), with KUBECONFIG set when given and helm's own state (cache,
 * config, data) kept in `${XDG_CACHE_HOME:-~/.cache}/dynamo-fn/helm-home`, never the user's.
 * Never rejects on a non-zero exit: the caller reads `code`.
 */
export function runHelm(helm: string, args: readonly string[], options: { readonly kubeconfig?: string; readonly env?: NodeJS.ProcessEnv; readonly timeoutMs?: number } = {}): Promise<HelmResult> {
  const env = options.env ?? process.env;
  const home = path.join(cacheRoot(env), 'helm-home');
  return new Promise((resolve) => {
    execFile(
      helm,
      [...args],
      {
        timeout: options.timeoutMs ?? 120_000,
        maxBuffer: 64 * 1024 * 1024,
        env: {
          ...env,
          ...(options.kubeconfig === undefined ? {} : { KUBECONFIG: options.kubeconfig }),
          HELM_CACHE_HOME: path.join(home, 'cache'),
          HELM_CONFIG_HOME: path.join(home, 'config'),
          HELM_DATA_HOME: path.join(home, 'data'),
        },
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The chart folder of this repository. */
export const CHART_DIR = path.join(REPO_ROOT, 'infra', 'chart');

/**
 * Installs cert-manager's CRDs (ensureCertManagerCrds) with server-side apply and waits until
 * Issuer and Certificate are Established (60 s at most). Failures: HelmToolError from the
 * download, the kube client's errors, an Error on the timeout.
 */
export async function installCertManagerCrds(kube: Kube, log: HarnessLog): Promise<void> {
  const dir = await ensureCertManagerCrds({ log });
  for (const { crd } of await loadCrds(CERT_MANAGER_CRD_FILES.map((file) => path.join(dir, file)))) {
    await kube.apply(crd as unknown as KubeObject, { force: true });
  }
  const deadline = Date.now() + 60_000;
  for (const name of ['issuers.cert-manager.io', 'certificates.cert-manager.io']) {
    for (;;) {
      const crd = await kube.get({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name });
      const conditions = (crd?.['status'] as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      if (conditions.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`timed out waiting for CRD ${name} to be Established`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
