/**
 * The admission function: DynamoGraphDeployment defaulting and validation served as Kubernetes
 * webhooks (AdmissionReview v1 over HTTPS).
 *
 * Takes: `POST /mutate/nvidia.com/{v1beta1,v1alpha1}/dynamographdeployments`,
 * `POST /validate/nvidia.com/{v1beta1,v1alpha1}/dynamographdeployments`, the DGDR webhooks
 * (v1beta1: ./dgdr.ts; v1beta2 and Runs: ./dgdr-v1beta2.ts) and `POST /convert`
 * (ConversionReview v1, per-kind converters in ./convert.ts) from the API server.
 * Reads: the request (the stored object arrives as `oldObject`); under `DGDR_V1BETA2_ENABLED`,
 * once per v1beta2 DGDR mutation that discovers hardware: every Node, and the DCGM and Intel XPU
 * exporter pods cluster-wide with their metrics (HTTP, shared/discovery: a success kept 60 s per
 * sku filter, every scrape inside the webhook's time budget, {@link discoveryBudgetSeconds}).
 * Decides: `defaultDgd` (the JSON Patch is the diff of the object and its defaulted copy) and
 * `validateDgd` (shared/domain/admission).
 * Writes: nothing; answers with the AdmissionReview. No field manager.
 *
 * `dynamo-fn serve admission --port N --tls-cert F --tls-key F` runs it (shared/cli/serve.ts hands
 * over to {@link serve}); `--plain-http` serves without TLS on 127.0.0.1 for local tools only,
 * since the API server calls webhooks over HTTPS. Configuration from the environment
 * (shared/runtime `parseConfig`): `PORT`, `MAX_BODY_BYTES`, `DRAIN_TIMEOUT_SECONDS`,
 * `LPX_ENABLED` (the `lpx.enabled` gate) and `LOG_LEVEL`; see {@link usage}.
 *
 * @module
 * @see ../../../shared/DESIGN.md "Admission"
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { DestinationStream, Logger } from 'pino';
import { ConfigError, parseConfig, serveUntilSignal } from '../../shared/runtime/index.js';
import { DEFAULT_OPERATOR_VERSION } from '../../shared/api/index.js';
import {
  DEFAULT_DCGM_ENDPOINT_TEMPLATE,
  DEFAULT_EXPORTER_NAMESPACES,
  DEFAULT_INTEL_XPU_ENDPOINT_TEMPLATE,
  ENV_DCGM_ENDPOINT_TEMPLATE,
  ENV_EXPORTER_NAMESPACES,
  ENV_INTEL_XPU_ENDPOINT_TEMPLATE,
  EXPORTER_NAMESPACES_EXPECTED,
  canonicalVersion,
  parseExporterNamespaces,
  type ClusterTopologyObservation,
  type DcgmFacts,
  type NodeFacts,
} from '../../shared/domain/index.js';
import { GpuDiscoveryCache, discoveryBudget, loadMetricsFacts, type MetricsEndpointTemplates, type ScrapeMetrics } from '../../shared/discovery/index.js';
import { createKube, loadKubeConnection, type Kube, type KubeConnectionConfig, type KubeObject } from '../../shared/kube/index.js';

/** The admission function only reads (Nodes and exporter pods, for v1beta2 hardware discovery); the field manager names it in any audit. */
const FIELD_MANAGER_ADMISSION = 'dynamo-admission';

/** A Node as hardware discovery reads it. Pure. */
export function nodeFacts(node: KubeObject): NodeFacts {
  return { name: node.metadata.name, labels: (node.metadata['labels'] ?? {}) as Record<string, string> };
}
import {
  DEFAULT_ADMISSION_MAX_BODY_BYTES,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_MAX_BUFFERED_BODY_BYTES,
  DEFAULT_MAX_QUEUED_REVIEWS,
  DEFAULT_QUEUE_TIMEOUT_MS,
  DEFAULT_SHUTDOWN_DELAY_SECONDS,
  startAdmissionServer,
} from './server.js';

export { answerAdmissionReview, findWebhookRoute, invalidStatus, webhookPath, exceedsNestingDepth, MAX_NESTING_DEPTH, SERVED_VERSIONS } from './review.js';
export type { AdmissionAnswer, AdmissionResponse, ServedVersion, WebhookKind, WebhookRoute } from './review.js';
export { CONVERT_PATH, CONVERTERS, answerConversionReview, createConverterRegistry } from './convert.js';
export { V1BETA2_ROUTES, admitV1Beta2 } from './dgdr-v1beta2.js';
export type { V1Beta2Observed } from './dgdr-v1beta2.js';
export type { ConversionAnswer, ConversionResponse, Converter, ConverterRegistry, ConverterResult } from './convert.js';
export {
  DEFAULT_ADMISSION_MAX_BODY_BYTES,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_DRAIN_TIMEOUT_SECONDS,
  DEFAULT_MAX_BUFFERED_BODY_BYTES,
  DEFAULT_MAX_QUEUED_REVIEWS,
  DEFAULT_QUEUE_TIMEOUT_MS,
  DEFAULT_SHUTDOWN_DELAY_SECONDS,
  startAdmissionServer,
} from './server.js';
export type { AdmissionServer, AdmissionServerOptions } from './server.js';

/** The webhooks' `timeoutSeconds` when `WEBHOOK_TIMEOUT_SECONDS` is unset: the chart's default (values.yaml `admission.timeoutSeconds`). */
export const DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 10;
/** What a v1beta2 discovery leaves of the webhook timeout for the rest of the answer: reading the body, the Node list, the decision and the API server's round trip. */
export const WEBHOOK_ANSWER_MARGIN_SECONDS = 2;

/**
 * The time budget of one v1beta2 hardware discovery's scrapes, in seconds: the webhook timeout
 * (1-30 s, admissionregistration v1 `timeoutSeconds`) less {@link WEBHOOK_ANSWER_MARGIN_SECONDS},
 * at least 1 s. Inside it each scrape still has upstream's own 5 s request and 3 s dial timeouts;
 * past it the remaining scrapes fail and discovery falls back to the Nodes' labels, so the API
 * server gets an answer (never its own timeout, which `failurePolicy: Fail` turns into a denial
 * with no reason). Source: upstream-notes/dgdr.md §3.2 (timeouts); chart templates/admission/webhooks.yaml. Pure.
 */
export function discoveryBudgetSeconds(webhookTimeoutSeconds: number): number {
  return Math.max(1, webhookTimeoutSeconds - WEBHOOK_ANSWER_MARGIN_SECONDS);
}

/** How admission reads the metrics exporters: where, within which budget, with which cache (one per process, as upstream's operator keeps one), trusting which namespaces, logging where. */
export interface ExporterLoaderOptions {
  readonly templates?: Partial<MetricsEndpointTemplates>;
  readonly budgetSeconds: number;
  readonly cache?: GpuDiscoveryCache;
  readonly scrape?: ScrapeMetrics;
  /** `GPU_EXPORTER_NAMESPACES` parsed; absent: `gpu-operator` (shared/domain `DEFAULT_EXPORTER_NAMESPACES`). */
  readonly trustedNamespaces?: readonly string[];
  /** Where untrusted exporter pods are logged (warn). */
  readonly log?: Pick<Logger, 'debug' | 'warn'>;
}

/**
 * The exporter reader `serve admission` gives the server (its `loadExporters`): shared/discovery
 * `loadMetricsFacts` through `kube`, with a fresh {@link discoveryBudget} per discovery.
 * Transient API errors reject (the server reports them as a failed exporter list).
 */
export function createExporterLoader(kube: Kube, options: ExporterLoaderOptions): (gpuSku: string | undefined) => Promise<DcgmFacts> {
  const templates = { dcgm: options.templates?.dcgm ?? DEFAULT_DCGM_ENDPOINT_TEMPLATE, intelXpu: options.templates?.intelXpu ?? DEFAULT_INTEL_XPU_ENDPOINT_TEMPLATE };
  return (gpuSku) =>
    loadMetricsFacts(kube, {
      templates,
      budget: discoveryBudget(options.budgetSeconds),
      ...(gpuSku === undefined ? {} : { gpuSku }),
      ...(options.cache === undefined ? {} : { cache: options.cache }),
      ...(options.scrape === undefined ? {} : { scrape: options.scrape }),
      ...(options.trustedNamespaces === undefined ? {} : { trustedNamespaces: options.trustedNamespaces }),
      ...(options.log === undefined ? {} : { log: options.log }),
    });
}

/**
 * The ClusterTopologyBinding reader `serve admission` gives the server (its
 * `readClusterTopology`): a GET of the cluster-scoped `grove.io/v1alpha1` ClusterTopologyBinding,
 * its `spec.levels[*].domain` in order (broadest first, as the CRD documents them), or not found.
 * Other API errors reject (the server reports "failed to read ClusterTopologyBinding: <error>",
 * as upstream's `readGroveClusterTopology` caller does).
 */
export function createClusterTopologyReader(kube: Kube): (name: string) => Promise<ClusterTopologyObservation> {
  return async (name) => {
    const binding = await kube.get({ apiVersion: 'grove.io/v1alpha1', kind: 'ClusterTopologyBinding', name });
    if (binding === undefined) return { found: false };
    const levels = (binding['spec'] as { levels?: unknown } | undefined)?.levels;
    const domains = Array.isArray(levels) ? levels.map((level) => (level as { domain?: unknown } | null)?.domain).filter((d): d is string => typeof d === 'string') : [];
    return { found: true, domains };
  };
}

/** The port the webhook listens on when neither `--port` nor `PORT` says otherwise. */
export const DEFAULT_ADMISSION_PORT = 8443;

export const usage = `Usage: dynamo-fn serve admission --tls-cert FILE --tls-key FILE [--port N] [--host H]
       dynamo-fn serve admission --plain-http [--port N] [--host H]

Serves DynamoGraphDeployment admission webhooks (AdmissionReview v1):
  POST /mutate/nvidia.com/{v1beta1,v1alpha1}/dynamographdeployments     defaulting (JSON Patch)
  POST /validate/nvidia.com/{v1beta1,v1alpha1}/dynamographdeployments   validation and warnings
  POST /mutate/nvidia.com/v1beta1/dynamographdeploymentrequests         DGDR defaulting (JSON Patch)
  POST /validate/nvidia.com/v1beta1/dynamographdeploymentrequests       DGDR validation and warnings
  POST /mutate/nvidia.com/v1beta2/dynamographdeploymentrequests         DGDR v1beta2: hardware discovery (DCGM, Intel XPU
                                                                        exporters, then GPU Feature Discovery labels), defaults
  POST /validate/nvidia.com/v1beta2/dynamographdeploymentrequests       DGDR v1beta2 validation (conversion views, bundled AISimulate schema)
  POST /validate/nvidia.com/v1beta2/dynamographdeploymentruns           Run validation (spec immutable)
  POST /convert                                                         ConversionReview v1 (DGD v1alpha1 <-> v1beta1;
                                                                        DGDR v1alpha1, v1beta2 <-> v1beta1)
  /healthz, /readyz, /metrics

Options:
  --port N             TCP port; overrides PORT (default ${DEFAULT_ADMISSION_PORT}; 0 picks a free port)
  --host H             interface to listen on (default all; 127.0.0.1 with --plain-http)
  --tls-cert FILE      PEM serving certificate (with its chain)
  --tls-key FILE       PEM private key
  --plain-http         serve plain HTTP; only for local tools (the API server requires HTTPS)
  --max-body-bytes N   larger requests get 413; overrides MAX_BODY_BYTES
                       (default ${DEFAULT_ADMISSION_MAX_BODY_BYTES}, 7 MiB: an UPDATE carries object and oldObject)
  --shutdown-delay-seconds S
                       on SIGTERM, /readyz turns 503 and reviews are still answered for S
                       seconds while the endpoints drop the pod (default ${DEFAULT_SHUTDOWN_DELAY_SECONDS})
  -h, --help           show this help

At most ${DEFAULT_MAX_BUFFERED_BODY_BYTES / (1024 * 1024)} MiB of review bodies are held at once (counted as received), a quarter of it by
any one source address; up to
${DEFAULT_MAX_QUEUED_REVIEWS} more reviews wait for room for up to ${DEFAULT_QUEUE_TIMEOUT_MS / 1000} s (then 429). A body not received within ${DEFAULT_BODY_TIMEOUT_MS / 1000} s gets 408; a
Content-Type other than application/json gets 415.

Environment:
  PORT                   TCP port (default ${DEFAULT_ADMISSION_PORT})
  MAX_BODY_BYTES         larger requests get 413 (default ${DEFAULT_ADMISSION_MAX_BODY_BYTES})
  DRAIN_TIMEOUT_SECONDS  bound on the whole shutdown, the delay included (default 25)
  LPX_ENABLED            feature gate lpx.enabled: true or false (default false)
  DGDR_V1BETA2_ENABLED   feature gate dgdrV1Beta2.enabled (default false); true lists Nodes and DCGM /
                         Intel XPU exporter pods for v1beta2 hardware discovery, through KUBECONFIG or
                         else the in-cluster service account
  WEBHOOK_TIMEOUT_SECONDS
                         the webhooks' timeoutSeconds, 1-30 (default ${DEFAULT_WEBHOOK_TIMEOUT_SECONDS}): exporter scrapes end
                         ${WEBHOOK_ANSWER_MARGIN_SECONDS} s before it
  ${ENV_DCGM_ENDPOINT_TEMPLATE}
                         where DCGM exporter pods are scraped (default ${DEFAULT_DCGM_ENDPOINT_TEMPLATE})
  ${ENV_INTEL_XPU_ENDPOINT_TEMPLATE}
                         where Intel XPU exporter pods are scraped (default ${DEFAULT_INTEL_XPU_ENDPOINT_TEMPLATE})
  ${ENV_EXPORTER_NAMESPACES}
                         the namespaces whose DaemonSet-controlled exporter pods are trusted, comma
                         separated (default ${DEFAULT_EXPORTER_NAMESPACES.join(',')}); "*" trusts any namespace, as upstream
  OPERATOR_VERSION       stamped on every new DGD as nvidia.com/dynamo-operator-origin-version (never over
                         a value already there), and the DGDR default profiler image
                         nvcr.io/nvidia/ai-dynamo/dynamo-planner:<version> (a semantic version; default ${DEFAULT_OPERATOR_VERSION})
  DGDR_DEFAULT_IMAGE     an explicit default profiler image instead (rc or nightly builds)
  DGD_REPLICAS_MODIFIERS comma-separated system:serviceaccount:<ns>:<name> usernames that may change
                         the replicas of a component with scalingAdapter (the reconcile function's
                         service account); the Planner's planner-serviceaccount always may
  LOG_LEVEL              fatal, error, warn, info, debug, trace or silent (default info)`;

/** What {@link serve} needs from the process; tests pass their own. */
export interface AdmissionServeDeps {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly writeError: (text: string) => void;
  /** Where JSON logs go; undefined means stdout. */
  readonly logDestination: DestinationStream | undefined;
  /** Calls `listener` on the first SIGTERM/SIGINT; returns an unsubscribe function. */
  readonly onShutdownSignal: (listener: (signal: string) => void) => () => void;
}

function processDeps(): AdmissionServeDeps {
  return {
    env: process.env,
    writeError: (text) => process.stderr.write(text),
    logDestination: undefined,
    onShutdownSignal(listener) {
      const onSignal = (signal: NodeJS.Signals): void => listener(signal);
      process.once('SIGTERM', onSignal);
      process.once('SIGINT', onSignal);
      return () => {
        process.off('SIGTERM', onSignal);
        process.off('SIGINT', onSignal);
      };
    },
  };
}

function parsePositiveInteger(flag: string, text: string): number | string {
  const value = Number(text);
  return /^\d+$/.test(text.trim()) && Number.isSafeInteger(value) && value >= 1 ? value : `${flag} must be a positive integer, got ${JSON.stringify(text)}`;
}

/**
 * Runs the admission server until SIGTERM or SIGINT, then drains (see ./server.ts) and exits.
 * In: the arguments after `serve admission`; env `PORT`, `MAX_BODY_BYTES`,
 * `DRAIN_TIMEOUT_SECONDS`, `LPX_ENABLED`, `LOG_LEVEL`. Precedence: a flag, else its variable
 * when set, else the admission default. Out: the exit code: 0 after a signal, 1 on a usage
 * error, a bad configuration, unreadable TLS files or a failed start.
 */
export async function serve(argv: readonly string[], deps: AdmissionServeDeps = processDeps()): Promise<number> {
  const fail = (message: string): number => {
    deps.writeError(`dynamo-fn serve admission: ${message}\n`);
    return 1;
  };
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'tls-cert': { type: 'string' },
        'tls-key': { type: 'string' },
        'plain-http': { type: 'boolean', default: false },
        'max-body-bytes': { type: 'string' },
        'shutdown-delay-seconds': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return fail(`${(error as Error).message}\n\n${usage}`);
  }
  const certFile = values['tls-cert'];
  const keyFile = values['tls-key'];
  const isPlain = values['plain-http'] === true;
  if (isPlain && (certFile !== undefined || keyFile !== undefined)) return fail('--plain-http cannot be combined with --tls-cert/--tls-key');
  if (!isPlain && (certFile === undefined || keyFile === undefined)) return fail(`--tls-cert and --tls-key are required (or --plain-http for local tools)\n\n${usage}`);
  const maxBodyFlag = values['max-body-bytes'] === undefined ? undefined : parsePositiveInteger('--max-body-bytes', values['max-body-bytes']);
  if (typeof maxBodyFlag === 'string') return fail(maxBodyFlag);
  const delayText = values['shutdown-delay-seconds'];
  const shutdownDelaySeconds = delayText === undefined ? DEFAULT_SHUTDOWN_DELAY_SECONDS : Number(delayText);
  if (!/^\d+(\.\d+)?$/.test(delayText?.trim() ?? '0') || !(shutdownDelaySeconds <= 3600)) {
    return fail(`--shutdown-delay-seconds must be a number of seconds from 0 to 3600, got ${JSON.stringify(delayText)}`);
  }

  let config;
  try {
    config = parseConfig({ ...deps.env, PORT: values.port ?? deps.env['PORT'] ?? String(DEFAULT_ADMISSION_PORT) });
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message);
    throw error;
  }
  // parseConfig fills MAX_BODY_BYTES with the CloudEvents host's default (3 MiB) when unset;
  // an AdmissionReview needs more, so that default is ours, not its.
  const isMaxBodyBytesSet = (deps.env['MAX_BODY_BYTES'] ?? '') !== '';
  const maxBodyBytes = maxBodyFlag ?? (isMaxBodyBytesSet ? config.maxBodyBytes : DEFAULT_ADMISSION_MAX_BODY_BYTES);
  let tls: { certFile: string; keyFile: string } | undefined;
  if (certFile !== undefined && keyFile !== undefined) {
    // Read once here for a clear start-up error; the server re-reads them when they change.
    try {
      await readFile(certFile);
      await readFile(keyFile);
    } catch (error) {
      return fail(`cannot read TLS material: ${(error as Error).message}`);
    }
    tls = { certFile, keyFile };
  }
  // DGDR defaulting: the default profiler image is the planner image of this operator version.
  const operatorVersion = deps.env['OPERATOR_VERSION'] ?? '';
  if (operatorVersion !== '' && canonicalVersion(operatorVersion) === undefined) return fail(`OPERATOR_VERSION must be a semantic version such as "1.6.1", got ${JSON.stringify(operatorVersion)}`);
  const defaultImage = deps.env['DGDR_DEFAULT_IMAGE'] ?? '';
  const dgdr = { operatorVersion: operatorVersion === '' ? DEFAULT_OPERATOR_VERSION : operatorVersion, ...(defaultImage === '' ? {} : { defaultImage }) };
  // v1beta2 hardware discovery lists the Nodes (dgdrV1Beta2.enabled only; the chart grants the list).
  let listNodes: (() => Promise<readonly NodeFacts[]>) | undefined;
  // Made once the server's logger exists (untrusted exporter pods are logged).
  let loadExporters: ((log: Logger) => (gpuSku: string | undefined) => Promise<DcgmFacts>) | undefined;
  let readClusterTopology: ((name: string) => Promise<ClusterTopologyObservation>) | undefined;
  if (config.dgdrV1Beta2Enabled) {
    const timeoutText = deps.env['WEBHOOK_TIMEOUT_SECONDS'] ?? '';
    const isTimeoutValid = timeoutText === '' || (/^\d+$/.test(timeoutText.trim()) && Number(timeoutText) >= 1 && Number(timeoutText) <= 30);
    if (!isTimeoutValid) return fail(`WEBHOOK_TIMEOUT_SECONDS must be an integer from 1 to 30 (the webhooks' timeoutSeconds), got ${JSON.stringify(timeoutText)}`);
    const webhookTimeoutSeconds = timeoutText === '' ? DEFAULT_WEBHOOK_TIMEOUT_SECONDS : Number(timeoutText);
    const exporterNamespaces = parseExporterNamespaces(deps.env[ENV_EXPORTER_NAMESPACES]);
    if (!exporterNamespaces.ok) return fail(`${ENV_EXPORTER_NAMESPACES} must be ${EXPORTER_NAMESPACES_EXPECTED}, got ${JSON.stringify(deps.env[ENV_EXPORTER_NAMESPACES])}`);
    let kubeConfig: KubeConnectionConfig | undefined;
    try {
      kubeConfig = await loadKubeConnection(config.kubeconfigPath, deps.env);
    } catch (error) {
      return fail(`cannot load KUBECONFIG: ${(error as Error).message}`);
    }
    if (kubeConfig === undefined) return fail('DGDR_V1BETA2_ENABLED needs KUBECONFIG (a kubeconfig file path) when not running in a Kubernetes pod, to list Nodes for hardware discovery');
    const kube = createKube(kubeConfig, { fieldManager: FIELD_MANAGER_ADMISSION });
    listNodes = async () => (await kube.list('v1', 'Node')).map(nodeFacts);
    // The same client reads the ClusterTopologyBindings a DGD creation names (the chart grants
    // the get beside the Node list); without a client those live topology checks are skipped.
    readClusterTopology = createClusterTopologyReader(kube);
    const dcgmTemplate = deps.env[ENV_DCGM_ENDPOINT_TEMPLATE] ?? '';
    const intelXpuTemplate = deps.env[ENV_INTEL_XPU_ENDPOINT_TEMPLATE] ?? '';
    const cache = new GpuDiscoveryCache(() => new Date());
    loadExporters = (log) =>
      createExporterLoader(kube, {
        templates: { ...(dcgmTemplate === '' ? {} : { dcgm: dcgmTemplate }), ...(intelXpuTemplate === '' ? {} : { intelXpu: intelXpuTemplate }) },
        budgetSeconds: discoveryBudgetSeconds(webhookTimeoutSeconds),
        cache,
        trustedNamespaces: exporterNamespaces.namespaces,
        log,
      });
  }
  // Plain HTTP is for local tools: never expose it beyond loopback unless asked to.
  const host = values.host ?? (isPlain ? '127.0.0.1' : undefined);

  const result = await serveUntilSignal({
    logLevel: config.logLevel,
    logDestination: deps.logDestination,
    onShutdownSignal: deps.onShutdownSignal,
    start: (log, registry) =>
      startAdmissionServer({
        port: config.port,
        ...(host === undefined ? {} : { host }),
        ...(tls === undefined ? {} : { tls }),
        config: { lpxEnabled: config.lpxEnabled, modelRegistryUrl: config.lpxModelRegistryUrl, replicasModifiers: config.replicasModifiers, dgdr },
        ...(listNodes === undefined ? {} : { listNodes }),
        ...(loadExporters === undefined ? {} : { loadExporters: loadExporters(log) }),
        ...(readClusterTopology === undefined ? {} : { readClusterTopology }),
        maxBodyBytes,
        shutdownDelaySeconds,
        drainTimeoutSeconds: config.drainTimeoutSeconds,
        log,
        registry,
      }),
  });
  return result.ok ? 0 : fail(`cannot start: ${result.error.message}`);
}
