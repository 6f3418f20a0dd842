/**
 * A quiet world for the profile and cleanup functions, and the calls their resyncs make over it
 * (issue 17 item 3: "a quiet resync writes nothing and reads in bulk"). Shared by
 * test/integration/quiet-resync.test.ts and bench/profile-resync.ts.
 *
 * The world, per `n`: DGDR v1beta1 requests left Deploying with their DGD successful (they
 * become Deployed), Failed, Ready (autoApply false) and Profiling with a running Job the request
 * controls; native v1beta2 requests (static workload), whose Runs the function creates with
 * their Jobs; standalone trace Runs whose claim exists (its finalizer added, its Job created);
 * finished Runs. No controller runs (no job controller, kwok or Grove): a Job stays active and a
 * DGD keeps the status the test writes, as the reconcile function would write it.
 *
 * The functions run as real hosts (shared/runtime `startFunctionServer`) under a ServiceAccount
 * token, through a loopback recorder that notes the verb, group, version and resource of every
 * request (test/support/rbac.ts `requestAttributes`); a resync is the PingSource's CloudEvent
 * POSTed to the host, answered when the resync is done.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { request } from 'undici';
import { DGD_KIND, DGD_V1BETA1, DGDR_KIND, DGDR_V1BETA1, DGDR_V1BETA2, DGDR_V1BETA2_KIND, LABEL_DGDR, LABEL_DGDR_NAME, LABEL_DGDR_NAMESPACE, RUN_KIND } from '../../shared/api/index.js';
import { createKube, type Kube, type KubeObject } from '../../shared/kube/index.js';
import { defaultConfig, RESYNC_EVENT_TYPE, startFunctionServer, type FunctionServer } from '../../shared/runtime/index.js';
import cleanup from '../../functions/cleanup/index.js';
import profile from '../../functions/profile/index.js';
import { generateServingCertificates } from '../../functions/admission/dev-certs.js';
import { startAdmissionServer } from '../../functions/admission/index.js';
import { startControlPlane, type ControlPlane } from '../harness/apiserver.js';
import { defaultCrdFiles } from '../harness/crds.js';
import { createLineLog } from '../harness/log.js';
import { startFaultProxy } from './fault-proxy.js';
import { kubeconfigFor, requestAttributes } from './rbac.js';

/** One request as the API server's authorizer sees it, with the API version of its path. */
export interface RecordedCall {
  readonly verb: string;
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly namespace: string | undefined;
  readonly status: number;
}

/** The calls of one pass, summed. */
export interface CallSummary {
  /** Calls by verb (`get`, `list`, `create`, `patch`, ...). */
  readonly byVerb: Readonly<Record<string, number>>;
  /** LIST calls (each page counts) by `group/version/resource` (`core` for the core group). */
  readonly listsByKind: Readonly<Record<string, number>>;
  /** create, update, patch and delete calls. */
  readonly writes: number;
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** Sums recorded calls. Pure. */
export function summarize(calls: readonly RecordedCall[]): CallSummary {
  const byVerb: Record<string, number> = {};
  const listsByKind: Record<string, number> = {};
  for (const call of calls) {
    byVerb[call.verb] = (byVerb[call.verb] ?? 0) + 1;
    if (call.verb === 'list') {
      const kind = `${call.group === '' ? 'core' : call.group}/${call.version}/${call.resource}`;
      listsByKind[kind] = (listsByKind[kind] ?? 0) + 1;
    }
  }
  return { byVerb, listsByKind, writes: calls.filter((c) => WRITE_VERBS.has(c.verb)).length };
}

function versionOf(url: string): string {
  const segments = new URL(url, 'http://127.0.0.1').pathname.split('/').filter((s) => s !== '');
  return (segments[0] === 'api' ? segments[1] : segments[2]) ?? '';
}

/** A control plane of its own (our CRDs, conversion through the admission function's `/convert`), no controllers. */
export interface QuietPlane {
  readonly plane: ControlPlane;
  readonly admin: Kube;
  stop(): Promise<void>;
}

export async function startQuietPlane(): Promise<QuietPlane> {
  const log = createLineLog({ verbose: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' });
  const certs = await generateServingCertificates({ ipAddresses: ['127.0.0.1'] });
  const conversion = await startAdmissionServer({ port: 0, host: '127.0.0.1', tls: { cert: certs.certPem, key: certs.keyPem }, config: { lpxEnabled: false }, log: pino({ level: 'warn' }), shutdownDelaySeconds: 0 });
  let plane: ControlPlane;
  try {
    plane = await startControlPlane({
      crdFiles: await defaultCrdFiles(),
      conversionWebhook: { url: `https://127.0.0.1:${conversion.port}/convert`, caBundle: Buffer.from(certs.caPem).toString('base64') },
      log,
      withControllerManager: false,
    });
  } catch (error) {
    await conversion.close();
    throw error;
  }
  return {
    plane,
    admin: createKube(plane.kubeConfig, { fieldManager: 'quiet-world' }),
    async stop() {
      await plane.stop();
      await conversion.close();
    },
  };
}

const IMAGE = 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0';
const PLANNER_IMAGE = 'nvcr.io/nvidia/ai-dynamo/dynamo-planner:1.6.1';
const EARLIER = '2026-12-01T08:00:00Z';

/** The names the world holds, by state. */
export interface QuietWorld {
  readonly namespace: string;
  readonly deployed: readonly string[];
  readonly failed: readonly string[];
  readonly ready: readonly string[];
  readonly profiling: readonly string[];
  readonly v1beta2Requests: readonly string[];
  readonly traceRuns: readonly string[];
  readonly finishedRuns: readonly string[];
}

function aDgdr(namespace: string, name: string, spec: Record<string, unknown> = {}): KubeObject {
  return { apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, metadata: { name, namespace }, spec: { model: 'Qwen/Qwen3-0.6B', backend: 'vllm', image: PLANNER_IMAGE, hardware: { gpuSku: 'h200_sxm', vramMb: 141312, numGpusPerNode: 8, totalGpus: 8 }, ...spec } };
}

function runSpec(workload: Record<string, unknown>): Record<string, unknown> {
  return { model: { name: 'Qwen/Qwen3-0.6B' }, hardware: { gpu: { sku: 'h200_sxm', budget: 8, numGpusPerNode: 8 } }, workload };
}

/**
 * Creates the world in `namespace` (which it creates), `n` objects of each state, as their
 * users and the controllers that do not run here would leave them. The function's own passes
 * bring each to its quiet state (see {@link converge}).
 */
export async function seedQuietWorld(admin: Kube, namespace: string, n: number): Promise<QuietWorld> {
  await admin.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const names = (prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  const world: QuietWorld = { namespace, deployed: names('deployed'), failed: names('failed'), ready: names('ready'), profiling: names('profiling'), v1beta2Requests: names('req'), traceRuns: names('trace'), finishedRuns: names('done') };
  const status = (name: string, value: Record<string, unknown>) => admin.applyStatus({ apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, metadata: { name, namespace }, status: value }, { force: true });
  for (const name of world.deployed) {
    // Deploying, its DGD created by this request and made successful by the reconcile function (written here).
    const dgdName = `${name}-dgd`;
    await admin.apply(aDgdr(namespace, name));
    await status(name, { phase: 'Deploying', dgdName, observedGeneration: 1, conditions: [] });
    await admin.apply({
      apiVersion: DGD_V1BETA1,
      kind: DGD_KIND,
      metadata: { name: dgdName, namespace, labels: { [LABEL_DGDR_NAME]: name, [LABEL_DGDR_NAMESPACE]: namespace } },
      spec: { backendFramework: 'vllm', components: [{ name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: IMAGE }] } } }] },
    });
    await admin.applyStatus({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, metadata: { name: dgdName, namespace }, status: { state: 'successful', components: { frontend: { replicas: 1, availableReplicas: 1 } } } }, { force: true });
  }
  for (const name of world.failed) {
    await admin.apply(aDgdr(namespace, name));
    await status(name, { phase: 'Failed', observedGeneration: 1, conditions: [{ type: 'Profiling', status: 'False', reason: 'ProfilingFailed', message: 'profiling failed: boom', observedGeneration: 1, lastTransitionTime: EARLIER }] });
  }
  for (const name of world.ready) {
    await admin.apply(aDgdr(namespace, name, { autoApply: false }));
    await status(name, { phase: 'Ready', dgdName: `${name}-dgd`, observedGeneration: 1, conditions: [] });
  }
  for (const name of world.profiling) {
    // Profiling, its Job created by this request (the function's create, written here) and running.
    const created = await admin.apply(aDgdr(namespace, name));
    await status(name, { phase: 'Profiling', profilingPhase: 'Initializing', profilingJobName: `profile-${name}`, observedGeneration: 1, conditions: [] });
    await admin.apply({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: `profile-${name}`, namespace, labels: { [LABEL_DGDR]: name }, ownerReferences: [{ apiVersion: DGDR_V1BETA1, kind: DGDR_KIND, name, uid: created.metadata.uid, controller: true }] },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'profiler', image: PLANNER_IMAGE }] } } },
    });
  }
  for (const name of world.v1beta2Requests) {
    await admin.apply({
      apiVersion: DGDR_V1BETA2,
      kind: DGDR_V1BETA2_KIND,
      metadata: { name, namespace },
      spec: { ...runSpec({ static: { isl: 4000, osl: 1000, concurrency: 8 } }), image: PLANNER_IMAGE, aisim: { inputOverrides: { engine: { mode: 'aggregated', workers: { aggregated: {} } }, optimization: { target: 'throughput' } } } },
    });
  }
  for (const name of world.traceRuns) {
    await admin.apply({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: `${name}-traces`, namespace }, spec: { accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Gi' } }, storageClassName: '' } });
    await admin.apply({ apiVersion: DGDR_V1BETA2, kind: RUN_KIND, metadata: { name, namespace }, spec: runSpec({ trace: { source: { persistentVolumeClaim: { claimName: `${name}-traces`, subPath: 'trace.jsonl.gz' } } } }) });
  }
  for (const name of world.finishedRuns) {
    await admin.apply({ apiVersion: DGDR_V1BETA2, kind: RUN_KIND, metadata: { name, namespace }, spec: runSpec({ static: { isl: 4000, osl: 1000 } }) });
    await admin.applyStatus(
      { apiVersion: DGDR_V1BETA2, kind: RUN_KIND, metadata: { name, namespace }, status: { phase: 'Failed', completionTime: EARLIER, conditions: [{ type: 'Completed', status: 'True', reason: 'JobFailed', message: 'aisimulate exited 2', lastTransitionTime: EARLIER }] } },
      { force: true },
    );
  }
  return world;
}

/** The resyncs a quiet cluster gets: one per PingSource (chart `infra/chart/templates/_helpers.tpl`, one per kind). */
export interface Resync {
  readonly function: 'profile' | 'cleanup';
  readonly kind: string;
  readonly apiVersion: string;
}

export const RESYNCS: readonly Resync[] = [
  { function: 'profile', kind: DGDR_KIND, apiVersion: DGDR_V1BETA1 },
  { function: 'profile', kind: RUN_KIND, apiVersion: DGDR_V1BETA2 },
  { function: 'cleanup', kind: 'PersistentVolumeClaim', apiVersion: 'v1' },
  { function: 'cleanup', kind: RUN_KIND, apiVersion: DGDR_V1BETA2 },
];

/** The profile and cleanup hosts, both behind one call recorder, with dgdrV1Beta2 on. */
export interface RecordedFunctions {
  readonly calls: RecordedCall[];
  /** Sends one resync and resolves, once the host answered, to the calls it made. */
  resync(resync: Resync): Promise<readonly RecordedCall[]>;
  close(): Promise<void>;
}

/**
 * Starts `profile` and `cleanup` as hosts under a ServiceAccount bound to `cluster-admin` (the
 * chart's roles are proven by the rbac-*.test.ts files; here only the calls are counted), through
 * the recorder. `resyncConcurrency` as the chart's default unless given.
 */
export async function startRecordedFunctions(quiet: QuietPlane, options: { readonly resyncConcurrency?: number } = {}): Promise<RecordedFunctions> {
  const { plane, admin } = quiet;
  const serviceAccount = `quiet-${randomBytes(3).toString('hex')}`;
  await admin.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: serviceAccount, namespace: 'default' } });
  await admin.apply({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: serviceAccount },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace: 'default' }],
  });
  const cluster = plane.kubeConfig.getCurrentCluster();
  const calls: RecordedCall[] = [];
  const proxy = await startFaultProxy({
    target: cluster?.server ?? '',
    caPem: Buffer.from(cluster?.caData ?? '', 'base64').toString('utf8'),
    handlers: () => [],
    observe: ({ method, url, status }) => {
      const attributes = requestAttributes(method, url);
      if (attributes !== undefined) calls.push({ ...attributes, version: versionOf(url), status });
      return Promise.resolve();
    },
  });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'dynamo-fn-quiet-'));
  const kubeconfigPath = await kubeconfigFor(plane.kubeConfig, 'default', serviceAccount, dir, proxy.url);
  const config = defaultConfig({ port: 0, kubeconfigPath, dgdrV1Beta2Enabled: true, aisimulateImage: 'registry.invalid/aisimulate:test', ...(options.resyncConcurrency === undefined ? {} : { resyncConcurrency: options.resyncConcurrency }) });
  const log = pino({ level: process.env['DYNAMO_FN_TEST_VERBOSE'] === '1' ? 'debug' : 'silent' });
  const servers: Record<Resync['function'], FunctionServer> = {
    profile: await startFunctionServer(profile, { config, log, host: '127.0.0.1' }),
    cleanup: await startFunctionServer(cleanup, { config, log, host: '127.0.0.1' }),
  };
  return {
    calls,
    async resync(resync) {
      const first = calls.length;
      const answer = await request(`${servers[resync.function].url}/`, {
        method: 'POST',
        headers: { 'ce-id': randomBytes(8).toString('hex'), 'ce-specversion': '1.0', 'ce-type': RESYNC_EVENT_TYPE, 'ce-source': '/quiet-world', 'ce-kind': resync.kind, 'ce-apiversion': resync.apiVersion, 'content-type': 'application/json' },
        body: '{}',
        headersTimeout: 600_000,
        bodyTimeout: 600_000,
      });
      await answer.body.text();
      if (answer.statusCode >= 300) throw new Error(`${resync.function} resync of ${resync.kind} answered ${answer.statusCode}`);
      return calls.slice(first);
    },
    async close() {
      await servers.profile.close();
      await servers.cleanup.close();
      await proxy.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Sends every resync in turn until a round writes nothing (at most `rounds`): the function's own
 * passes bring the world to its quiet state. Out: the writes of each round.
 * Failures: an Error when the last round still wrote.
 */
export async function converge(functions: RecordedFunctions, rounds = 6): Promise<number[]> {
  const writes: number[] = [];
  for (let round = 0; round < rounds; round += 1) {
    let roundWrites = 0;
    for (const resync of RESYNCS) roundWrites += summarize(await functions.resync(resync)).writes;
    writes.push(roundWrites);
    if (roundWrites === 0) return writes;
  }
  throw new Error(`the world did not settle in ${rounds} rounds of resyncs: writes per round ${writes.join(', ')}`);
}
