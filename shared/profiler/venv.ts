/**
 * The cached Python virtual environment holding the real Dynamo 1.6.1 profiler
 * (`python -m dynamo.profiler`) and the AISimulate CLI (`aisimulate`), installed from PyPI.
 *
 * Location: `${XDG_CACHE_HOME:-~/.cache}/dynamo-fn/venv/<key>/`, where `<key>` is the first 16
 * hex digits of the SHA-256 of the Python version and the two pinned requirement files in this
 * folder. A change of pins (or of the Python interpreter) changes the key, so a stale venv is
 * never reused. A venv is complete only when its `.dynamo-fn-ready` marker exists; the marker is
 * written after both CLIs answered `--help`, so an interrupted install is redone, not trusted.
 *
 * Other modules (the local Job runner, v1beta2's AISimulate runs) find the venv only through
 * {@link venvPython} and {@link venvBin}; `DYNAMO_FN_VENV_DIR` names a prebuilt venv instead.
 *
 * Source: ../shared/upstream-notes/profiler.md §3.1 (recipe: --only-binary install of the
 * dependencies, then `ai-dynamo==1.6.1` with --no-deps; the repo-root `deploy.utils` shim),
 * §3.3 (the command the Job runs).
 * @module
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** This folder: the requirement files and the `python/` shim live here. */
const PROFILER_DIR = path.dirname(fileURLToPath(import.meta.url));

/** Pinned dependencies, installed with `--only-binary=:all:`. */
export const REQUIREMENTS_FILE = path.join(PROFILER_DIR, 'requirements.txt');
/** `ai-dynamo==1.6.1`, installed with `--no-deps` after {@link REQUIREMENTS_FILE}. */
export const REQUIREMENTS_NODEPS_FILE = path.join(PROFILER_DIR, 'requirements-nodeps.txt');
/**
 * Put on `PYTHONPATH` for every profiler run: holds `deploy/utils/dynamo_deployment.py`, the
 * repo-root module `profile_sla.py` imports but the wheel does not ship (notes §3.1, problem 4).
 */
export const PROFILER_SHIM_DIR = path.join(PROFILER_DIR, 'python');

/** Env var naming a prebuilt venv; nothing is installed then. */
export const ENV_VENV_DIR = 'DYNAMO_FN_VENV_DIR';
/** Env var naming the Python interpreter the venv is created from (default `python3`). */
export const ENV_PYTHON = 'DYNAMO_FN_PYTHON';

const READY_MARKER = '.dynamo-fn-ready';
/** Written after pip finished: a verification failure (e.g. a shim fix) then needs no reinstall. */
const INSTALLED_MARKER = '.dynamo-fn-installed';

/** Progress sink (a pino logger or the CLI's line log fit it). */
export interface VenvLog {
  info(fields: object, msg: string): void;
  debug(fields: object, msg: string): void;
}

/** A failure to create or verify the venv; the message says what failed and what to do. */
export class VenvError extends Error {
  override readonly name = 'VenvError';
}

/** The cache root: `${XDG_CACHE_HOME:-~/.cache}/dynamo-fn/venv`. */
export function venvCacheRoot(env: NodeJS.ProcessEnv = process.env): string {
  const base = env['XDG_CACHE_HOME'] !== undefined && env['XDG_CACHE_HOME'] !== '' ? env['XDG_CACHE_HOME'] : path.join(os.homedir(), '.cache');
  return path.join(base, 'dynamo-fn', 'venv');
}

/** The base interpreter a new venv is made from. */
export function basePython(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env[ENV_PYTHON];
  return configured !== undefined && configured !== '' ? configured : 'python3';
}

/**
 * The cache key: 16 hex digits of SHA-256 over the interpreter's `sys.version` and the two
 * requirement files' bytes.
 * @throws VenvError when the base interpreter cannot be run.
 */
export async function venvKey(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const python = basePython(env);
  let version: string;
  try {
    version = (await execFileAsync(python, ['-c', 'import sys; print(sys.version)'])).stdout.trim();
  } catch (error) {
    throw new VenvError(`cannot run ${python} (set ${ENV_PYTHON} to a Python 3.11 interpreter): ${(error as Error).message}`);
  }
  const hash = createHash('sha256');
  hash.update(`${version}\n`);
  hash.update(await readFile(REQUIREMENTS_FILE));
  hash.update(await readFile(REQUIREMENTS_NODEPS_FILE));
  return hash.digest('hex').slice(0, 16);
}

let resolvedDir: string | undefined;

/**
 * The venv folder: `$DYNAMO_FN_VENV_DIR` when set, else the cache folder for the current key.
 * Does not check that it is installed (see {@link isVenvReady}, {@link ensureVenv}).
 */
export async function venvDir(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const prebuilt = env[ENV_VENV_DIR];
  if (prebuilt !== undefined && prebuilt !== '') return prebuilt;
  if (env === process.env && resolvedDir !== undefined) return resolvedDir;
  const dir = path.join(venvCacheRoot(env), await venvKey(env));
  if (env === process.env) resolvedDir = dir;
  return dir;
}

/** The venv's interpreter: `<venv>/bin/python`. */
export async function venvPython(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return path.join(await venvDir(env), 'bin', 'python');
}

/** A console script of the venv, e.g. `venvBin('aisimulate')` → `<venv>/bin/aisimulate`. */
export async function venvBin(name: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return path.join(await venvDir(env), 'bin', name);
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file, fsConstants.F_OK);
    return true;
  } catch {
    return false;
  }
}

/** True when the venv's ready marker exists (a prebuilt `DYNAMO_FN_VENV_DIR` only needs `bin/python`). */
export async function isVenvReady(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const dir = await venvDir(env);
  const probe = env[ENV_VENV_DIR] !== undefined && env[ENV_VENV_DIR] !== '' ? path.join(dir, 'bin', 'python') : path.join(dir, READY_MARKER);
  try {
    await access(probe, fsConstants.F_OK);
    return true;
  } catch {
    return false;
  }
}

/** Environment for running the venv's profiler offline: the shim on PYTHONPATH, no Hub access. */
export function profilerBaseEnv(): Record<string, string> {
  return { PYTHONPATH: PROFILER_SHIM_DIR, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', PYTHONUNBUFFERED: '1' };
}

/**
 * Makes sure the venv exists: a no-op when its marker is present (unless `force`), otherwise
 * creates it, installs the pinned recipe from PyPI, checks `python -m dynamo.profiler --help`
 * and `aisimulate --help`, and writes the marker.
 * @returns the venv folder.
 * @throws VenvError naming the step that failed (pip's last lines included).
 */
export async function ensureVenv(options: { readonly log: VenvLog; readonly force?: boolean }): Promise<string> {
  const { log } = options;
  const dir = await venvDir();
  if (options.force !== true && (await isVenvReady())) {
    log.debug({ dir }, 'profiler venv cached');
    return dir;
  }
  if (process.env[ENV_VENV_DIR] !== undefined && process.env[ENV_VENV_DIR] !== '') {
    throw new VenvError(`${ENV_VENV_DIR}=${dir} has no bin/python`);
  }
  await mkdir(path.dirname(dir), { recursive: true });
  const lock = `${dir}.lock`;
  if (!(await takeLock(lock))) {
    // Another process is installing this venv: wait for it rather than install over it.
    log.info({ dir, lock }, 'waiting for another install of the profiler venv');
    while (await isLockHeld(lock)) await new Promise((resolve) => setTimeout(resolve, 2000));
    if (await isVenvReady()) return dir;
    if (!(await takeLock(lock))) throw new VenvError(`cannot take the install lock ${lock}`);
  }
  try {
    return await installVenv(dir, log, options.force === true);
  } finally {
    await rm(lock, { force: true });
  }
}

/** Takes the install lock (a file holding our pid); false when a live process holds it. */
async function takeLock(lock: string): Promise<boolean> {
  try {
    await writeFile(lock, `${process.pid}\n`, { flag: 'wx' });
    return true;
  } catch {
    if (await isLockHeld(lock)) return false;
    await rm(lock, { force: true }); // left by a process that died
    return takeLock(lock);
  }
}

async function isLockHeld(lock: string): Promise<boolean> {
  let pid: number;
  try {
    pid = Number((await readFile(lock, 'utf8')).trim());
  } catch {
    return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function installVenv(dir: string, log: VenvLog, force: boolean): Promise<string> {
  const started = Date.now();
  if (force || !(await exists(path.join(dir, INSTALLED_MARKER)))) {
    log.info({ dir }, 'installing the Dynamo 1.6.1 profiler venv from PyPI (a few minutes, once)');
    await rm(dir, { recursive: true, force: true });
    await step(log, 'create venv', basePython(), ['-m', 'venv', dir]);
    const pip = path.join(dir, 'bin', 'pip');
    await step(log, 'upgrade pip', pip, ['install', '--quiet', '--upgrade', 'pip']);
    await step(log, 'install dependencies', pip, ['install', '--quiet', '--only-binary=:all:', '-r', REQUIREMENTS_FILE]);
    await step(log, 'install ai-dynamo', pip, ['install', '--quiet', '--no-deps', '-r', REQUIREMENTS_NODEPS_FILE]);
    await writeFile(path.join(dir, INSTALLED_MARKER), `${new Date().toISOString()}\n`);
  }
  await verifyVenv(dir, log);
  await writeFile(path.join(dir, READY_MARKER), `${new Date().toISOString()}\n`);
  log.info({ dir, seconds: Math.round((Date.now() - started) / 1000) }, 'profiler venv ready');
  return dir;
}

/**
 * Checks both CLIs of a venv answer `--help` with their usage line.
 * @throws VenvError when either does not.
 */
export async function verifyVenv(dir: string, log: VenvLog): Promise<void> {
  const env = { ...process.env, ...profilerBaseEnv() };
  const profiler = await capture(path.join(dir, 'bin', 'python'), ['-m', 'dynamo.profiler', '--help'], env);
  if (profiler.code !== 0 || !profiler.stdout.includes('--config')) {
    throw new VenvError(`python -m dynamo.profiler --help failed (exit ${profiler.code}): ${tail(profiler.stderr)}`);
  }
  const aisimulate = await capture(path.join(dir, 'bin', 'aisimulate'), ['--help'], env);
  if (aisimulate.code !== 0 || !aisimulate.stdout.includes('recommend')) {
    throw new VenvError(`aisimulate --help failed (exit ${aisimulate.code}): ${tail(aisimulate.stderr)}`);
  }
  log.debug({ dir }, 'dynamo.profiler and aisimulate answer --help');
}

async function step(log: VenvLog, name: string, command: string, args: readonly string[]): Promise<void> {
  log.info({ command: [path.basename(command), ...args.map((a) => (a.startsWith('/') ? path.basename(a) : a))].join(' ') }, name);
  const result = await capture(command, args, process.env);
  if (result.code !== 0) {
    throw new VenvError(`${name} failed (exit ${result.code}): ${tail(result.stderr || result.stdout)}`);
  }
}

interface Captured {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function capture(command: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<Captured> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', (error) => resolve({ code: 127, stdout, stderr: `${stderr}${error.message}` }));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

function tail(text: string): string {
  return text.trim().split('\n').slice(-15).join('\n');
}
