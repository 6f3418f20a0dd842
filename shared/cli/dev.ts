/**
 * `dynamo-fn dev`: the whole control plane on one machine. Builds (or reuses) kube-apiserver
 * and etcd, starts them on loopback with our CRDs, Grove's and Knative's installed, starts the
 * functions' CloudEvents hosts and the local event bridge, and runs until Ctrl-C.
 * @module
 */
import { appendFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import fastJsonPatch, { type Operation } from 'fast-json-patch';
import { pino } from 'pino';
import {
  CHART_RELEASE_NAMESPACE,
  chartAdmissionSettings,
  chartFunctions,
  DGD_KIND,
  DGD_V1BETA1,
  formatIssue,
  functionServiceAccount,
  gateCrd,
  parseDgd,
  type ChartFunction,
  type ChartGates,
  type Dgd,
} from '../api/index.js';
import { ENV_EXPORTER_NAMESPACES, EXPORTER_NAMESPACES_EXPECTED, parseExporterNamespaces, type AdmissionConfig } from '../domain/index.js';
import { chartSubscriptions, startEventBridge } from '../dev/bridge.js';
import { createKube, type ApplyObject, type Kube, type KubeObject } from '../kube/index.js';
import { defaultConfig, startFunctionServer, type FunctionDefinition } from '../runtime/index.js';
import cleanup from '../../functions/cleanup/index.js';
import profile from '../../functions/profile/index.js';
import reconcile from '../../functions/reconcile/index.js';
import { generateServingCertificates } from '../../functions/admission/dev-certs.js';
import { answerAdmissionReview, createClusterTopologyReader, createExporterLoader, discoveryBudgetSeconds, nodeFacts, startAdmissionServer } from '../../functions/admission/index.js';
import { GpuDiscoveryCache } from '../discovery/index.js';
import { DEFAULT_CONTROLLERS, startControlPlane } from '../../test/harness/apiserver.js';
import { ensureKubeBinaries, REPO_ROOT } from '../../test/harness/binaries.js';
import { defaultCrdFiles } from '../../test/harness/crds.js';
import { applyDevRequests, DEV_PROFILERS, readDevRequests, startDevProfiler, waitForDevRequests } from '../profiler/dev-profiler.js';
import { lpxCrdFiles } from '../../test/harness/lpx-crds.js';
import { createGpuNodes, DEFAULT_GPU_FLEET, GpuFleetError, parseGpuFleet, type GpuNodeGroup } from '../../test/harness/gpu-nodes.js';
import { createLineLog } from '../../test/harness/log.js';
import { formatUnknownField, unknownDgdFields } from './strict-fields.js';
import { readKubeObjects } from './yaml-input.js';
import { DEV_CHART_NAMESPACE, installDevChart, serviceAccountKubeconfig } from './dev-chart.js';
import { registerDevWebhooks } from './dev-profile.js';
import { GROVE_SIMULATION_FIELD_MANAGER, startGroveSimulation } from '../dev/grove-simulation.js';
import { HOLD_ANNOTATION, LPX_SCHEDULER_SIMULATION_FIELD_MANAGER, startLpxSchedulerSimulation } from '../dev/lpx-scheduler-simulation.js';

const { applyPatch } = fastJsonPatch;

/** The CloudEvents functions dev can run, by the chart's name for them. */
const FUNCTION_DEFINITIONS = { reconcile, profile, cleanup } as unknown as Readonly<Record<ChartFunction['name'], FunctionDefinition<never>>>;

export const summary = 'Run the whole control plane locally: API server, functions and event bridge';

export const usage = `Usage: dynamo-fn dev [options]

Starts everything the product needs on this machine, on 127.0.0.1 only, wired as the Helm
chart (infra/chart) wires it for the same feature gates:
  1. builds or reuses kube-apiserver, etcd, kube-controller-manager, kube-scheduler and kwok
     (npm run kube:build);
  2. starts them with a temporary admin kubeconfig (the API server runs the
     OwnerReferencesPermissionEnforcement admission plugin, as OpenShift does) and installs
     the CRDs: ours (infra/chart/files/crds, with the versions the chart serves for the gates:
     DGDR v1beta2, Runs and Candidates only with --dgdr-v1beta2-enabled, LPXGraphDeployments
     only with --lpx-enabled; v1alpha1 converted by the admission function's /convert, served
     on 127.0.0.1 over TLS), Grove's and Knative's (../shared/crds); creates simulated GPU
     nodes (kwok keeps them Ready; pods scheduled on them run as kwok's Stages say, Job pods
     complete);
  3. starts the admission server (its webhooks registered for DGDs, DGDRs and, with v1beta2,
     Runs; given the chart's settings, the reconcile function's identity among the replica
     modifiers) and each CloudEvents function the chart deploys, on its own host: reconcile,
     profile and, with either gate, cleanup; each runs as its own ServiceAccount
     (dynamo-system/dynamo-<function>);
  4. starts the event bridge, which delivers API events to each function as the chart's
     ApiServerSources would (the same kinds, label selectors and Resource/Reference modes), and
     every --resync-seconds the chart's PingSources (resyncs and ticks).
Then prints the functions and gates that run, the kubeconfig path and kubectl lines to try, and
logs each reconcile. Ctrl-C stops all of it and removes the temporary files.

Options:
  --apply FILE        apply the DynamoGraphDeployments in FILE once the functions run
                      (repeatable; v1alpha1 objects are converted to v1beta1 first); each is
                      checked first, by the schema and by our admission (defaults and rules),
                      before anything starts; they are applied with field manager "kubectl", so
                      \`kubectl apply --server-side -f FILE\` of an edited FILE works
  --wait              with --apply: exit 0 once every applied DGD has its PodCliqueSet and a
                      Ready condition (Ready=True while Grove is simulated), instead of running on; exit 1 when one cannot be
                      reconciled (Ready=False InvalidSpec) or after --timeout-seconds
  --lenient           with --apply: report unknown or misspelled fields as warnings (by default
                      they stop dev before anything starts, as strict field validation would)
  --timeout-seconds N for --wait (default 120)
  --resync-seconds N  interval of the bridge's resyncs and ticks (default 30; 0 disables)
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
  --dgdr-v1beta2-enabled
                      run with the feature gate dgdrV1Beta2.enabled=true: DGDR v1beta2, Runs
                      and Candidates served, trace replay, trace-claim protection and release
                      (the cleanup function), Run retention
  --chart             install through the Helm chart (infra/chart) as on a cluster: its
                      RBAC, Knative objects and webhook configurations (the only ones: dev
                      registers none of its own); the admission webhooks call the admission
                      server on loopback, and each function runs with its chart
                      ServiceAccount's token. Knative's controllers do not run, so
                      \`dynamo-fn status\` shows the functions' Knative Services Unknown
  --simulate LIST     the simulations dev runs for controllers that cannot run on one machine
                      (as kwok stands in for kubelets; never part of the chart): a comma
                      separated list of "grove" and "lpx-scheduler", or "none" (default: all).
                      "grove" simulates
                      Grove's controller (not the real one): from each PodCliqueSet it creates
                      the PodCliques and PodCliqueScalingGroups Grove would (Grove's names,
                      labels and owners) and writes them ready at their generation, with the
                      PodCliqueSet's generation acknowledged, so a DGD reaches Ready=True; it
                      creates no pods (it writes the ready status directly)
                      "lpx-scheduler" (only with --lpx-enabled) simulates the LPX scheduler (not
                      the real one): it writes a "bound" receipt (status.phase, observedGeneration)
                      on every LpuPipelineRequest at its generation, except for a DGD annotated
                      ${HOLD_ANNOTATION}: hold, whose requests it never answers (so their
                      scheduling deadline passes and cleanup can be seen)
  --no-simulate-grove without the Grove simulation (a DGD then stays Ready=False, as no Grove runs)
  --no-simulate-lpx-scheduler
                      without the LPX scheduler simulation (no receipts: an LPX DGD stays pending)
  --lpx-model-registry URL
                      with --lpx-enabled: lpx.modelRegistryURL (file:// or gs://); default
                      file://<repo>/examples/lpx/builds, the sample build shipped there
  --verbose           debug logs (every event delivery, every ConversionReview)
  -h, --help          show this help

Environment: GPU_EXPORTER_NAMESPACES, the namespaces whose DaemonSet-controlled DCGM / Intel XPU
exporter pods hardware discovery trusts (profile and admission alike; comma separated; default
gpu-operator, as the chart's hardwareDiscovery.exporterNamespaces; "*" any namespace).`;

/** A DGD from an --apply file, as dev applies it (v1beta1, namespace set, no status). */
interface DevDgd {
  readonly where: string;
  readonly object: ApplyObject;
}

interface Applied {
  readonly namespace: string;
  readonly name: string;
}

/**
 * Stand-ins dev may run for controllers that cannot run here (DESIGN.md "Real parts": named as a
 * simulation, following upstream's semantics, off with a flag, never in the chart). Each is
 * started after the functions and the bridge, with the admin client, and stopped first.
 * None yet: a Grove simulation (issue 18 item 6) is one entry here.
 */
export interface DevSimulation {
  /** What dev prints, e.g. "Grove (PodCliques, scaling groups and their status)". */
  readonly name: string;
  start(context: { readonly kube: Kube; readonly kubeConfig: KubeConfig; readonly log: ReturnType<typeof createLineLog>; readonly gates: ChartGates }): Promise<{ close(): Promise<void> }>;
}

/** The simulations dev runs (see DevSimulation), by their `--simulate` name. */
export const DEV_SIMULATIONS: readonly (DevSimulation & { readonly flag: string; readonly onlyWith?: (gates: ChartGates) => boolean })[] = [
  {
    flag: 'grove',
    name: "Grove (PodCliques, PodCliqueScalingGroups and their ready status from each PodCliqueSet; no pods; not the real Grove controller)",
    async start({ kubeConfig, log }) {
      // Grove's own field manager, as its controller writes (shared/dev/grove-simulation.ts).
      const grove = createKube(kubeConfig, { fieldManager: GROVE_SIMULATION_FIELD_MANAGER });
      return startGroveSimulation(grove, { onError: (error) => log.warn({ err: error }, 'Simulated Grove pass failed (retrying)') });
    },
  },
  {
    flag: 'lpx-scheduler',
    name: `the LPX scheduler (a "bound" receipt for every LpuPipelineRequest at its generation, none for a DGD annotated ${HOLD_ANNOTATION}=hold; not the real LPX scheduler)`,
    onlyWith: (gates) => gates.lpxEnabled,
    async start({ kubeConfig, log }) {
      const scheduler = createKube(kubeConfig, { fieldManager: LPX_SCHEDULER_SIMULATION_FIELD_MANAGER });
      return startLpxSchedulerSimulation(scheduler, { onError: (error) => log.warn({ err: error }, 'Simulated LPX scheduler pass failed (retrying)') });
    },
  },
];

/** The names `--simulate` takes: each simulation's flag, or none. */
export const SIMULATION_FLAGS = DEV_SIMULATIONS.map((s) => s.flag);

/**
 * Which simulations run: `--simulate` (comma separated flags, or `none`; default all), less
 * each `--no-simulate-<flag>`. Out: the flags, or an error. Pure.
 */
export function selectSimulations(simulate: string | undefined, disabled: readonly string[]): { readonly ok: true; readonly flags: readonly string[] } | { readonly ok: false; readonly error: string } {
  const requested = simulate === undefined ? SIMULATION_FLAGS : simulate === 'none' ? [] : simulate.split(',').map((s) => s.trim()).filter((s) => s !== '');
  const unknown = requested.filter((flag) => !SIMULATION_FLAGS.includes(flag));
  if (unknown.length > 0) return { ok: false, error: `--simulate: unsupported value "${unknown.join(',')}": supported values: none, or a comma-separated list of ${SIMULATION_FLAGS.map((f) => `"${f}"`).join(', ')}` };
  return { ok: true, flags: requested.filter((flag) => !disabled.includes(flag)) };
}

/** The field manager `kubectl apply --server-side` uses, so dev's --apply and the user's own apply are one owner. */
const KUBECTL_FIELD_MANAGER = 'kubectl';

/** The identity dev's admission check answers as (an admin, as kubectl on the admin kubeconfig). */
const DEV_APPLY_USER = 'kubernetes-admin';

/** DGDs to apply, read and checked before anything starts (a cold build takes minutes). */
async function readDgdFiles(files: readonly string[], lenient: boolean): Promise<{ dgds: DevDgd[]; errors: string[]; warnings: string[] }> {
  const dgds: DevDgd[] = [];
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
      if (parsed.ok) dgds.push({ where, object: applyObjectOf(parsed.dgd) });
      else errors.push(...parsed.issues.map((issue) => `${where}: ${formatIssue(issue)}`));
    }
  }
  return { dgds, errors, warnings };
}

/** The object dev applies for a DGD: v1beta1, its namespace (default "default"), labels and annotations, no status. */
function applyObjectOf(dgd: Dgd): ApplyObject {
  const { status: _status, ...object } = dgd;
  const metadata = {
    name: object.metadata.name ?? '',
    namespace: dgd.metadata.namespace ?? 'default',
    ...(object.metadata.annotations === undefined ? {} : { annotations: object.metadata.annotations }),
    ...(object.metadata.labels === undefined ? {} : { labels: object.metadata.labels }),
  };
  return { ...object, apiVersion: DGD_V1BETA1, metadata } as ApplyObject;
}

/**
 * Our admission's answer to creating `dgd`, as the API server would get it from the webhooks:
 * the defaulting patch, then validation of the defaulted object. Out: the denial message
 * (undefined when allowed) and the warnings. Pure.
 */
export function admitForApply(dgd: ApplyObject, config: AdmissionConfig): { readonly denial: string | undefined; readonly warnings: readonly string[] } {
  const review = (object: unknown) =>
    JSON.stringify({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'dynamo-fn-dev-apply',
        kind: { group: 'nvidia.com', version: 'v1beta1', kind: DGD_KIND },
        operation: 'CREATE',
        name: dgd.metadata.name,
        namespace: dgd.metadata.namespace,
        object,
        userInfo: { username: DEV_APPLY_USER },
      },
    });
  const mutated = answerAdmissionReview({ kind: 'mutate', version: 'v1beta1' }, review(dgd), config);
  if (mutated.status !== 200) return { denial: mutated.message, warnings: [] };
  const patch = mutated.review.response.patch;
  const defaulted = patch === undefined ? dgd : (applyPatch(structuredClone(dgd), JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as Operation[], false, false).newDocument as ApplyObject);
  const validated = answerAdmissionReview({ kind: 'validate', version: 'v1beta1' }, review(defaulted), config);
  if (validated.status !== 200) return { denial: validated.message, warnings: [] };
  const warnings = [...(mutated.review.response.warnings ?? []), ...(validated.review.response.warnings ?? [])];
  const denial = !mutated.review.response.allowed ? mutated.review.response.status?.message : !validated.review.response.allowed ? validated.review.response.status?.message : undefined;
  return { denial: denial ?? (mutated.review.response.allowed && validated.review.response.allowed ? undefined : 'denied'), warnings };
}

async function applyDgds(dgds: readonly DevDgd[], kube: Kube, log: ReturnType<typeof createLineLog>): Promise<Applied[]> {
  const applied: Applied[] = [];
  for (const { object } of dgds) {
    const namespace = object.metadata.namespace ?? 'default';
    if (namespace !== 'default' && (await kube.get({ apiVersion: 'v1', kind: 'Namespace', name: namespace })) === undefined) {
      await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    }
    const name = object.metadata.name;
    await kube.apply(object, { force: true });
    log.info({ namespace, name }, 'Applied DynamoGraphDeployment');
    applied.push({ namespace, name });
  }
  return applied;
}

/** How each function authenticates: its own ServiceAccount's token (with --chart the chart's, else one dev binds to cluster-admin). */
async function functionKubeconfigs(
  names: readonly ChartFunction['name'][],
  options: { readonly kube: Kube; readonly kubeConfig: KubeConfig; readonly dir: string; readonly isChart: boolean; readonly log: ReturnType<typeof createLineLog> },
): Promise<Map<ChartFunction['name'], string>> {
  const { kube } = options;
  const namespace = CHART_RELEASE_NAMESPACE;
  const paths = new Map<ChartFunction['name'], string>();
  if (!options.isChart && (await kube.get({ apiVersion: 'v1', kind: 'Namespace', name: namespace })) === undefined) {
    await kube.apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  }
  for (const name of names) {
    const account = functionServiceAccount(name);
    if (!options.isChart) {
      // Without the chart there is no RBAC to mirror: the function's own identity, with every right.
      await kube.apply({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account, namespace } });
      await kube.apply({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `dynamo-fn-dev-${name}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: account, namespace }],
      });
    }
    paths.set(name, await serviceAccountKubeconfig(options.kubeConfig, namespace, account, options.dir));
    options.log.info({ serviceAccount: `${namespace}/${account}` }, options.isChart ? `The ${name} function runs with the chart ServiceAccount token` : `The ${name} function runs as its own ServiceAccount, bound to cluster-admin`);
  }
  return paths;
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
        'dgdr-v1beta2-enabled': { type: 'boolean', default: false },
        chart: { type: 'boolean', default: false },
        'gpu-nodes': { type: 'string', default: DEFAULT_GPU_FLEET },
        capture: { type: 'string' },
        profiler: { type: 'string' },
        verbose: { type: 'boolean', default: false },
        simulate: { type: 'string' },
        'no-simulate-grove': { type: 'boolean', default: false },
        'no-simulate-lpx-scheduler': { type: 'boolean', default: false },
        'lpx-model-registry': { type: 'string' },
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
  const simulations = selectSimulations(values.simulate, [...(values['no-simulate-grove'] ? ['grove'] : []), ...(values['no-simulate-lpx-scheduler'] ? ['lpx-scheduler'] : [])]);
  if (!simulations.ok) {
    process.stderr.write(`dynamo-fn dev: ${simulations.error}\n`);
    return 1;
  }
  const gates: ChartGates = { lpxEnabled: values['lpx-enabled'], dgdrV1Beta2Enabled: values['dgdr-v1beta2-enabled'] };
  const activeSimulations = DEV_SIMULATIONS.filter((s) => simulations.flags.includes(s.flag) && (s.onlyWith?.(gates) ?? true));
  // The LPX model registry: the sample builds shipped in examples/lpx/builds unless given.
  const lpxModelRegistryUrl = gates.lpxEnabled ? (values['lpx-model-registry'] ?? `file://${path.join(REPO_ROOT, 'examples', 'lpx', 'builds')}`) : undefined;

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
  // Admission as the chart configures it (templates/admission/deployment.yaml, shared/api chart-wiring).
  const admissionConfig: AdmissionConfig = { lpxEnabled: gates.lpxEnabled, modelRegistryUrl: lpxModelRegistryUrl, replicasModifiers: chartAdmissionSettings().replicasModifiers };
  const requests = values.profiler === 'local' ? await readDevRequests(values.apply) : { requests: [], warnings: [], errors: [] };
  for (const warning of requests.warnings) process.stderr.write(`Warning: ${warning}\n`);
  const input = await readDgdFiles(values.apply, values.lenient);
  // Our admission too, before anything starts: a DGD it would deny fails here, not after the boot.
  for (const dgd of input.dgds) {
    const admitted = admitForApply(dgd.object, admissionConfig);
    if (admitted.denial !== undefined) input.errors.push(`${dgd.where}: admission webhook denied the request: ${admitted.denial}`);
    input.warnings.push(...admitted.warnings.map((w) => `${dgd.where}: ${w}`));
  }
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
  const functions = chartFunctions(gates);
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
  // The DCGM / Intel XPU exporters, read as `serve admission` reads them (default endpoints, the chart's webhook timeout),
  // trusting the namespaces GPU_EXPORTER_NAMESPACES names (default gpu-operator, the chart's default), as the profile function does.
  const exporterNamespaces = parseExporterNamespaces(process.env[ENV_EXPORTER_NAMESPACES]);
  if (!exporterNamespaces.ok) {
    process.stderr.write(`dynamo-fn dev: ${ENV_EXPORTER_NAMESPACES} must be ${EXPORTER_NAMESPACES_EXPECTED}, got ${JSON.stringify(process.env[ENV_EXPORTER_NAMESPACES])}\n`);
    return 1;
  }
  const exporterCache = new GpuDiscoveryCache(() => new Date());
  const loadExporters = async (gpuSku: string | undefined) => {
    if (nodesClient === undefined) throw new Error('cannot list exporter pods: the API server is not started yet');
    return createExporterLoader(nodesClient, { budgetSeconds: discoveryBudgetSeconds(chartAdmissionSettings().webhookTimeoutSeconds), cache: exporterCache, trustedNamespaces: exporterNamespaces.namespaces, log: functionLog })(gpuSku);
  };
  // The ClusterTopologyBinding a DGD creation names, read as `serve admission` reads it (with the same client as the Nodes).
  const readClusterTopology = async (name: string) => {
    if (nodesClient === undefined) throw new Error('cannot read ClusterTopologyBinding: the API server is not started yet');
    return createClusterTopologyReader(nodesClient)(name);
  };
  const admission = await startAdmissionServer({
    port: 0,
    host: '127.0.0.1',
    tls: { cert: certs.certPem, key: certs.keyPem },
    config: admissionConfig,
    log: functionLog,
    shutdownDelaySeconds: 0,
    // v1beta2 hardware discovery and the topology read, as `serve admission` wires them with DGDR_V1BETA2_ENABLED.
    ...(gates.dgdrV1Beta2Enabled ? { listNodes, loadExporters, readClusterTopology } : {}),
  });
  const plane = await startControlPlane({
    binaries,
    // With --chart our CRDs come from the chart, as on a cluster; without, the versions the chart
    // serves for the gates (gateCrd); with --lpx-enabled, the test-only LpuPipelineRequest CRD
    // stands in for the LPX scheduler's.
    crdFiles: [
      ...(await defaultCrdFiles()).filter((file) => !values.chart || !file.startsWith(path.join(REPO_ROOT, 'infra', 'chart', 'files', 'crds'))),
      ...(gates.lpxEnabled ? await lpxCrdFiles() : []),
    ],
    selectCrd: (crd) => gateCrd(crd, gates),
    conversionWebhook: { url: `https://127.0.0.1:${admission.port}/convert`, caBundle: Buffer.from(certs.caPem).toString('base64') },
    log,
    withControllerManager: binaries.kubeControllerManager !== undefined,
    // kubernetes.io/pvc-protection is released as on a cluster: a deleted trace claim goes away
    // once no pod mounts it and every Run released it (dgdr-reference "Trace claim lifecycle").
    controllers: [...DEFAULT_CONTROLLERS, 'persistentvolumeclaim-protection-controller'],
    withScheduler: binaries.kubeScheduler !== undefined,
    withKwok: binaries.kwok !== undefined,
    // dev stops the plane itself on SIGINT and SIGTERM (stopAll), after the parts that still talk
    // to it: killed at the signal, its API server left the webhook deletes to wait out their
    // request timeouts (30 s each), and the stop took over a minute under load.
    stopOnSignals: false,
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
    // What --apply applies is the user's, as if they had run `kubectl apply --server-side`.
    const userKube = createKube(plane.kubeConfig, { fieldManager: KUBECTL_FIELD_MANAGER });
    nodesClient = kube;
    // The namespaces of the examples, so the kubectl lines below work as printed.
    await ensureNamespaces(kube, await exampleNamespaces(), log);
    const devAdmission = { url: `https://127.0.0.1:${admission.port}`, caPem: certs.caPem };
    if (values.chart) {
      await installDevChart({ kubeconfigPath: plane.kubeconfigPath, kube, gates, admission: devAdmission, log });
    } else {
      parts.push(await registerDevWebhooks(kube, devAdmission, gates));
    }
    const kubeconfigs = await functionKubeconfigs(
      functions.map((f) => f.name),
      { kube, kubeConfig: plane.kubeConfig, dir: plane.dir, isChart: values.chart, log },
    );
    // Before the profile function starts: --profiler local sets what its Jobs need (OPERATOR_IMAGE).
    const profiler = values.profiler === 'local' ? await startDevProfiler({ kubeConfig: plane.kubeConfig, log, isGroveSimulated: activeSimulations.some((s) => s.flag === 'grove') }) : undefined;
    if (profiler !== undefined) parts.push(profiler);
    const urls: Partial<Record<ChartFunction['name'], string>> = {};
    for (const fn of functions) {
      const server = await startFunctionServer(FUNCTION_DEFINITIONS[fn.name], {
        config: defaultConfig({ port: 0, kubeconfigPath: kubeconfigs.get(fn.name), lpxEnabled: gates.lpxEnabled, dgdrV1Beta2Enabled: gates.dgdrV1Beta2Enabled, lpxModelRegistryUrl }),
        log: functionLog,
        host: '127.0.0.1',
      });
      parts.push(server);
      urls[fn.name] = server.url;
      log.info({ url: server.url }, `Started function ${fn.name}`);
    }
    const bridge = await startEventBridge({
      kubeConfig: plane.kubeConfig,
      log: functionLog,
      resyncIntervalSeconds: resyncSeconds,
      // Exactly the chart's ApiServerSources and PingSources for these gates.
      subscriptions: chartSubscriptions(gates, urls),
      ...(values.capture === undefined ? {} : { onEmit: captureTo(values.capture) }),
    });
    parts.push({ close: () => bridge.stop() });
    for (const simulation of activeSimulations) {
      parts.push(await simulation.start({ kube, kubeConfig: plane.kubeConfig, log, gates }));
      log.info({}, `Simulating ${simulation.name}`);
    }

    process.stderr.write(
      `\nThe control plane is running.\n` +
        `  Functions: admission (webhooks, /convert), ${functions.map((f) => f.name).join(', ')}; each on its own host, fed by the event bridge as the chart's sources would\n` +
        `  Gates: lpx.enabled=${gates.lpxEnabled} dgdrV1Beta2.enabled=${gates.dgdrV1Beta2Enabled}\n` +
        `  Simulations: ${activeSimulations.length === 0 ? 'none (a DGD stays Ready=False: nothing plays Grove)' : activeSimulations.map((s) => s.name).join('; ')}\n` +
        (values.chart
          ? `  Installed through the chart: its webhooks admit each request once; Knative's controllers do not run here, so \`dynamo-fn status\` shows each function's Knative Service Ready=Unknown (nothing writes its status); the functions run on loopback instead\n`
          : '') +
        `  export KUBECONFIG=${plane.kubeconfigPath}\n` +
        `  kubectl apply --server-side -f ${path.join(REPO_ROOT, 'examples', 'vllm-aggregated.yaml')}\n` +
        `  kubectl get dgd,podcliquesets,services -A\n` +
        (values.chart ? `  npx dynamo-fn status -n ${DEV_CHART_NAMESPACE}\n` : '') +
        `${values.wait ? '' : 'Press Ctrl-C to stop.\n'}\n`,
    );

    if (binaries.kwok !== undefined) {
      const nodes = await createGpuNodes(kube, gpuFleet);
      log.info({ nodes: nodes.length, fleet: values['gpu-nodes'] }, 'Created simulated GPU nodes');
    }
    const applied = await applyDgds(input.dgds, userKube, log);
    const appliedRequests = await applyDevRequests(requests.requests, userKube, log);
    if (values.wait) {
      const ok = (await waitForReconciled(applied, kube, timeoutSeconds, log, activeSimulations.some((s) => s.flag === 'grove'))) && (await waitForDevRequests(appliedRequests, kube, timeoutSeconds, log));
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
      const message = String(record['msg'] ?? '');
      // A resync or tick that went through (its summary carries `objects`) is per-request detail,
      // as the functions log each of its objects: debug, as ConversionReviews are. A failed one stays.
      const isQuietResync = (message === 'Handled event' && typeof record['objects'] === 'number' && record['outcome'] === 'Done') || (message === 'Skipped event' && record['reason'] === 'NoResyncRoute');
      const level = isQuietResync ? 20 : typeof record['level'] === 'number' ? record['level'] : 30;
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

/** Waits until each applied DGD has a PodCliqueSet and a Ready condition (with `untilReady`, Ready=True); logs what it sees. */
async function waitForReconciled(applied: readonly Applied[], kube: Kube, timeoutSeconds: number, log: ReturnType<typeof createLineLog>, untilReady: boolean): Promise<boolean> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  const pending = new Map(applied.map((a) => [`${a.namespace}/${a.name}`, a]));
  const failed: string[] = [];
  while (pending.size > 0 && Date.now() < deadline) {
    for (const [key, { namespace, name }] of pending) {
      const dgd: KubeObject | undefined = await kube.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace, name });
      const ready = ((dgd?.['status'] as { conditions?: { type: string; status: string; reason: string; message: string }[] } | undefined)?.conditions ?? []).find((c) => c.type === 'Ready');
      const podCliqueSets = await kube.list('grove.io/v1alpha1', 'PodCliqueSet', namespace, { labelSelector: `nvidia.com/dynamo-graph-deployment-name=${name}` });
      if (ready !== undefined && podCliqueSets.length > 0 && (!untilReady || ready.status === 'True')) {
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
