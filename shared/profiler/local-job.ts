/**
 * Runs a profiling Job's `profiler` container on this machine, against the cached venv
 * (shared/profiler/venv.ts), then does what the Job's `output-copier` does: builds the
 * `dgdr-output-<name>` ConfigMap from the whole `profiler_status.yaml` (shared/profiler/output.ts).
 *
 * What is kept from the Job: the container's command (its `python` becomes the venv's), args and
 * literal env (`DGDR_NAME`, `DGDR_NAMESPACE`, `DGDR_UID`, ...); the init container
 * `dgd-override-installer` (only with `spec.overrides.dgd`), run first as our image runs its
 * `/dgd-apply-overrides --install-to <path>`: the self-contained tool (Node.js + the bundle
 * `dist/dgd-apply-overrides.mjs`, shared/profiler/override-tool.ts) installed into the emptyDir
 * `dgd-override-tool`, which the profiler then runs through the Job's own
 * `DYNAMO_DGD_APPLY_OVERRIDES_BIN=/opt/dynamo/bin/dgd-apply-overrides`, as in the cluster. What is
 * local: each emptyDir mount (`/data`, `/opt/dynamo/bin`) is a folder under the run's work folder
 * (args and env naming it are rewritten), shared by the containers mounting it; the run is
 * offline: `HF_HOME` is a Hugging Face cache seeded with the
 * model's config.json that AISimulate ships, `HF_HUB_OFFLINE=1`, `TRANSFORMERS_OFFLINE=1`; the
 * repo-root `deploy.utils` shim is on `PYTHONPATH`; `WORKSPACE_DIR` is the container's
 * `workingDir` (`/workspace`), so generated paths match the in-cluster Job. `valueFrom` env
 * (the Hugging Face token Secret) is not resolved: nothing is downloaded.
 *
 * Source: ../shared/upstream-notes/profiler.md §1.1-§1.3 (the Job contract), §3.2 (offline model
 * data), §3.3 (the command and environment).
 * @module
 */
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync, watch, type FSWatcher } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

import { findOverrideToolBundle, installOverrideTool } from './override-tool.js';
import { FINAL_CONFIG_FILE, finalOutputConfigMap, parseProfilerStatus, PROFILER_STATUS_FILE, type DgdrRef, type OutputCopierResult, type ProfilerStatus } from './output.js';
import { profilerBaseEnv, venvDir } from './venv.js';

/** The container of a profiling Job that runs the profiler (upstream `ContainerNameProfiler`). */
export const PROFILER_CONTAINER_NAME = 'profiler';
/** Env the Job sets when `spec.overrides.dgd` is present (profiler.md §1.2). */
export const ENV_OVERRIDE_TOOL = 'DYNAMO_DGD_APPLY_OVERRIDES_BIN';
/** The init container installing the override tool, and the command our image runs for it (profiler.md §1.4). */
export const OVERRIDE_TOOL_INSTALLER_NAME = 'dgd-override-installer';
export const OVERRIDE_TOOL_INSTALLER_COMMAND = '/dgd-apply-overrides';

const EnvVarSchema = z.object({ name: z.string(), value: z.string().optional(), valueFrom: z.unknown().optional() });
const ContainerSchema = z.object({
  name: z.string(),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  env: z.array(EnvVarSchema).optional(),
  workingDir: z.string().optional(),
  volumeMounts: z.array(z.object({ name: z.string(), mountPath: z.string() })).optional(),
});
const JobSchema = z.object({
  apiVersion: z.literal('batch/v1'),
  kind: z.literal('Job'),
  metadata: z.object({ name: z.string(), namespace: z.string().optional() }),
  spec: z.object({
    template: z.object({
      spec: z.object({
        initContainers: z.array(ContainerSchema).optional(),
        containers: z.array(ContainerSchema),
        volumes: z.array(z.object({ name: z.string(), emptyDir: z.unknown().optional() }).loose()).optional(),
      }),
    }),
  }),
});

/** A Job this runner cannot run (no profiler container, another command); the message says why. */
export class LocalJobError extends Error {
  override readonly name = 'LocalJobError';
}

export interface LocalJobOptions {
  /** Where the run's folders go (output, HF cache, logs); default a new temporary folder. */
  readonly workDir?: string;
  /** Called with each new `profiler_status.yaml` phase while the profiler runs. */
  readonly onStatus?: (status: ProfilerStatus) => void;
  /** The override tool bundle (`npm run build`'s `dist/dgd-apply-overrides.mjs`) the init container runs, as our image does; default none: the installed tool runs this checkout. */
  readonly overrideToolBundle?: string;
  /** Ends the profiler after this long (SIGKILL); default 900 s. */
  readonly timeoutSeconds?: number;
  /** How often the status file is read while the profiler runs; default 500 ms. */
  readonly pollIntervalMs?: number;
}

export interface LocalJobRun {
  /** The DGDR the Job profiles (from its `DGDR_NAME`/`DGDR_NAMESPACE`/`DGDR_UID` env). */
  readonly dgdr: DgdrRef;
  /** The profiler's exit code (0 success, 1 failure; 137 when the timeout ended it). */
  readonly exitCode: number;
  /** The local folder standing for the profiler's `--output-dir`. */
  readonly outputDir: string;
  /** The profiler's stdout and stderr. */
  readonly logFile: string;
  /** What the output-copier would write (or its own failure). */
  readonly output: OutputCopierResult;
  /**
   * Removes the run's folder (output, HF cache, log) when it is the temporary one this run made;
   * a `workDir` the caller gave is kept. Callers remove it once they no longer need the files
   * (a failed run's log is kept for the user to read).
   */
  removeWorkDir(): Promise<void>;
}

/** The profiler's command and environment for one Job, resolved for this machine. */
export interface LocalProfilerCommand {
  readonly dgdr: DgdrRef;
  readonly executable: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly outputDir: string;
  /** `model` of the `--config` spec, when it has one. */
  readonly model: string | undefined;
  /** Where the init container `dgd-override-installer` installs the tool (local path), when the Job has it. */
  readonly overrideToolInstall: string | undefined;
}

/**
 * Resolves the Job's profiler container (and its override-tool init container) into a local
 * command (see the module docstring). In: a batch/v1 Job (parsed JSON), the venv folder, the work
 * folder. Failures: LocalJobError naming what is missing, or an installer that does not run
 * `/dgd-apply-overrides --install-to <path>` on an emptyDir. Pure.
 */
export function localProfilerCommand(job: unknown, venv: string, workDir: string): LocalProfilerCommand {
  const parsed = JobSchema.safeParse(job);
  if (!parsed.success) throw new LocalJobError(`not a batch/v1 Job with a pod template: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const { metadata, spec } = parsed.data;
  const container = spec.template.spec.containers.find((c) => c.name === PROFILER_CONTAINER_NAME);
  if (container === undefined) throw new LocalJobError(`Job ${metadata.name} has no container named ${PROFILER_CONTAINER_NAME}`);
  const command = [...(container.command ?? []), ...(container.args ?? [])];
  const [program, flag, module_, ...rest] = command;
  if ((program !== 'python' && program !== 'python3') || flag !== '-m' || module_ !== 'dynamo.profiler') {
    throw new LocalJobError(`Job ${metadata.name}: container ${PROFILER_CONTAINER_NAME} runs ${JSON.stringify(command.slice(0, 3))}, not python -m dynamo.profiler`);
  }
  const emptyDirs = new Set((spec.template.spec.volumes ?? []).filter((v) => v.emptyDir !== undefined).map((v) => v.name));
  const localPath = localPathsOf(container, emptyDirs, workDir);
  const args = ['-m', 'dynamo.profiler', ...rest.map(localPath)];
  const outputIndex = args.indexOf('--output-dir');
  const outputDir = outputIndex >= 0 && args[outputIndex + 1] !== undefined ? (args[outputIndex + 1] as string) : path.join(workDir, 'profiling_results');

  const env: Record<string, string> = {};
  for (const variable of container.env ?? []) if (variable.value !== undefined) env[variable.name] = variable.value;
  // The Job's own path to the tool, in the emptyDir the init container installs into.
  if (env[ENV_OVERRIDE_TOOL] !== undefined) env[ENV_OVERRIDE_TOOL] = localPath(env[ENV_OVERRIDE_TOOL]);
  const dgdr = { name: env['DGDR_NAME'] ?? '', namespace: env['DGDR_NAMESPACE'] ?? metadata.namespace ?? 'default', uid: env['DGDR_UID'] ?? '' };
  if (dgdr.name === '') throw new LocalJobError(`Job ${metadata.name}: container ${PROFILER_CONTAINER_NAME} has no DGDR_NAME env`);
  Object.assign(env, profilerBaseEnv(), {
    HF_HOME: path.join(workDir, 'hf'),
    WORKSPACE_DIR: container.workingDir ?? '/workspace',
    HOME: process.env['HOME'] ?? workDir,
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  });
  const overrideToolInstall = overrideToolInstallPath(metadata.name, spec.template.spec.initContainers ?? [], emptyDirs, workDir);
  return { dgdr, executable: path.join(venv, 'bin', 'python'), args, env, cwd: path.join(workDir, 'cwd'), outputDir, model: readConfigModel(args), overrideToolInstall };
}

type Container = z.infer<typeof ContainerSchema>;

/** Maps a container's paths under its emptyDir mounts to the volumes' local folders (`<workDir>/volumes/<name>`). */
function localPathsOf(container: Container, emptyDirs: ReadonlySet<string>, workDir: string): (containerPath: string) => string {
  const mounts = (container.volumeMounts ?? []).filter((m) => emptyDirs.has(m.name)).map((m) => ({ from: m.mountPath.replace(/\/+$/, ''), to: path.join(workDir, 'volumes', m.name) }));
  return (containerPath) => {
    for (const mount of mounts) {
      if (containerPath === mount.from) return mount.to;
      if (containerPath.startsWith(`${mount.from}/`)) return path.join(mount.to, containerPath.slice(mount.from.length + 1));
    }
    return containerPath;
  };
}

/** The local path the `dgd-override-installer` init container installs to, or undefined without one. */
function overrideToolInstallPath(jobName: string, initContainers: readonly Container[], emptyDirs: ReadonlySet<string>, workDir: string): string | undefined {
  const installer = initContainers.find((c) => c.name === OVERRIDE_TOOL_INSTALLER_NAME);
  if (installer === undefined) return undefined;
  const [program, flag, target, ...extra] = [...(installer.command ?? []), ...(installer.args ?? [])];
  if (program !== OVERRIDE_TOOL_INSTALLER_COMMAND || flag !== '--install-to' || target === undefined || extra.length > 0) {
    throw new LocalJobError(`Job ${jobName}: init container ${OVERRIDE_TOOL_INSTALLER_NAME} runs ${JSON.stringify([program, flag, target, ...extra])}, not ${OVERRIDE_TOOL_INSTALLER_COMMAND} --install-to <path>`);
  }
  const local = localPathsOf(installer, emptyDirs, workDir)(target);
  if (local === target) throw new LocalJobError(`Job ${jobName}: init container ${OVERRIDE_TOOL_INSTALLER_NAME} installs to ${target}, which is not on an emptyDir volume it mounts`);
  return local;
}

/**
 * Runs the init container `dgd-override-installer` as our image does: the bundle
 * `dgd-apply-overrides.mjs` with `--install-to <path>` in its own Node.js process (the image's
 * `/dgd-apply-overrides` is that bundle). Without a bundle (a checkout before `npm run build`),
 * installs a wrapper running this checkout. Failures: LocalJobError with the installer's stderr.
 */
async function runOverrideToolInstaller(target: string, bundle: string | undefined): Promise<void> {
  if (bundle === undefined) {
    await installOverrideTool(target);
    return;
  }
  const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [bundle, '--install-to', target], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', (error) => resolve({ code: null, stderr: error.message }));
    child.on('close', (code) => resolve({ code, stderr }));
  });
  if (result.code !== 0) throw new LocalJobError(`init container ${OVERRIDE_TOOL_INSTALLER_NAME} failed (exit ${String(result.code)}): ${result.stderr.trim()}`);
}

function readConfigModel(args: readonly string[]): string | undefined {
  const index = args.indexOf('--config');
  const config = index >= 0 ? args[index + 1] : undefined;
  if (config === undefined || !config.trimStart().startsWith('{')) return undefined;
  try {
    const spec = JSON.parse(config) as { model?: unknown };
    return typeof spec.model === 'string' ? spec.model : undefined;
  } catch {
    return undefined;
  }
}

const ZERO_REVISION = '0'.repeat(40);

/**
 * Seeds a Hugging Face cache with `<org>/<name>`'s config.json from AISimulate's shipped model
 * configs (`aisimulate_core/model_configs/<org>--<name>_config.json`), so the profiler's
 * `model_has_auto_map` check works offline. Returns false when AISimulate ships no config for
 * the model (the profiler then fails as it would without Hub access).
 * Source: profiler.md §3.2.
 */
export async function seedHuggingFaceCache(venv: string, hfHome: string, model: string): Promise<boolean> {
  const sitePackages = await findSitePackages(venv);
  const source = path.join(sitePackages, 'aisimulate_core', 'model_configs', `${model.replaceAll('/', '--')}_config.json`);
  const repo = path.join(hfHome, 'hub', `models--${model.replaceAll('/', '--')}`);
  try {
    await mkdir(path.join(repo, 'snapshots', ZERO_REVISION), { recursive: true });
    await copyFile(source, path.join(repo, 'snapshots', ZERO_REVISION, 'config.json'));
  } catch {
    return false;
  }
  await mkdir(path.join(repo, 'refs'), { recursive: true });
  await writeFile(path.join(repo, 'refs', 'main'), ZERO_REVISION);
  return true;
}

async function findSitePackages(venv: string): Promise<string> {
  const lib = path.join(venv, 'lib');
  const pythons = (await readdir(lib)).filter((name) => name.startsWith('python'));
  return path.join(lib, pythons[0] ?? 'python3', 'site-packages');
}

/**
 * Runs the Job's profiler locally and returns what the output-copier would write.
 * Failures: LocalJobError for a Job it cannot run; a profiler failure is not an exception (it is
 * in `output`, as `profiler_status: failed` with the whole error).
 */
export async function runProfilingJobLocally(job: unknown, options: LocalJobOptions = {}): Promise<LocalJobRun> {
  const isTemporary = options.workDir === undefined;
  const workDir = options.workDir ?? (await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-profile-')));
  const removeWorkDir = async (): Promise<void> => {
    if (isTemporary) await rm(workDir, { recursive: true, force: true });
  };
  try {
    const venv = await venvDir();
    const command = localProfilerCommand(job, venv, workDir);
    if (command.overrideToolInstall !== undefined) await runOverrideToolInstaller(command.overrideToolInstall, options.overrideToolBundle ?? findOverrideToolBundle());
    await mkdir(command.outputDir, { recursive: true });
    await mkdir(command.cwd, { recursive: true });
    if (command.model !== undefined) await seedHuggingFaceCache(venv, command.env['HF_HOME'] ?? path.join(workDir, 'hf'), command.model);
    const logFile = path.join(workDir, 'profiler.log');
    const exitCode = await runWithStatusPolling(command, logFile, options);
    const statusText = await readOptional(path.join(command.outputDir, PROFILER_STATUS_FILE));
    const finalConfigText = await readOptional(path.join(command.outputDir, FINAL_CONFIG_FILE));
    return { dgdr: command.dgdr, exitCode, outputDir: command.outputDir, logFile, output: finalOutputConfigMap(command.dgdr, statusText, finalConfigText), removeWorkDir };
  } catch (error) {
    // A run that could not start leaves nothing worth reading behind.
    await removeWorkDir();
    throw error;
  }
}

async function runWithStatusPolling(command: LocalProfilerCommand, logFile: string, options: LocalJobOptions): Promise<number> {
  const log = createWriteStream(logFile);
  const child = spawn(command.executable, command.args, { cwd: command.cwd, env: command.env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  let lastPhase: string | undefined;
  const statusFile = path.join(command.outputDir, PROFILER_STATUS_FILE);
  // Read synchronously on each change notification: the profiler rewrites the file in place at
  // every phase, sometimes milliseconds apart; polling is the fallback where watching fails.
  const check = (): void => {
    let text: string;
    try {
      text = readFileSync(statusFile, 'utf8');
    } catch {
      return;
    }
    const status = parseProfilerStatus(text);
    if (status?.phase !== undefined && status.phase !== lastPhase) {
      lastPhase = status.phase;
      options.onStatus?.(status);
    }
  };
  const poll = async (): Promise<void> => check();
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(command.outputDir, (_event, file) => {
      if (file === PROFILER_STATUS_FILE) check();
    });
  } catch {
    watcher = undefined;
  }
  const timer = setInterval(() => void poll(), options.pollIntervalMs ?? 500);
  const killer = setTimeout(() => child.kill('SIGKILL'), (options.timeoutSeconds ?? 900) * 1000);
  const exitCode = await new Promise<number>((resolve) => {
    child.on('error', () => resolve(127));
    child.on('close', (code, signal) => resolve(code ?? (signal === 'SIGKILL' ? 137 : 1)));
  });
  clearInterval(timer);
  clearTimeout(killer);
  watcher?.close();
  await poll();
  await new Promise<void>((resolve) => log.end(resolve));
  return exitCode;
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}
