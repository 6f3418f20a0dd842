/**
 * Loads what DCGM-exporter hardware discovery reads: the exporter pods cluster-wide (labels
 * `app=nvidia-dcgm-exporter`, `app=dcgm-exporter`, `app.kubernetes.io/name=dcgm-exporter`), each
 * Running pod's metrics scraped over HTTP at `http://{POD_IP}:9400/metrics` (or
 * `$DCGM_METRICS_ENDPOINT_TEMPLATE`) with upstream's timeouts (5 s per request, 3 s to connect),
 * whether GPU Operator pods run in `gpu-operator` (only when there are no exporter pods), and the
 * pod names in `nvidia-network-operator`. Reads only: pods get/list (the profile role has them).
 * The rules are in shared/domain/dgdr/dcgm.ts and discovery.ts.
 * Source: upstream deploy/operator/internal/gpu/discovery.go (../shared/upstream-notes/profiler.md §2.2).
 * @module
 */
import { Agent, request } from 'undici';

import {
  DCGM_DIAL_TIMEOUT_SECONDS,
  DCGM_EXPORTER_SELECTORS,
  DCGM_REQUEST_TIMEOUT_SECONDS,
  GPU_OPERATOR_NAMESPACE,
  GPU_OPERATOR_SELECTORS,
  NETWORK_OPERATOR_NAMESPACE,
  dcgmMetricsEndpoint,
  isScrapableExporterPod,
  type DcgmExporterPod,
  type DcgmFacts,
  type DiscoverySignals,
} from '../../shared/domain/index.js';
import type { Kube, KubeObject } from '../../shared/kube/index.js';
import { PermanentError } from '../../shared/runtime/index.js';

/** Exporter pods scraped at once (upstream scrapes one after another, behind a 60 s cache we do not keep). */
export const SCRAPE_CONCURRENCY = 8;

/** A metrics body larger than this is refused rather than read (a real exporter serves tens of KiB). */
export const MAX_METRICS_BODY_BYTES = 8 * 1024 * 1024;

/** Reads one metrics endpoint: its body, or upstream's error text for it. */
export type ScrapeMetrics = (endpoint: string) => Promise<{ readonly ok: true; readonly body: string } | { readonly ok: false; readonly error: string }>;

const agent = new Agent({ connect: { timeout: DCGM_DIAL_TIMEOUT_SECONDS * 1000 } });

/**
 * GETs a metrics endpoint with upstream's timeouts. Errors, as upstream `ScrapeMetricsEndpoint`
 * words them: `HTTP GET <endpoint> failed: <cause>`, `metrics endpoint <endpoint> returned status
 * <n>`; and ours: a body over {@link MAX_METRICS_BODY_BYTES}. Never throws.
 */
export const scrapeMetricsEndpoint: ScrapeMetrics = async (endpoint) => {
  try {
    const response = await request(endpoint, { method: 'GET', dispatcher: agent, signal: AbortSignal.timeout(DCGM_REQUEST_TIMEOUT_SECONDS * 1000) });
    if (response.statusCode !== 200) {
      await response.body.dump();
      return { ok: false, error: `metrics endpoint ${endpoint} returned status ${response.statusCode}` };
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > MAX_METRICS_BODY_BYTES) {
        response.body.destroy();
        return { ok: false, error: `metrics endpoint ${endpoint} returned more than ${MAX_METRICS_BODY_BYTES} bytes` };
      }
      chunks.push(chunk as Buffer);
    }
    return { ok: true, body: Buffer.concat(chunks).toString('utf8') };
  } catch (error) {
    return { ok: false, error: `HTTP GET ${endpoint} failed: ${(error as Error).message}` };
  }
};

interface PodShape {
  readonly spec?: { readonly nodeName?: string };
  readonly status?: { readonly phase?: string; readonly podIP?: string };
}

function exporterPod(pod: KubeObject): Omit<DcgmExporterPod, 'scrape'> {
  const { spec, status } = pod as KubeObject & PodShape;
  return { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name, nodeName: spec?.nodeName ?? '', phase: status?.phase ?? '', podIp: status?.podIP ?? '' };
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

/**
 * The DCGM and network-operator signals for one discovery ({@link SCRAPE_CONCURRENCY} scrapes at a
 * time). A refused list (PermanentError, e.g. 403) is a DCGM failure, as upstream's list
 * error is; transient API errors propagate (the event is retried).
 */
export async function loadDiscoverySignals(kube: Kube, endpointTemplate: string, scrape: ScrapeMetrics = scrapeMetricsEndpoint): Promise<DiscoverySignals> {
  let dcgm: DcgmFacts;
  try {
    const pods = (await listBySelectors(kube, DCGM_EXPORTER_SELECTORS)).map(exporterPod);
    const exporterPods: DcgmExporterPod[] = [];
    // A few at a time, in list order: an unreachable exporter costs up to the 5 s request timeout.
    for (let start = 0; start < pods.length; start += SCRAPE_CONCURRENCY) {
      exporterPods.push(
        ...(await Promise.all(
          pods.slice(start, start + SCRAPE_CONCURRENCY).map(async (pod): Promise<DcgmExporterPod> => {
            if (!isScrapableExporterPod(pod)) return pod;
            const endpoint = dcgmMetricsEndpoint(endpointTemplate, pod.podIp);
            return { ...pod, scrape: { endpoint, ...(await scrape(endpoint)) } };
          }),
        )),
      );
    }
    const isGpuOperatorRunning =
      exporterPods.length === 0 && (await listBySelectors(kube, GPU_OPERATOR_SELECTORS, GPU_OPERATOR_NAMESPACE)).some((pod) => exporterPod(pod).phase === 'Running');
    dcgm = { exporterPods, isGpuOperatorRunning };
  } catch (error) {
    if (!(error instanceof PermanentError)) throw error;
    dcgm = { listError: error.message, exporterPods: [], isGpuOperatorRunning: false };
  }
  let networkOperatorPodNames: string[] = [];
  try {
    networkOperatorPodNames = (await kube.list('v1', 'Pod', NETWORK_OPERATOR_NAMESPACE)).map((pod) => pod.metadata.name);
  } catch (error) {
    // Upstream `detectIBPods` treats a failed list as "no InfiniBand".
    if (!(error instanceof PermanentError)) throw error;
  }
  return { dcgm, networkOperatorPodNames };
}
