/**
 * DCGM-exporter hardware discovery: which exporter pods are read, the endpoint each is scraped at,
 * the Prometheus text they serve, and the GPU node (count, model, VRAM, interconnect) each gives.
 * The I/O (listing the pods, the HTTP GET) is the profile function's; everything here is pure.
 *
 * Source: upstream deploy/operator/internal/gpu/discovery.go (`listDCGMExporterPods`,
 * `buildDCGMEndpoints`, `discoverPrometheusPods`, `listGPUOperatorRunningPods`, `detectIBPods`,
 * `ScrapeMetricsEndpoint`) and its metrics parser (`parseDCGMAcceleratorMetrics`), recorded in
 * ../shared/upstream-notes/profiler.md §2.2 and dgdr.md §3.2, §3.5. Intel XPU exporters
 * (`xpumd`, `intel-xpumanager`) are not read: the v1beta1 SKU enum has no Intel GPU.
 * @module
 */

/** Label selectors of DCGM exporter pods, in upstream's order (`listDCGMExporterPods`). */
export const DCGM_EXPORTER_SELECTORS: readonly string[] = ['app=nvidia-dcgm-exporter', 'app=dcgm-exporter', 'app.kubernetes.io/name=dcgm-exporter'];
/** Where a GPU Operator runs its pods, and their selectors (`listGPUOperatorRunningPods`). */
export const GPU_OPERATOR_NAMESPACE = 'gpu-operator';
export const GPU_OPERATOR_SELECTORS: readonly string[] = ['app=gpu-operator', 'app.kubernetes.io/name=gpu-operator'];
/** Any pod here whose name contains `rdma` means InfiniBand RDMA (`detectIBPods`). */
export const NETWORK_OPERATOR_NAMESPACE = 'nvidia-network-operator';
/** `defaultDCGMEndpointTemplate`; the env `DCGM_METRICS_ENDPOINT_TEMPLATE` replaces it. */
export const DEFAULT_DCGM_ENDPOINT_TEMPLATE = 'http://{POD_IP}:9400/metrics';
export const ENV_DCGM_ENDPOINT_TEMPLATE = 'DCGM_METRICS_ENDPOINT_TEMPLATE';
/** Upstream `requestTimeout` (whole request) and `dialTimeout` (TCP connect), in seconds. */
export const DCGM_REQUEST_TIMEOUT_SECONDS = 5;
export const DCGM_DIAL_TIMEOUT_SECONDS = 3;
/** NVLink link counts per GPU at or above which upstream names the tier (`parseDCGMAcceleratorMetrics`). */
export const NVLINK_FULL_MESH_LINKS = 12;
export const NVLINK_HIGH_LINKS = 6;

/** One sample line of the Prometheus text format: `name{labels} value [timestamp]`. */
export interface PrometheusSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export type PrometheusParse = { readonly ok: true; readonly samples: readonly PrometheusSample[] } | { readonly ok: false; readonly error: string };

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;

/**
 * Parses the Prometheus text exposition format (version 0.0.4) into samples. `#` lines (HELP,
 * TYPE, comments) and blank lines are skipped; label values may hold the escapes `\\`, `\"`, `\n`;
 * values are Go floats (`NaN`, `+Inf`, `-Inf` included); a timestamp may follow the value.
 * In: the body text. Out: every sample in order, or the first line that is not a sample
 * (`parse prometheus metrics: line N: <why>`), as upstream's expfmt parser refuses a body that is
 * not Prometheus text (upstream TestScrapeMetricsEndpoint "invalid metrics").
 * Why our own: only sample lines are needed, and no maintained TypeScript parser exists on npm. Pure.
 */
export function parsePrometheusText(text: string): PrometheusParse {
  const samples: PrometheusSample[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const line = (lines[index] ?? '').trim();
    if (line === '' || line.startsWith('#')) continue;
    const sample = parseSampleLine(line);
    if (typeof sample === 'string') return { ok: false, error: `parse prometheus metrics: line ${index + 1}: ${sample}` };
    samples.push(sample);
  }
  return { ok: true, samples };
}

/** One sample line, or why it is not one. */
function parseSampleLine(line: string): PrometheusSample | string {
  const name = METRIC_NAME.exec(line)?.[0];
  if (name === undefined) return `invalid metric name in ${JSON.stringify(line)}`;
  let rest = line.slice(name.length);
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    for (;;) {
      rest = rest.trimStart();
      if (rest.startsWith('}')) {
        rest = rest.slice(1);
        break;
      }
      const labelName = LABEL_NAME.exec(rest)?.[0];
      if (labelName === undefined) return `invalid label name in ${JSON.stringify(line)}`;
      rest = rest.slice(labelName.length).trimStart();
      if (!rest.startsWith('="')) return `expected ="value" after label ${labelName} in ${JSON.stringify(line)}`;
      rest = rest.slice(2);
      let value = '';
      let closed = false;
      while (rest.length > 0) {
        const char = rest[0] as string;
        rest = rest.slice(1);
        if (char === '"') {
          closed = true;
          break;
        }
        if (char === '\\') {
          const escaped = rest[0];
          rest = rest.slice(1);
          if (escaped === 'n') value += '\n';
          else if (escaped === '\\' || escaped === '"') value += escaped;
          else return `invalid escape in label ${labelName} in ${JSON.stringify(line)}`;
        } else value += char;
      }
      if (!closed) return `unterminated value of label ${labelName} in ${JSON.stringify(line)}`;
      labels[labelName] = value;
      rest = rest.trimStart();
      if (rest.startsWith(',')) rest = rest.slice(1);
      else if (!rest.startsWith('}')) return `expected , or } after label ${labelName} in ${JSON.stringify(line)}`;
    }
  }
  const fields = rest.trim().split(/\s+/);
  if (fields.length < 1 || fields.length > 2 || fields[0] === '') return `expected a value (and an optional timestamp) in ${JSON.stringify(line)}`;
  const value = parseGoFloat(fields[0] as string);
  if (value === undefined) return `invalid value ${JSON.stringify(fields[0])} in ${JSON.stringify(line)}`;
  if (fields[1] !== undefined && !/^-?\d+$/.test(fields[1])) return `invalid timestamp ${JSON.stringify(fields[1])} in ${JSON.stringify(line)}`;
  return { name, labels, value };
}

function parseGoFloat(text: string): number | undefined {
  if (text === 'NaN') return Number.NaN;
  if (text === '+Inf' || text === 'Inf') return Number.POSITIVE_INFINITY;
  if (text === '-Inf') return Number.NEGATIVE_INFINITY;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return undefined;
  return Number(text);
}

/** What one DCGM exporter says about its node. */
export interface DcgmReading {
  /** The `Hostname` label ("" when absent). */
  readonly hostname: string;
  /** Distinct `gpu` label values of DCGM_FI_DEV_GPU_TEMP. */
  readonly gpuCount: number;
  /** The first `modelName` label ("" when absent). */
  readonly model: string;
  /** VRAM per GPU in MiB: the largest FB_FREE + FB_USED + FB_RESERVED over the GPUs. */
  readonly vramMb: number;
  /** `nvlink` when a GPU reports NVLink links, else `pcie`. */
  readonly interconnect: 'nvlink' | 'pcie';
  /** `full-mesh` (>= 12 links), `high` (>= 6), `partial`, or `none` without NVLink. */
  readonly interconnectTier: 'full-mesh' | 'high' | 'partial' | 'none';
  /** The first positive DCGM_FI_DEV_NVLINK_LINK_COUNT (0 without NVLink). */
  readonly nvlinkLinks: number;
}

export type DcgmReadingResult = { readonly ok: true; readonly reading: DcgmReading } | { readonly ok: false; readonly error: string };

/**
 * Reads a DCGM exporter's samples the way upstream does: the GPU set, `modelName` and `Hostname`
 * from DCGM_FI_DEV_GPU_TEMP (label `gpu`; `Hostname` also from the FB metrics); VRAM per GPU (MiB)
 * = max over GPUs of DCGM_FI_DEV_FB_FREE + DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_RESERVED (each
 * truncated to an integer after the sum); the interconnect from the first
 * DCGM_FI_DEV_NVLINK_LINK_COUNT above 0 (`nvlink`, tier by {@link NVLINK_FULL_MESH_LINKS} and
 * {@link NVLINK_HIGH_LINKS}), otherwise `pcie`.
 * Failures: `no GPUs detected from DCGM metrics` when no DCGM_FI_DEV_GPU_TEMP sample has a `gpu`.
 * Source: upstream `parseDCGMAcceleratorMetrics` (profiler.md §2.2). Pure.
 */
export function readDcgmMetrics(samples: readonly PrometheusSample[]): DcgmReadingResult {
  const gpus = new Set<string>();
  let model = '';
  let hostname = '';
  const framebuffer = { DCGM_FI_DEV_FB_FREE: new Map<string, number>(), DCGM_FI_DEV_FB_USED: new Map<string, number>(), DCGM_FI_DEV_FB_RESERVED: new Map<string, number>() };
  let nvlinkLinks = 0;
  for (const sample of samples) {
    const gpu = sample.labels['gpu'] ?? '';
    if (sample.name === 'DCGM_FI_DEV_GPU_TEMP' && gpu !== '') {
      gpus.add(gpu);
      if (model === '') model = sample.labels['modelName'] ?? '';
      if (hostname === '') hostname = sample.labels['Hostname'] ?? '';
    }
  }
  // Upstream reads the families one after another: GPU_TEMP first, then FB_FREE, FB_USED, FB_RESERVED.
  for (const family of ['DCGM_FI_DEV_FB_FREE', 'DCGM_FI_DEV_FB_USED', 'DCGM_FI_DEV_FB_RESERVED'] as const) {
    for (const sample of samples) {
      const gpu = sample.labels['gpu'] ?? '';
      if (sample.name !== family || gpu === '') continue;
      framebuffer[family].set(gpu, sample.value);
      if (hostname === '') hostname = sample.labels['Hostname'] ?? '';
    }
  }
  for (const sample of samples) {
    if (sample.name !== 'DCGM_FI_DEV_NVLINK_LINK_COUNT') continue;
    const links = Math.trunc(sample.value);
    if (links > 0) {
      nvlinkLinks = links;
      break;
    }
  }
  if (gpus.size === 0) return { ok: false, error: 'no GPUs detected from DCGM metrics' };
  let vramMb = 0;
  for (const gpu of gpus) {
    const total = Math.trunc((framebuffer.DCGM_FI_DEV_FB_FREE.get(gpu) ?? 0) + (framebuffer.DCGM_FI_DEV_FB_USED.get(gpu) ?? 0) + (framebuffer.DCGM_FI_DEV_FB_RESERVED.get(gpu) ?? 0));
    if (total > vramMb) vramMb = total;
  }
  return { ok: true, reading: { hostname, gpuCount: gpus.size, model, vramMb, ...interconnectOf(nvlinkLinks), nvlinkLinks } };
}

/** The interconnect and its tier from an NVLink link count (upstream `parseDCGMAcceleratorMetrics`). Pure. */
export function interconnectOf(nvlinkLinks: number): Pick<DcgmReading, 'interconnect' | 'interconnectTier'> {
  if (nvlinkLinks >= NVLINK_FULL_MESH_LINKS) return { interconnect: 'nvlink', interconnectTier: 'full-mesh' };
  if (nvlinkLinks >= NVLINK_HIGH_LINKS) return { interconnect: 'nvlink', interconnectTier: 'high' };
  if (nvlinkLinks > 0) return { interconnect: 'nvlink', interconnectTier: 'partial' };
  return { interconnect: 'pcie', interconnectTier: 'none' };
}

/**
 * The URL a DCGM exporter pod is scraped at: every `{POD_IP}` in the template replaced by the
 * pod's IP. Source: upstream `buildDCGMEndpoints` (template `http://{POD_IP}:9400/metrics`, or
 * `$DCGM_METRICS_ENDPOINT_TEMPLATE`). Pure.
 */
export function dcgmMetricsEndpoint(template: string, podIp: string): string {
  return template.replaceAll('{POD_IP}', podIp);
}

/** An exporter pod as discovery sees it, with the outcome of its scrape when it was scraped. */
export interface DcgmExporterPod {
  readonly namespace: string;
  readonly name: string;
  /** `spec.nodeName` ("" when unscheduled). */
  readonly nodeName: string;
  readonly phase: string;
  /** `status.podIP` ("" when none). */
  readonly podIp: string;
  /** The endpoint scraped and its body, or the scrape's error (`HTTP GET <endpoint> failed: ...`, `metrics endpoint <endpoint> returned status <n>`); absent for a pod not scraped. */
  readonly scrape?: { readonly endpoint: string; readonly ok: true; readonly body: string } | { readonly endpoint: string; readonly ok: false; readonly error: string };
}

/** Only a Running pod with an IP is scraped (upstream `discoverPrometheusPods`). Pure. */
export function isScrapableExporterPod(pod: Pick<DcgmExporterPod, 'phase' | 'podIp'>): boolean {
  return pod.phase === 'Running' && pod.podIp !== '';
}

/** What the function observed for DCGM discovery. */
export interface DcgmFacts {
  /** Why the exporter pods could not be listed (e.g. the API server refused it); the pods are then empty. */
  readonly listError?: string;
  /** Exporter pods cluster-wide, deduplicated by namespace/name, in list order. */
  readonly exporterPods: readonly DcgmExporterPod[];
  /** Whether Running GPU Operator pods exist in `gpu-operator` (only read when there are no exporter pods). */
  readonly isGpuOperatorRunning: boolean;
}

/** One node as DCGM describes it. */
export interface DcgmNode {
  /** The node's name: the pod's `spec.nodeName`, else the exporter's `Hostname`. */
  readonly name: string;
  readonly product: string;
  readonly gpuCount: number;
  readonly vramMb: number;
  readonly interconnect: 'nvlink' | 'pcie';
}

export type DcgmNodesResult = { readonly ok: true; readonly nodes: readonly DcgmNode[] } | { readonly ok: false; readonly error: string };

/**
 * The GPU nodes the DCGM exporters describe, one per node (the first exporter of a node wins), or
 * why DCGM discovery gives none, with upstream's messages:
 * - the pods could not be listed: `listing DCGM exporter pods failed: list pods: <error>`;
 * - no exporter pods: `no GPU metrics exporters found: DCGM is not enabled in the GPU Operator and
 *   no Intel XPU exporter pods found` when GPU Operator pods run, else `no GPU metrics exporters
 *   found: no DCGM exporter pods found and no Intel XPU exporter pods found`;
 * - pods, but none read: `dcgm discovery failed: failed to scrape any dcgm exporter pod: [pod <name>
 *   (<ip>): <endpoint>: <error> ...]` (HTTP, status, parse and `no GPUs detected` errors alike), or `dcgm discovery failed: no GPU metrics could be parsed from any dcgm
 *   exporter pod` when none was scrapable.
 * In: the observed exporter pods and their scrapes. Source: upstream `discoverFromMetricsSources`,
 * `discoverPrometheusPods` (profiler.md §2.2). Pure.
 */
export function readDcgmNodes(facts: DcgmFacts): DcgmNodesResult {
  if (facts.listError !== undefined) return { ok: false, error: `listing DCGM exporter pods failed: list pods: ${facts.listError}` };
  if (facts.exporterPods.length === 0) {
    return {
      ok: false,
      error: facts.isGpuOperatorRunning
        ? 'no GPU metrics exporters found: DCGM is not enabled in the GPU Operator and no Intel XPU exporter pods found'
        : 'no GPU metrics exporters found: no DCGM exporter pods found and no Intel XPU exporter pods found',
    };
  }
  const nodes: DcgmNode[] = [];
  const errors: string[] = [];
  for (const pod of facts.exporterPods) {
    if (!isScrapableExporterPod(pod) || pod.scrape === undefined) continue;
    const reading = pod.scrape.ok ? readScrape(pod.scrape.body) : { ok: false as const, error: pod.scrape.error };
    if (!reading.ok) {
      errors.push(`pod ${pod.name} (${pod.podIp}): ${pod.scrape.endpoint}: ${reading.error}`);
      continue;
    }
    const name = pod.nodeName !== '' ? pod.nodeName : reading.reading.hostname;
    if (nodes.some((n) => n.name === name)) continue;
    nodes.push({ name, product: reading.reading.model, gpuCount: reading.reading.gpuCount, vramMb: reading.reading.vramMb, interconnect: reading.reading.interconnect });
  }
  if (nodes.length === 0) {
    const cause = errors.length > 0 ? `failed to scrape any dcgm exporter pod: [${errors.join(' ')}]` : 'no GPU metrics could be parsed from any dcgm exporter pod';
    return { ok: false, error: `dcgm discovery failed: ${cause}` };
  }
  return { ok: true, nodes };
}

function readScrape(body: string): DcgmReadingResult {
  const parsed = parsePrometheusText(body);
  return parsed.ok ? readDcgmMetrics(parsed.samples) : parsed;
}

/**
 * Whether the `nvidia-network-operator` namespace runs an RDMA pod (a name containing `rdma`),
 * which upstream takes as InfiniBand RDMA for the whole cluster. Source: upstream `detectIBPods`
 * (dgdr.md §3.5). Pure.
 */
export function hasInfinibandPods(networkOperatorPodNames: readonly string[]): boolean {
  return networkOperatorPodNames.some((name) => name.includes('rdma'));
}
