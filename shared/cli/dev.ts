/**
 * `dynamo-fn dev`: the whole control plane on one machine. Builds (or reuses) kube-apiserver
 * and etcd, starts them on loopback with our CRDs, Grove's and Knative's installed, starts the
 * functions' CloudEvents hosts and the local event bridge, and runs until Ctrl-C.
 * @module
 */
import { appendFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { DGD_KIND, DGD_V1BETA1, formatIssue, parseDgd, type Dgd } from '../api/index.js';
import { reconcileLpxSubscriptions, reconcileSubscriptions, startEventBridge } from '../dev/bridge.js';
import { createKube, type ApplyObject, type Kube, type KubeObject } from '../kube/index.js';
import { defaultConfig, startFunctionServer } from '../runtime/index.js';
import reconcile from '../../functions/reconcile/index.js';
import { generateServingCertificates } from '../../functions/admission/dev-certs.js';
import { createExporterLoader, DEFAULT_WEBHOOK_TIMEOUT_SECONDS, discoveryBudgetSeconds, nodeFacts, startAdmissionServer } from '../../functions/admission/index.js';
import { GpuDiscoveryCache } from '../discovery/index.js';
import { startControlPlane } from '../../test/harness/apiserver.js';
import { ensureKubeBinaries } from '../../test/harness/binaries.js';
import { defaultCrdFiles } from '../../test/harness/crds.js';
import { applyDevRequests, DEV_PROFILERS, readDevRequests, startDevProfiler, waitForDevRequests } from '../profiler/dev-profiler.js';
import { lpxCrdFiles } from '../../test/harness/lpx-crds.js';
import { createGpuNodes, DEFAULT_GPU_FLEET, GpuFleetError, parseGpuFleet, type GpuNodeGroup } from '../../test/harness/gpu-nodes.js';
import { createLineLog } from '../../test/harness/log.js';
import { formatUnknownField, unknownDgdFields } from './strict-fields.js';
import { readKubeObjects } from './yaml-input.js';
import { DEV_CHART_NAMESPACE, installDevChart } from './dev-chart.js';
import { REPO_ROOT } from '../../test/harness/binaries.js';
import path from 'node:path';
import { readdir } from 'node:fs/promises';
import { startDevProfile } from './dev-profile.js';

export const summary = 'Run the whole control plane locally: API server, functions and event bridge';

export const usage = `Usage: dynamo-fn dev [options]

Starts everything the product needs on this machine, on 127.0.0.1 only:
  1. builds or reuses kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kwok
     (npm run kube:build);
  2. starts them with a temporary admin kubeconfig (the API server runs the
     OwnerReferencesPermissionEnforcement admission plugin, as OpenShift does) and installs
     the CRDs: ours (infra/chart/files/crds, v1alpha1 converted by the admission function's
     /convert, served on 127.0.0.1 over TLS), Grove's and Knative's (../shared/crds); creates
     simulated GPU nodes (kwok keeps them Ready; pods scheduled on them run as kwok's Stages
     say, Job pods complete);
  3. starts the reconcile and profile functions' CloudEvents hosts, and registers the same
     admission server's webhooks for DynamoGraphDeployments and DynamoGraphDeploymentRequests;
  4. starts the event bridge, which delivers API events (DGDs and DGDSAs among them) to them as
     Knative's ApiServerSource would, with a resync every --resync-seconds.
Then prints the kubeconfig path and a kubectl line to try, and logs each reconcile.
Ctrl-C stops all of it and removes the temporary files.

Options:
  --apply FILE        apply the DynamoGraphDeployments in FILE once the functions run
                      (repeatable; v1alpha1 objects are converted to v1beta1 first)
  --wait              with --apply: exit 0 once every applied DGD has its PodCliqueSet and a
                      Ready condition, instead of running on; exit 1 when one cannot be
                      reconciled (Ready=False InvalidSpec) or after --timeout-seconds
  --lenient           with --apply: report unknown or misspelled fields as warnings (by default
                      they stop dev before anything starts, as strict field validation would)
  --timeout-seconds N for --wait (default 120)
  --resync-seconds N  resync interval of the bridge (default 30; 0 disables)
  --capture FILE      append every event the bridge emits to FILE (structured CloudEvents,
                      one JSON per line) for \`dynamo-fn replay\`
  --gpu-nodes FLEET   the simulated GPU nodes, <nodes>x<gpu.product>:<gpus per node>[:<MiB>],
                      comma separated (default ${DEFAULT_GPU_FLEET}: 2 nodes of 8 H200)
  --profiler local    each profiling Job the profile function creates runs the real Dynamo
                      1.6.1 profiler on this machine (offline; installs the venv once), which
                      writes its output ConfigMap; --apply then also applies
                      DynamoGraphDeploymentRequests (checked by our DGDR admission first), and
                      --wait waits until each is Deploying or Failed
  --lpx-enabled       run with the feature gate lpx.enabled=true (installs a test-only
                      LpuPipelineRequest CRD in place of the LPX scheduler's)
  --chart             install through the Helm chart (infra/chart) as on a cluster: its
                      RBAC, Knative objects and webhook configurations; the admission
                      webhooks call an admission server on loopback, and the reconcile
                      function runs with the chart ServiceAccount's token
  --verbose           debug logs (every event delivery)
  -h, --help          show this help`;

interface Applied {
  readonly namespace: string;
  readonly name: string;
}

/** DGDs to apply, read and checked before anything starts (a cold build takes minutes). */
async function readDgdFiles(files: readonly string[], lenient: boolean): Promise<{ dgds: Dgd[]; errors: string[]; warnings: string[] }> {
  const dgds: Dgd[] = [];
  const errors: string[] = [];
  const warnings: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      errors.push(`${file}: cannot read: ${(error as Error).message}`);
      continue;
    }
    const input = readKubeObjects(text, file);
    errors.push(...input.errors);
    for (const { where, object } of input.objects) {
      if (object['kind'] !== DGD_KIND) continue;
      const unknown = unknownDgdFields(object).map((path) => `${where}: ${formatUnknownField(path)}`);
      (lenient ? warnings : errors).push(...unknown);
      if (!lenient && unknown.length > 0) continue;
      const parsed = parseDgd(object);
      if (parsed.ok) dgds.push(parsed.dgd);
      else errors.push(...parsed.issues.map((issue) => `${where}: ${formatIssue(issue)}`));
    }
  }
  return { dgds, errors, warnings };
}

async function applyDgds(dgds: readonly Dgd[], kube: Kube, log: ReturnType<typeof createLineLog>): Promise<Applied[]> {
  const applied: Applied[] = [];
  for (const dgd of dgds) {
    const namespace = dgd.metadata.namespace ?? 'default';
    if (namespace !== 'default' && (await kube.get({ apiVersion: 'v1', kind: 'Namespace', name: namespace })) === undefined) {
      await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    }
    const { status: _status, ...object } = dgd;
    const name = object.metadata.name ?? '';
    const metadata = {
      name,
      namespace,
      ...(object.metadata.annotations === undefined ? {} : { annotations: object.metadata.annotations }),
      ...(object.metadata.labels === undefined ? {} : { labels: object.metadata.labels }),
    };
    await kube.apply({ ...object, apiVersion: DGD_V1BETA1, metadata } as ApplyObject, { force: true });
    log.info({ namespace, name }, 'Applied DynamoGraphDeployment');
    applied.push({ namespace, name });
  }
  return applied;
}

export async function run(argv: readonly string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        apply: { type: 'string', multiple: true, default: [] },
        wait: { type: 'boolean', default: false },
        lenient: { type: 'boolean', default: false },
        'timeout-seconds': { type: 'string', default: '120' },
        'resync-seconds': { type: 'string', default: '30' },
        'lpx-enabled': { type: 'boolean', default: false },
        chart: { type: 'boolean', default: false },
        'gpu-nodes': { type: 'string', default: DEFAULT_GPU_FLEET },
        capture: { type: 'string' },
        profiler: { type: 'string' },
        verbose: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    process.stderr.write(`dynamo-fn dev: ${(error as Error).message}\n\n${usage}\n`);
    return 1;
  }
  const resyncSeconds = Number(values['resync-seconds']);
  const timeoutSeconds = Number(values['timeout-seconds']);
  if (!Number.isInteger(resyncSeconds) || resyncSeconds < 0 || !Number.isInteger(timeoutSeconds) || timeoutSeconds <= 0) {
    process.stderr.write('dynamo-fn dev: --resync-seconds must be a whole number >= 0 and --timeout-seconds > 0\n');
    return 1;
  }

  let gpuFleet: GpuNodeGroup[];
  try {
    gpuFleet = parseGpuFleet(values['gpu-nodes']);
  } catch (error) {
    if (!(error instanceof GpuFleetError)) throw error;
    process.stderr.write(`dynamo-fn dev: --gpu-nodes: ${error.message}\n`);
    return 1;
  }

  if (values.profiler !== undefined && !(DEV_PROFILERS as readonly string[]).includes(values.profiler)) {
    process.stderr.write(`dynamo-fn dev: --profiler: unsupported value "${values.profiler}": supported values: ${DEV_PROFILERS.map((p) => `"${p}"`).join(', ')}\n`);
    return 1;
  }
  const requests = values.profiler === 'local' ? await readDevRequests(values.apply) : { requests: [], warnings: [], errors: [] };
  for (const warning of requests.warnings) process.stderr.write(`Warning: ${warning}\n`);
  const input = await readDgdFiles(values.apply, values.lenient);
  process.stderr.write(input.warnings.map((w) => `warning: ${w}\n`).join(''));
  input.errors.push(...requests.errors);
  if (input.errors.length > 0) {
    process.stderr.write(input.errors.map((e) => `error: ${e}\n`).join(''));
    return 1;
  }
  if (values.wait && input.dgds.length === 0 && requests.requests.length === 0) {
    process.stderr.write('dynamo-fn dev: --wait needs --apply with at least one DynamoGraphDeployment\n');
    return 1;
  }

  const log = createLineLog({ verbose: values.verbose });
  const functionLog = pino({ level: values.verbose ? 'debug' : 'info', base: undefined, timestamp: false }, humanLines(log));
  const binaries = await ensureKubeBinaries({ log });
  // One admission server (TLS, loopback) for the whole session: v1alpha1 objects convert through
  // its /convert, as the API server in a cluster calls it through the admission Service, and the
  // webhooks (dev-profile.ts, or the chart's with --chart) call it too. It starts before the API
  // server (whose CRDs name its /convert), so the Nodes of v1beta2 hardware discovery are listed
  // through the client made once the API server runs; no review can come before that.
  const certs = await generateServingCertificates({ ipAddresses: ['127.0.0.1'] });
  let nodesClient: Kube | undefined;
  const listNodes = async () => {
    if (nodesClient === undefined) throw new Error('cannot list Nodes: the API server is not started yet');
    return (await nodesClient.list('v1', 'Node')).map(nodeFacts);
  };
  // The DCGM / Intel XPU exporters, read as `serve admission` reads them (default endpoints, the chart's webhook timeout).
  const exporterCache = new GpuDiscoveryCache(() => new Date());
  const loadExporters = async (gpuSku: string | undefined) => {
    if (nodesClient === undefined) throw new Error('cannot list exporter pods: the API server is not started yet');
    return createExporterLoader(nodesClient, { budgetSeconds: discoveryBudgetSeconds(DEFAULT_WEBHOOK_TIMEOUT_SECONDS), cache: exporterCache })(gpuSku);
  };
  const admission = await startAdmissionServer({ port: 0, host: '127.0.0.1', tls: { cert: certs.certPem, key: certs.keyPem }, config: { lpxEnabled: values['lpx-enabled'] }, log: functionLog, shutdownDelaySeconds: 0, listNodes, loadExporters });
  const plane = await startControlPlane({
    binaries,
    // With --chart our CRDs come from the chart, as on a cluster; with --lpx-enabled, the
    // test-only LpuPipelineRequest CRD stands in for the LPX scheduler's.
    crdFiles: [
      ...(await defaultCrdFiles()).filter((file) => !values.chart || !file.startsWith(path.join(REPO_ROOT, 'infra', 'chart', 'files', 'crds'))),
      ...(values['lpx-enabled'] ? await lpxCrdFiles() : []),
    ],
    conversionWebhook: { url: `https://127.0.0.1:${admission.port}/convert`, caBundle: Buffer.from(certs.caPem).toString('base64') },
    log,
    withControllerManager: binaries.kubeControllerManager !== undefined,
    withScheduler: binaries.kubeScheduler !== undefined,
    withKwok: binaries.kwok !== undefined,
  }).catch(async (error: unknown) => {
    await admission.close();
    throw error;
  });
  let stopping: Promise<void> | undefined;
  const stopAll = async (parts: { close: () => Promise<void> }[]): Promise<void> => {
    stopping ??= (async () => {
      for (const part of parts.reverse()) await part.close().catch(() => undefined);
      await plane.stop();
      await admission.close();
    })();
    return stopping;
  };
  const parts: { close: () => Promise<void> }[] = [];
  try {
    // One client for what dev itself writes and reads, on the control plane's loaded config.
    const kube = createKube(plane.kubeConfig, { fieldManager: 'dynamo-fn-dev' });
    nodesClient = kube;
    // The namespaces of the examples, so the kubectl lines below work as printed.
    await ensureNamespaces(kube, await exampleNamespaces(), log);
    const devAdmission = { url: `https://127.0.0.1:${admission.port}`, caPem: certs.caPem };
    let reconcileKubeconfigPath = plane.kubeconfigPath;
    if (values.chart) {
      const chart = await installDevChart({ kubeconfigPath: plane.kubeconfigPath, kubeConfig: plane.kubeConfig, kube, dir: plane.dir, lpxEnabled: values['lpx-enabled'], admission: devAdmission, log });
      reconcileKubeconfigPath = chart.reconcileKubeconfigPath;
    }
    const server = await startFunctionServer(reconcile, {
      config: defaultConfig({ port: 0, kubeconfigPath: reconcileKubeconfigPath, lpxEnabled: values['lpx-enabled'] }),
      log: functionLog,
      host: '127.0.0.1',
    });
    parts.push(server);
    log.info({ url: server.url }, 'Started function reconcile');
    // Before the profile function starts: --profiler local sets what its Jobs need (OPERATOR_IMAGE).
    const profiler = values.profiler === 'local' ? await startDevProfiler({ kubeConfig: plane.kubeConfig, log }) : undefined;
    if (profiler !== undefined) parts.push(profiler);
    const devProfile = await startDevProfile(kube, plane.kubeconfigPath, functionLog, values['lpx-enabled'], devAdmission);
    parts.push(devProfile);
    log.info({ url: devProfile.profileUrl, admission: devProfile.admissionUrl }, 'Started function profile and the admission webhooks');
    const bridge = await startEventBridge({
      kubeConfig: plane.kubeConfig,
      log: functionLog,
      resyncIntervalSeconds: resyncSeconds,
      subscriptions: [
        ...reconcileSubscriptions(server.url),
        // LPX (the chart's lpx.enabled sources): the LPXGD, the scheduler's receipts and the runtime ConfigMaps.
        ...(values['lpx-enabled'] ? reconcileLpxSubscriptions(server.url) : []),
        devProfile.subscription,
      ],
      ...(values.capture === undefined ? {} : { onEmit: captureTo(values.capture) }),
    });
    parts.push({ close: () => bridge.stop() });

    process.stderr.write(
      `\nThe control plane is running.\n  export KUBECONFIG=${plane.kubeconfigPath}\n` +
        `  kubectl apply --server-side -f ${path.join(REPO_ROOT, 'examples', 'vllm-aggregated.yaml')}\n` +
        `  kubectl get dgd,podcliquesets,services -A\n` +
        (values.chart ? `  npx dynamo-fn status -n ${DEV_CHART_NAMESPACE}\n` : '') +
        `${values.wait ? '' : 'Press Ctrl-C to stop.\n'}\n`,
    );

    if (binaries.kwok !== undefined) {
      const nodes = await createGpuNodes(kube, gpuFleet);
      log.info({ nodes: nodes.length, fleet: values['gpu-nodes'] }, 'Created simulated GPU nodes');
    }
    const applied = await applyDgds(input.dgds, kube, log);
    const appliedRequests = await applyDevRequests(requests.requests, kube, log);
    if (values.wait) {
      const ok = (await waitForReconciled(applied, kube, timeoutSeconds, log)) && (await waitForDevRequests(appliedRequests, kube, timeoutSeconds, log));
      await stopAll(parts);
      return ok ? 0 : 1;
    }
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    log.info({}, 'Stopping');
    await stopAll(parts);
    return 0;
  } catch (error) {
    log.error({ err: error }, 'Failed to start');
    await stopAll(parts);
    return 1;
  }
}

/** The namespaces the example DGDs (examples/*.yaml) live in. */
async function exampleNamespaces(): Promise<string[]> {
  const dir = path.join(REPO_ROOT, 'examples');
  const names = new Set<string>();
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort()) {
    const input = readKubeObjects(await readFile(path.join(dir, file), 'utf8'), file);
    for (const { object } of input.objects) {
      const namespace = (object['metadata'] as { namespace?: unknown } | undefined)?.namespace;
      if (typeof namespace === 'string' && namespace !== '') names.add(namespace);
    }
  }
  return [...names].sort();
}

/** Creates each namespace that does not exist yet. */
async function ensureNamespaces(kube: Kube, names: readonly string[], log: ReturnType<typeof createLineLog>): Promise<void> {
  for (const name of names) {
    if ((await kube.get({ apiVersion: 'v1', kind: 'Namespace', name })) !== undefined) continue;
    await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    log.info({ name }, 'Created Namespace');
  }
}

/** Fields of a function's JSON log line that are noise on a terminal. */
const HIDDEN_LOG_FIELDS = new Set(['level', 'msg', 'time', 'pid', 'hostname', 'function', 'eventType', 'eventId']);

/**
 * A pino destination that reprints the functions' JSON log lines in the same one-line form
 * as dev's own progress (`HH:MM:SS <message> key=value ...`), so the terminal reads as one log.
 */
function humanLines(log: ReturnType<typeof createLineLog>): { write(line: string): void } {
  return {
    write(line: string) {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        process.stderr.write(line);
        return;
      }
      const fields = Object.fromEntries(Object.entries(record).filter(([key]) => !HIDDEN_LOG_FIELDS.has(key)));
      const level = typeof record['level'] === 'number' ? record['level'] : 30;
      const message = String(record['msg'] ?? '');
      if (level >= 50) log.error(fields, message);
      else if (level >= 40) log.warn(fields, message);
      else if (level >= 30) log.info(fields, message);
      else log.debug(fields, message);
    },
  };
}

/** Appends each emitted event to `file` as one structured-mode CloudEvent JSON line. */
function captureTo(file: string): (event: { toJSON(): Record<string, unknown> }) => void {
  return (event) => appendFileSync(file, `${JSON.stringify(event.toJSON())}\n`);
}

/** Waits until each applied DGD has a PodCliqueSet and a Ready condition; logs what it sees. */
async function waitForReconciled(applied: readonly Applied[], kube: Kube, timeoutSeconds: number, log: ReturnType<typeof createLineLog>): Promise<boolean> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  const pending = new Map(applied.map((a) => [`${a.namespace}/${a.name}`, a]));
  const failed: string[] = [];
  while (pending.size > 0 && Date.now() < deadline) {
    for (const [key, { namespace, name }] of pending) {
      const dgd: KubeObject | undefined = await kube.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name });
      const ready = ((dgd?.['status'] as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready');
      const podCliqueSets = await kube.list('grove.io/v1alpha1', 'PodCliqueSet', namespace, { labelSelector: `nvidia.com/dynamo-graph-deployment-name=${name}` });
      if (ready !== undefined && podCliqueSets.length > 0) {
        log.info({ dgd: key, podCliqueSets: podCliqueSets.map((p) => p.metadata.name).join(','), ready: ready.status, reason: ready.reason, message: ready.message }, 'Reconciled DynamoGraphDeployment');
        pending.delete(key);
      } else if (ready?.reason === 'InvalidSpec' || ready?.reason === 'failed_to_reconcile_the_resources') {
        log.error({ dgd: key, reason: ready.reason, message: ready.message }, 'DynamoGraphDeployment cannot be reconciled');
        failed.push(key);
        pending.delete(key);
      }
    }
    if (pending.size > 0) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  if (pending.size > 0) log.error({ pending: [...pending.keys()].join(',') }, 'Timed out waiting for reconcile');
  return pending.size === 0 && failed.length === 0;
}
