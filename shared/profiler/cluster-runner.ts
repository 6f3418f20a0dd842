/**
 * The local profiler for a cluster without GPUs (dev's `--profiler local`, the contract test):
 * watches profiling Jobs (label `app: dynamo-profiler`), runs each Job's `profiler` container on
 * this machine (shared/profiler/local-job.ts), and writes what the Job's `output-copier` would:
 * the `dgdr-output-<name>` ConfigMap, first with each relayed phase, then the final keys.
 *
 * It stands in for the kubelet and the sidecar only: it never changes the Job, its pods or the
 * request. Under kwok the Job's pod completes at once; the profile function then waits for the
 * output ConfigMap's `final_config.yaml` (upstream `errProfilingOutputNotReady`), which this
 * runner writes when the real profiler is done. Jobs run one at a time (2 cores).
 *
 * Source: ../shared/upstream-notes/profiler.md §1.3 (sidecar), §1.6 step 6 (the controller
 * waits for the output).
 * @module
 */
import type { ApplyObject, Kube, KubeObject } from '../kube/index.js';
import { runProfilingJobLocally, type LocalJobRun } from './local-job.js';
import { relayPhaseConfigMap, type DgdrRef, type OutputConfigMap } from './output.js';

/** Field manager of the ConfigMaps this runner writes (the sidecar's `kubectl apply`). */
export const FIELD_MANAGER_OUTPUT_COPIER = 'dynamo-fn-output-copier';
/** Label selector of profiling Jobs (upstream `app: dynamo-profiler`). */
export const PROFILING_JOB_SELECTOR = 'app=dynamo-profiler';

/** Progress sink (pino fits it). */
export interface RunnerLog {
  info(fields: object, msg: string): void;
  warn(fields: object, msg: string): void;
}

export interface LocalProfilerRunnerOptions {
  /** A client whose field manager is {@link FIELD_MANAGER_OUTPUT_COPIER}. */
  readonly kube: Kube;
  readonly log: RunnerLog;
  /** Only Jobs of this namespace; default every namespace. */
  readonly namespace?: string;
  /** How often Jobs are listed; default 1000 ms. */
  readonly pollIntervalMs?: number;
  /** Called when a Job's run finished (tests wait on it). */
  readonly onRun?: (job: KubeObject, run: LocalJobRun) => void;
  /** The override tool bundle a Job's `dgd-override-installer` runs, as our image does (LocalJobOptions). */
  readonly overrideToolBundle?: string;
  /** Keep a successful run's work folder too (tests that read what the Job's volumes held); default false. */
  readonly keepWorkDir?: boolean;
}

export interface LocalProfilerRunner {
  /** Stops listing; a run in progress finishes first. Resolves when idle. */
  stop(): Promise<void>;
}

/** Starts the runner (see the module docstring). */
export function startLocalProfilerRunner(options: LocalProfilerRunnerOptions): LocalProfilerRunner {
  const { kube, log } = options;
  const seen = new Set<string>();
  let stopped = false;
  let current: Promise<void> = Promise.resolve();

  const apply = async (configMap: OutputConfigMap): Promise<void> => {
    // As the sidecar does (output-copier.ts): a ConfigMap of that name the request does not control is left untouched.
    const existing = await kube.get({ apiVersion: 'v1', kind: 'ConfigMap', namespace: configMap.metadata.namespace, name: configMap.metadata.name });
    const uid = configMap.metadata.ownerReferences[0]?.uid;
    const owners = existing?.metadata['ownerReferences'];
    const isOurs = Array.isArray(owners) && owners.some((o: { uid?: unknown; controller?: unknown }) => o.uid === uid && o.controller === true);
    if (existing !== undefined && !isOurs) throw new Error(`ConfigMap ${configMap.metadata.namespace}/${configMap.metadata.name} exists and is not controlled by DynamoGraphDeploymentRequest ${configMap.metadata.ownerReferences[0]?.name ?? ''}; it is left untouched`);
    const object: ApplyObject = { ...configMap };
    await kube.apply(object, { force: true });
  };

  const runOne = async (job: KubeObject): Promise<void> => {
    const name = job.metadata.name;
    const namespace = job.metadata.namespace ?? '';
    log.info({ kind: 'Job', namespace, name }, 'Started local profiler for Job');
    let dgdr: DgdrRef | undefined;
    const relays: Promise<void>[] = [];
    try {
      const run = await runProfilingJobLocally(job, {
        ...(options.overrideToolBundle === undefined ? {} : { overrideToolBundle: options.overrideToolBundle }),
        onStatus: (status) => {
          log.info({ kind: 'Job', namespace, name, phase: status.phase, message: status.message }, 'Profiler reached phase');
          const env = profilerEnv(job);
          dgdr = { name: env['DGDR_NAME'] ?? '', namespace: env['DGDR_NAMESPACE'] ?? namespace, uid: env['DGDR_UID'] ?? '' };
          const relay = relayPhaseConfigMap(dgdr, status);
          if (relay !== undefined) relays.push(apply(relay).catch((error: unknown) => log.warn({ err: error }, 'Failed to relay profiler phase')));
        },
      });
      await Promise.all(relays);
      if (run.output.ok) {
        await apply(run.output.configMap);
        log.info({ kind: 'Job', namespace, name, profilerStatus: run.output.profilerStatus, exitCode: run.exitCode, log: run.logFile }, 'Wrote profiling output ConfigMap');
      } else {
        log.warn({ kind: 'Job', namespace, name, error: run.output.error, log: run.logFile }, 'Output copier failed');
      }
      options.onRun?.(job, run);
      // A successful run's files are in the ConfigMap now; a failed run keeps its log (named above).
      if (run.output.ok && run.output.profilerStatus === 'success' && options.keepWorkDir !== true) await run.removeWorkDir();
    } catch (error) {
      log.warn({ kind: 'Job', namespace, name, err: error }, 'Local profiler run failed');
    }
  };

  const tick = async (): Promise<void> => {
    if (stopped) return;
    let jobs: KubeObject[] = [];
    try {
      jobs = await kube.list('batch/v1', 'Job', options.namespace, { labelSelector: PROFILING_JOB_SELECTOR });
    } catch (error) {
      log.warn({ err: error }, 'Failed to list profiling Jobs');
    }
    for (const job of jobs) {
      const uid = job.metadata.uid ?? `${job.metadata.namespace ?? ''}/${job.metadata.name}`;
      if (seen.has(uid) || job.metadata['deletionTimestamp'] !== undefined) continue;
      seen.add(uid);
      current = current.then(() => runOne(job));
    }
  };

  const timer = setInterval(() => void tick(), options.pollIntervalMs ?? 1000);
  void tick();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await current;
    },
  };
}

function profilerEnv(job: KubeObject): Record<string, string> {
  const containers = ((job['spec'] as { template?: { spec?: { containers?: { name: string; env?: { name: string; value?: string }[] }[] } } } | undefined)?.template?.spec?.containers ?? []);
  const profiler = containers.find((c) => c.name === 'profiler');
  return Object.fromEntries((profiler?.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value as string]));
}
