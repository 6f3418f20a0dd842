/**
 * Loads what metrics hardware discovery reads: the DCGM exporter pods cluster-wide (labels
 * `app=nvidia-dcgm-exporter`, `app=dcgm-exporter`, `app.kubernetes.io/name=dcgm-exporter`), each
 * Running pod's metrics scraped over HTTP at `http://{POD_IP}:9400/metrics` (or
 * `$DCGM_METRICS_ENDPOINT_TEMPLATE`); when they give no node of the requested SKU, the Intel XPU
 * exporter pods (`app` or `app.kubernetes.io/name` = `xpumd` / `intel-xpumanager`) scraped at
 * `http://{POD_IP}:8080/metrics` (or `$INTEL_XPU_METRICS_ENDPOINT_TEMPLATE`); upstream's timeouts
 * (5 s per request, 3 s to connect); whether GPU Operator pods run in `gpu-operator` (only when
 * neither source has pods); and the pod names in `nvidia-network-operator`. A successful metrics
 * discovery is kept 60 s per SKU filter ({@link GpuDiscoveryCache}). A caller with a deadline (the
 * admission webhook's timeout) gives a time budget: no scrape outlives it. Reads only: pods list
 * cluster-wide (the profile role and, under dgdrV1Beta2.enabled, the admission role have it). The
 * rules are in shared/domain/dgdr/dcgm.ts, intel-xpu.ts and discovery.ts. Only trusted exporter
 * pods are scraped (dcgm.ts `exporterPodTrust`: in a namespace the administrator names, default
 * `gpu-operator`, and controlled by a DaemonSet; issue 20 item 1); the others are logged and named
 * in a failed discovery's message, never contacted. Used by the profile
 * function (v1beta1) and the admission function (v1beta2 defaulting).
 * Source: upstream deploy/operator/internal/gpu/discovery.go (../shared/upstream-notes/dgdr.md §3.2,
 * profiler.md §2.2).
 * @module
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';

import {
  DEFAULT_EXPORTER_NAMESPACES,
  DCGM_DIAL_TIMEOUT_SECONDS,
  DCGM_EXPORTER_SELECTORS,
  DCGM_REQUEST_TIMEOUT_SECONDS,
  GPU_DISCOVERY_CACHE_TTL_SECONDS,
  GPU_OPERATOR_NAMESPACE,
  GPU_OPERATOR_SELECTORS,
  INTEL_XPU_EXPORTER_SELECTORS,
  NETWORK_OPERATOR_NAMESPACE,
  isGpuDiscoveryCacheEntryFresh,
  exporterControllerOf,
  isScrapableExporterPod,
  metricsEndpoint,
  readMetricsGpuNodes,
  splitExporterPods,
  type DcgmExporterPod,
  type DcgmFacts,
  type DiscoverySignals,
  type ExporterPodsFacts,
} from '../domain/index.js';
import type { Kube, KubeObject } from '../kube/index.js';
import { PermanentError } from '../runtime/index.js';

/** Exporter pods scraped at once (upstream scrapes one after another; both sit behind the 60 s cache). */
export const SCRAPE_CONCURRENCY = 8;

/** A metrics body larger than this is refused rather than read (a real exporter serves tens of KiB). */
export const MAX_METRICS_BODY_BYTES = 8 * 1024 * 1024;

/** Reads one metrics endpoint: its body, or upstream's error text for it; `budget`, when given, aborts it early. */
export type ScrapeMetrics = (endpoint: string, budget?: AbortSignal) => Promise<{ readonly ok: true; readonly body: string } | { readonly ok: false; readonly error: string }>;

/**
 * GETs a metrics endpoint with upstream's timeouts. Errors, as upstream `ScrapeMetricsEndpoint`
 * words them: `HTTP GET <endpoint> failed: <cause>`, `metrics endpoint <endpoint> returned status
 * <n>`; and ours: a body over {@link MAX_METRICS_BODY_BYTES}; the caller's time budget run out
 * (`HTTP GET <endpoint> failed: hardware discovery's time budget of <n> s ran out`). Never throws.
 * Over node:http (no undici on the functions' start path; issue 17 item 2).
 */
export const scrapeMetricsEndpoint: ScrapeMetrics = async (endpoint, budget) => {
  const timeout = AbortSignal.timeout(DCGM_REQUEST_TIMEOUT_SECONDS * 1000);
  try {
    if (budget?.aborted === true) return { ok: false, error: `HTTP GET ${endpoint} failed: ${budgetReason(budget)}` };
    const signal = budget === undefined ? timeout : AbortSignal.any([timeout, budget]);
    return await new Promise((resolve, reject) => {
      const onResponse = (response: IncomingMessage): void => {
        if (response.statusCode !== 200) {
          response.resume();
          resolve({ ok: false, error: `metrics endpoint ${endpoint} returned status ${response.statusCode ?? 0}` });
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_METRICS_BODY_BYTES) {
            response.destroy();
            resolve({ ok: false, error: `metrics endpoint ${endpoint} returned more than ${MAX_METRICS_BODY_BYTES} bytes` });
            return;
          }
          chunks.push(chunk);
        });
        response.on('error', reject);
        response.on('end', () => resolve({ ok: true, body: Buffer.concat(chunks).toString('utf8') }));
      };
      const url = new URL(endpoint);
      const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method: 'GET', signal }, onResponse);
      request.on('error', reject);
      // Upstream's dial timeout: the connection, apart from the request's own 5 s.
      request.on('socket', (socket: Socket) => {
        if (!socket.connecting) return;
        const dial = setTimeout(() => request.destroy(new Error(`connect ETIMEDOUT ${url.host} (dial timeout ${DCGM_DIAL_TIMEOUT_SECONDS} s)`)), DCGM_DIAL_TIMEOUT_SECONDS * 1000);
        dial.unref();
        socket.once('connect', () => clearTimeout(dial));
        socket.once('close', () => clearTimeout(dial));
      });
      request.end();
    });
  } catch (error) {
    const cause = budget?.aborted === true && !timeout.aborted ? budgetReason(budget) : (error as Error).message;
    return { ok: false, error: `HTTP GET ${endpoint} failed: ${cause}` };
  }
};

/** The message a budget signal was aborted with ({@link discoveryBudget}), or a plain one. */
function budgetReason(budget: AbortSignal): string {
  return budget.reason instanceof DiscoveryBudgetExceeded ? budget.reason.message : 'hardware discovery was cancelled';
}

/** Why a scrape was cut short: the caller's whole-discovery time budget ran out. */
export class DiscoveryBudgetExceeded extends Error {
  override readonly name = 'DiscoveryBudgetExceeded';
  readonly budgetSeconds: number;
  constructor(budgetSeconds: number) {
    super(`hardware discovery's time budget of ${budgetSeconds} s ran out`);
    this.budgetSeconds = budgetSeconds;
  }
}

/**
 * A signal that aborts `budgetSeconds` from now with {@link DiscoveryBudgetExceeded}: one per
 * discovery, so every scrape of it (DCGM, then Intel XPU) ends by then, whatever its own 5 s.
 * The timer does not keep the process alive.
 */
export function discoveryBudget(budgetSeconds: number): AbortSignal {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new DiscoveryBudgetExceeded(budgetSeconds)), budgetSeconds * 1000).unref();
  return controller.signal;
}

interface PodShape {
  readonly spec?: { readonly nodeName?: string };
  readonly status?: { readonly phase?: string; readonly podIP?: string };
}

function exporterPod(pod: KubeObject): Omit<DcgmExporterPod, 'scrape'> {
  const { spec, status } = pod as KubeObject & PodShape;
  const controller = exporterControllerOf(pod);
  return { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name, nodeName: spec?.nodeName ?? '', phase: status?.phase ?? '', podIp: status?.podIP ?? '', ...(controller === undefined ? {} : { controller }) };
}

/** Lists pods by each selector in turn, deduplicated by namespace/name (upstream `listDCGMExporterPods`). */
async function listBySelectors(kube: Kube, selectors: readonly string[], namespace?: string): Promise<KubeObject[]> {
  const seen = new Set<string>();
  const pods: KubeObject[] = [];
  for (const labelSelector of selectors) {
    for (const pod of await kube.list('v1', 'Pod', namespace, { labelSelector })) {
      const key = `${pod.metadata.namespace ?? ''}/${pod.metadata.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      pods.push(pod);
    }
  }
  return pods;
}

/** Where each metrics source's exporter pods are scraped (`{POD_IP}` replaced). */
export interface MetricsEndpointTemplates {
  /** Default `http://{POD_IP}:9400/metrics` (`DCGM_METRICS_ENDPOINT_TEMPLATE`). */
  readonly dcgm: string;
  /** Default `http://{POD_IP}:8080/metrics` (`INTEL_XPU_METRICS_ENDPOINT_TEMPLATE`). */
  readonly intelXpu: string;
}

/**
 * Successful metrics discoveries (the exporter pods and their scrapes), kept 60 s per SKU filter
 * ("" for none), as upstream's `GPUDiscoveryCache` keeps its results; a failed discovery is not
 * kept. The cache lives in one function instance's memory: another instance has its own, and
 * Knative's scale to zero drops it, so the first request after a cold start always scrapes. Only
 * the exporters are cached: the Nodes (GPU Feature Discovery and RDMA labels) and the network
 * operator's pods are read each time. `now` is the host's clock (injectable for tests).
 * Why our own: one Map with an expiry per entry; no library is needed for that.
 */
export class GpuDiscoveryCache {
  readonly #entries = new Map<string, { readonly facts: DcgmFacts; readonly expiresAt: Date }>();

  constructor(
    private readonly now: () => Date,
    private readonly ttlSeconds: number = GPU_DISCOVERY_CACHE_TTL_SECONDS,
  ) {}

  /** The metrics facts kept for this SKU filter (a v1beta1 gpuSku or a v1beta2 open sku), while fresh (upstream `GPUDiscoveryCache.Get`). */
  get(gpuSku: string | undefined): DcgmFacts | undefined {
    const entry = this.#entries.get(gpuSku ?? '');
    if (entry === undefined) return undefined;
    if (isGpuDiscoveryCacheEntryFresh(entry.expiresAt, this.now())) return entry.facts;
    this.#entries.delete(gpuSku ?? '');
    return undefined;
  }

  /** Keeps the facts of a successful discovery for this SKU filter for the TTL (upstream `GPUDiscoveryCache.Set`). */
  set(gpuSku: string | undefined, facts: DcgmFacts): void {
    this.#entries.set(gpuSku ?? '', { facts, expiresAt: new Date(this.now().getTime() + this.ttlSeconds * 1000) });
  }
}

/** How one discovery is loaded: the endpoints, the scraper, the SKU filter, the cache (none: no caching) and the time budget (none: only the per-request timeouts). */
export interface DiscoveryLoadOptions {
  readonly templates: MetricsEndpointTemplates;
  readonly scrape?: ScrapeMetrics;
  /** The request's `spec.hardware.gpuSku` (v1beta1) or `spec.hardware.gpu.sku` (v1beta2): upstream's filter. */
  readonly gpuSku?: string;
  /** Aborts every scrape still running when it fires ({@link discoveryBudget}): admission must answer within its webhook timeout. */
  readonly budget?: AbortSignal;
  readonly cache?: GpuDiscoveryCache;
  /**
   * The namespaces whose DaemonSet-controlled exporter pods are trusted (`*`: any); default
   * {@link DEFAULT_EXPORTER_NAMESPACES} (`gpu-operator`). Setting `GPU_EXPORTER_NAMESPACES`.
   */
  readonly trustedNamespaces?: readonly string[];
  /** Where a reused discovery (debug) and each untrusted exporter pod (warn) are logged. */
  readonly log?: Pick<Logger, 'debug' | 'warn'>;
}

/** How one source is read: its selectors and endpoint, the scraper, the budget, the trusted namespaces and the log. */
interface SourceLoad {
  readonly selectors: readonly string[];
  readonly template: string;
  readonly scrape: ScrapeMetrics;
  readonly budget: AbortSignal | undefined;
  readonly trustedNamespaces: readonly string[];
  readonly log: Pick<Logger, 'warn'> | undefined;
}

/**
 * One source's exporter pods and their scrapes ({@link SCRAPE_CONCURRENCY} at a time, in list
 * order): the pods are listed cluster-wide, so a planted one is seen and named, but only the
 * trusted ones are scraped.
 */
async function loadExporters(kube: Kube, source: SourceLoad): Promise<ExporterPodsFacts> {
  const { template, scrape, budget } = source;
  try {
    const { trusted: pods, untrusted } = splitExporterPods((await listBySelectors(kube, source.selectors)).map(exporterPod), source.trustedNamespaces);
    for (const pod of untrusted) source.log?.warn({ pod: `${pod.namespace}/${pod.name}`, reason: pod.reason }, 'Skipped untrusted exporter pod');
    const exporterPods: DcgmExporterPod[] = [];
    // A few at a time: an unreachable exporter costs up to the 5 s request timeout.
    for (let start = 0; start < pods.length; start += SCRAPE_CONCURRENCY) {
      exporterPods.push(
        ...(await Promise.all(
          pods.slice(start, start + SCRAPE_CONCURRENCY).map(async (pod): Promise<DcgmExporterPod> => {
            if (!isScrapableExporterPod(pod)) return pod;
            const endpoint = metricsEndpoint(template, pod.podIp);
            return { ...pod, scrape: { endpoint, ...(await scrape(endpoint, budget)) } };
          }),
        )),
      );
    }
    return { exporterPods, ...(untrusted.length === 0 ? {} : { untrustedPods: untrusted }) };
  } catch (error) {
    // A refused list (PermanentError, e.g. 403) is the source's failure, as upstream's list error is.
    if (!(error instanceof PermanentError)) throw error;
    return { listError: error.message, exporterPods: [] };
  }
}

/** Whether Running GPU Operator pods exist in `gpu-operator`; a refused list means none (its message would only say the cluster has no exporters). */
async function isGpuOperatorRunningIn(kube: Kube): Promise<boolean> {
  try {
    return (await listBySelectors(kube, GPU_OPERATOR_SELECTORS, GPU_OPERATOR_NAMESPACE)).some((pod) => exporterPod(pod).phase === 'Running');
  } catch (error) {
    if (!(error instanceof PermanentError)) throw error;
    return false;
  }
}

/**
 * The metrics exporters for one discovery, in upstream's order (only the trusted pods of each
 * source scraped, see {@link DiscoveryLoadOptions.trustedNamespaces}): a fresh cached success for the SKU
 * filter; else the DCGM exporters; the Intel XPU exporters only when DCGM gives no node of the
 * filter and its pods could be listed; the GPU Operator's pods only when neither has pods. A
 * success is cached. Transient API errors propagate (the event is retried).
 */
export async function loadMetricsFacts(kube: Kube, options: DiscoveryLoadOptions): Promise<DcgmFacts> {
  const cached = options.cache?.get(options.gpuSku);
  if (cached !== undefined) {
    options.log?.debug({ gpuSku: options.gpuSku ?? '' }, 'Reused cached GPU discovery');
    return cached;
  }
  const base = { scrape: options.scrape ?? scrapeMetricsEndpoint, budget: options.budget, trustedNamespaces: options.trustedNamespaces ?? DEFAULT_EXPORTER_NAMESPACES, log: options.log };
  const dcgm = await loadExporters(kube, { ...base, selectors: DCGM_EXPORTER_SELECTORS, template: options.templates.dcgm });
  let facts: DcgmFacts = { ...dcgm, isGpuOperatorRunning: false };
  if (dcgm.listError === undefined && !readMetricsGpuNodes(facts, options.gpuSku, []).ok) {
    const intelXpu = await loadExporters(kube, { ...base, selectors: INTEL_XPU_EXPORTER_SELECTORS, template: options.templates.intelXpu });
    const hasNoPods = dcgm.exporterPods.length === 0 && intelXpu.exporterPods.length === 0 && intelXpu.listError === undefined;
    const isGpuOperatorRunning = hasNoPods && (await isGpuOperatorRunningIn(kube));
    facts = { ...dcgm, isGpuOperatorRunning, intelXpu };
  }
  if (readMetricsGpuNodes(facts, options.gpuSku, []).ok) options.cache?.set(options.gpuSku, facts);
  return facts;
}

/**
 * The metrics-exporter and network-operator signals for one discovery (see {@link loadMetricsFacts}).
 * Transient API errors propagate (the event is retried).
 */
export async function loadDiscoverySignals(kube: Kube, options: DiscoveryLoadOptions): Promise<DiscoverySignals> {
  const dcgm = await loadMetricsFacts(kube, options);
  let networkOperatorPodNames: string[] = [];
  try {
    networkOperatorPodNames = (await kube.list('v1', 'Pod', NETWORK_OPERATOR_NAMESPACE)).map((pod) => pod.metadata.name);
  } catch (error) {
    // Upstream `detectIBPods` treats a failed list as "no InfiniBand".
    if (!(error instanceof PermanentError)) throw error;
  }
  return { dcgm, networkOperatorPodNames };
}
