/**
 * DCGM-exporter hardware discovery: which exporter pods are read, the endpoint each is scraped at,
 * the Prometheus text they serve, and the GPU node (count, model, VRAM, interconnect) each gives.
 * The I/O (listing the pods, the HTTP GET) is the profile function's; everything here is pure.
 *
 * Intel XPU exporters (`xpumd`, `intel-xpumanager`) are the second source: their pods, endpoint
 * and metrics are in ./intel-xpu.ts; the pod and node reading here serves both, and a body is read
 * as Intel XPU metrics when it declares `hw_gpu_info`, as upstream's one scraper does.
 *
 * Source: upstream deploy/operator/internal/gpu/discovery.go (`listDCGMExporterPods`,
 * `buildDCGMEndpoints`, `discoverPrometheusPods`, `listGPUOperatorRunningPods`, `detectIBPods`,
 * `ScrapeMetricsEndpoint`) and its metrics parser (`parseDCGMAcceleratorMetrics`), recorded in
 * ../shared/upstream-notes/profiler.md §2.2 and dgdr.md §3.2, §3.5.
 *
 * Where we part from upstream (issue 20 item 1, "the same rule everywhere a function reads what a
 * Job or a user could also write"): upstream reads any pod carrying an exporter label in any
 * namespace, so anyone who can create a pod could serve fabricated GPU metrics. Here an exporter
 * pod is read only when it proves it is the administrator's ({@link exporterPodTrust}: a trusted
 * namespace, controlled by a DaemonSet), and its metrics count only for the node it runs on
 * ({@link readExporterMetrics} with the pod's `spec.nodeName`).
 * @module
 */
import { controllerRefOf } from '../ownership.js';
import { hasIntelXpuMetricFamilies, readIntelXpuMetrics } from './intel-xpu.js';

/** Label selectors of DCGM exporter pods, in upstream's order (`listDCGMExporterPods`). */
export const DCGM_EXPORTER_SELECTORS: readonly string[] = ['app=nvidia-dcgm-exporter', 'app=dcgm-exporter', 'app.kubernetes.io/name=dcgm-exporter'];
/** Where a GPU Operator runs its pods, and their selectors (`listGPUOperatorRunningPods`). */
export const GPU_OPERATOR_NAMESPACE = 'gpu-operator';
export const GPU_OPERATOR_SELECTORS: readonly string[] = ['app=gpu-operator', 'app.kubernetes.io/name=gpu-operator'];
/**
 * The namespaces whose exporter pods are trusted when the administrator names none: the GPU
 * Operator's, where its `nvidia-dcgm-exporter` DaemonSet runs (NVIDIA gpu-operator
 * assets/state-dcgm-exporter). Intel XPU Manager has no such convention (its kustomize manifests
 * install into whatever namespace kubectl targets, usually `default`, which users can write), so
 * its namespace must be named. Issue 20 item 1.
 */
export const DEFAULT_EXPORTER_NAMESPACES: readonly string[] = [GPU_OPERATOR_NAMESPACE];
/** The value that trusts exporter pods in any namespace, as upstream does (for a switch-over only: any user who can create a pod there can then plant one). */
export const ANY_EXPORTER_NAMESPACE = '*';
/** The setting naming the trusted exporter namespaces (comma separated; chart value `hardwareDiscovery.exporterNamespaces`). */
export const ENV_EXPORTER_NAMESPACES = 'GPU_EXPORTER_NAMESPACES';
/** The controller kind a trusted exporter pod has (`apps/v1` DaemonSet): one pod per node, run by the administrator's DaemonSet. */
export const EXPORTER_CONTROLLER = { apiVersion: 'apps/v1', kind: 'DaemonSet' } as const;
/** The labels by which a DCGM (`Hostname`) or Intel XPU (`node_name`) sample names its node. */
export const EXPORTER_NODE_LABELS: readonly string[] = ['Hostname', 'node_name'];

const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** What {@link ENV_EXPORTER_NAMESPACES} takes, as a configuration error words it ("<key> must be <this>, got <value>"). */
export const EXPORTER_NAMESPACES_EXPECTED = `comma-separated namespace names (lowercase RFC 1123 labels), or "${ANY_EXPORTER_NAMESPACE}" for any namespace`;

/**
 * Parses the trusted exporter namespaces setting: comma-separated namespace names (spaces around
 * commas ignored, duplicates dropped), or `*` for any namespace (upstream's behaviour). Unset or
 * empty gives {@link DEFAULT_EXPORTER_NAMESPACES}. Out: the namespaces, or the first entry that is
 * neither (`invalid`; see {@link EXPORTER_NAMESPACES_EXPECTED}). Pure.
 */
export function parseExporterNamespaces(text: string | undefined): { readonly ok: true; readonly namespaces: readonly string[] } | { readonly ok: false; readonly invalid: string } {
  const entries = (text ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (entries.length === 0) return { ok: true, namespaces: DEFAULT_EXPORTER_NAMESPACES };
  const invalid = entries.find((entry) => entry !== ANY_EXPORTER_NAMESPACE && (entry.length > 63 || !NAMESPACE_NAME.test(entry)));
  return invalid === undefined ? { ok: true, namespaces: [...new Set(entries)] } : { ok: false, invalid };
}

/** Whether an exporter pod may be read, or why not. */
export type ExporterPodTrust = { readonly isTrusted: true } | { readonly isTrusted: false; readonly reason: string };

/**
 * The trust rule of hardware discovery: an exporter pod is read only when
 * (a) it runs in a namespace the cluster administrator names (`trustedNamespaces`; `*` is any), and
 * (b) it is controlled by a DaemonSet (its controller owner reference is an `apps/v1` DaemonSet).
 * (c), that its metrics count only for its own node, is {@link readExporterMetrics}'s.
 * Anyone who can create a pod can give it an exporter's labels; only the administrator can run
 * a DaemonSet in the GPU Operator's namespace. Out: trusted, or the reason (`namespace <ns> is not
 * a trusted exporter namespace (<list>)`, `not controlled by a DaemonSet`).
 * Source: issue 20 item 1 ("a function only trusts what it can prove"); upstream trusts any
 * labelled pod (discovery.go `listDCGMExporterPods`). Pure.
 */
export function exporterPodTrust(pod: Pick<DcgmExporterPod, 'namespace' | 'controller'>, trustedNamespaces: readonly string[]): ExporterPodTrust {
  if (!trustedNamespaces.includes(ANY_EXPORTER_NAMESPACE) && !trustedNamespaces.includes(pod.namespace)) {
    return { isTrusted: false, reason: `namespace ${pod.namespace} is not a trusted exporter namespace (${trustedNamespaces.join(', ')})` };
  }
  if (pod.controller?.kind !== EXPORTER_CONTROLLER.kind || pod.controller.apiVersion !== EXPORTER_CONTROLLER.apiVersion) {
    return { isTrusted: false, reason: 'not controlled by a DaemonSet' };
  }
  return { isTrusted: true };
}

/** An exporter pod left unread, and why ({@link exporterPodTrust}). */
export interface UntrustedExporterPod {
  readonly namespace: string;
  readonly name: string;
  readonly reason: string;
}

/**
 * Splits one source's labelled pods into the trusted ones (read) and the untrusted ones (named,
 * never scraped), each in list order ({@link exporterPodTrust}). Pure.
 */
export function splitExporterPods<P extends Pick<DcgmExporterPod, 'namespace' | 'name' | 'controller'>>(pods: readonly P[], trustedNamespaces: readonly string[]): { readonly trusted: readonly P[]; readonly untrusted: readonly UntrustedExporterPod[] } {
  const trusted: P[] = [];
  const untrusted: UntrustedExporterPod[] = [];
  for (const pod of pods) {
    const trust = exporterPodTrust(pod, trustedNamespaces);
    if (trust.isTrusted) trusted.push(pod);
    else untrusted.push({ namespace: pod.namespace, name: pod.name, reason: trust.reason });
  }
  return { trusted, untrusted };
}

/** The controller of a pod as discovery records it: kind and apiVersion of its `controller: true` owner reference. Pure. */
export function exporterControllerOf(pod: Parameters<typeof controllerRefOf>[0]): DcgmExporterPod['controller'] {
  const ref = controllerRefOf(pod);
  return ref === undefined ? undefined : { apiVersion: ref.apiVersion, kind: ref.kind, name: ref.name };
}

/** Any pod here whose name contains `rdma` means InfiniBand RDMA (`detectIBPods`). */
export const NETWORK_OPERATOR_NAMESPACE = 'nvidia-network-operator';
/** `defaultDCGMEndpointTemplate`; the env `DCGM_METRICS_ENDPOINT_TEMPLATE` replaces it. */
export const DEFAULT_DCGM_ENDPOINT_TEMPLATE = 'http://{POD_IP}:9400/metrics';
export const ENV_DCGM_ENDPOINT_TEMPLATE = 'DCGM_METRICS_ENDPOINT_TEMPLATE';
/** Upstream `requestTimeout` (whole request) and `dialTimeout` (TCP connect), in seconds, for every exporter. */
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

export type PrometheusParse =
  | {
      readonly ok: true;
      readonly samples: readonly PrometheusSample[];
      /** The families a `# HELP` or `# TYPE` line names, in order (a family may be declared with no sample). */
      readonly families: readonly string[];
    }
  | { readonly ok: false; readonly error: string };

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const DECLARATION = /^#\s+(HELP|TYPE)\s+(.*)$/;

/**
 * Parses the Prometheus text exposition format (version 0.0.4) into samples. `#` lines are
 * comments except `# HELP` and `# TYPE`, which declare a family; blank lines are skipped; label
 * values may hold the escapes `\\`, `\"`, `\n`; values are Go floats (`NaN`, `+Inf`, `-Inf`
 * included); a timestamp may follow the value. UTF-8 names are quoted, as Prometheus writes them
 * (`{"hw.gpu.info","hw.id"="0"} 1`, `# TYPE "hw.gpu.info" gauge`): upstream parses with
 * `expfmt.NewTextParser(model.UTF8Validation)`, and XPU Manager's OpenTelemetry names may be dotted.
 * In: the body text. Out: every sample in order and the declared families, or the first line that
 * is not a sample (`parse prometheus metrics: line N: <why>`), as upstream's expfmt parser refuses a
 * body that is not Prometheus text (upstream TestScrapeMetricsEndpoint "invalid metrics").
 * Why our own: only sample lines and family names are needed, and no maintained TypeScript parser
 * exists on npm. Pure.
 */
export function parsePrometheusText(text: string): PrometheusParse {
  const samples: PrometheusSample[] = [];
  const families: string[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    const line = (lines[index] ?? '').trim();
    if (line === '') continue;
    if (line.startsWith('#')) {
      const family = declaredFamily(line);
      if (family !== undefined && !families.includes(family)) families.push(family);
      continue;
    }
    const sample = parseSampleLine(line);
    if (typeof sample === 'string') return { ok: false, error: `parse prometheus metrics: line ${index + 1}: ${sample}` };
    samples.push(sample);
  }
  return { ok: true, samples, families };
}

/** The family a `# HELP` / `# TYPE` line names (bare or quoted), or undefined for a comment. */
function declaredFamily(line: string): string | undefined {
  const declaration = DECLARATION.exec(line)?.[2];
  if (declaration === undefined) return undefined;
  if (declaration.startsWith('"')) {
    const quoted = readQuoted(declaration.slice(1));
    return quoted.ok ? quoted.value : undefined;
  }
  return /^\S+/.exec(declaration)?.[0];
}

/** A quoted string's value (the opening quote already consumed) and the text after its closing quote. */
function readQuoted(text: string): { readonly ok: true; readonly value: string; readonly rest: string } | { readonly ok: false; readonly why: 'escape' | 'unterminated' } {
  let value = '';
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index] as string;
    if (char === '"') return { ok: true, value, rest: text.slice(index + 1) };
    if (char !== '\\') {
      value += char;
      continue;
    }
    index += 1;
    const escaped = text[index];
    if (escaped === 'n') value += '\n';
    else if (escaped === '\\' || escaped === '"') value += escaped;
    else return { ok: false, why: 'escape' };
  }
  return { ok: false, why: 'unterminated' };
}

/** One sample line, or why it is not one. */
function parseSampleLine(line: string): PrometheusSample | string {
  let name = METRIC_NAME.exec(line)?.[0];
  let rest = name === undefined ? line : line.slice(name.length);
  if (name === undefined && !rest.startsWith('{')) return `invalid metric name in ${JSON.stringify(line)}`;
  const labels: Record<string, string> = {};
  if (rest.startsWith('{')) {
    rest = rest.slice(1);
    for (;;) {
      rest = rest.trimStart();
      if (rest.startsWith('}')) {
        rest = rest.slice(1);
        break;
      }
      let labelName: string;
      if (rest.startsWith('"')) {
        const quoted = readQuoted(rest.slice(1));
        if (!quoted.ok) return `${quoted.why === 'escape' ? 'invalid escape in' : 'unterminated'} quoted name in ${JSON.stringify(line)}`;
        rest = quoted.rest.trimStart();
        if (!rest.startsWith('=')) {
          // A quoted string with no value is the metric name (UTF-8 syntax).
          if (name !== undefined) return `a second metric name in ${JSON.stringify(line)}`;
          name = quoted.value;
          if (rest.startsWith(',')) rest = rest.slice(1);
          else if (!rest.startsWith('}')) return `expected , or } after the metric name in ${JSON.stringify(line)}`;
          continue;
        }
        labelName = quoted.value;
      } else {
        const bare = LABEL_NAME.exec(rest)?.[0];
        if (bare === undefined) return `invalid label name in ${JSON.stringify(line)}`;
        labelName = bare;
        rest = rest.slice(bare.length).trimStart();
      }
      if (!rest.startsWith('=')) return `expected ="value" after label ${labelName} in ${JSON.stringify(line)}`;
      rest = rest.slice(1).trimStart();
      if (!rest.startsWith('"')) return `expected ="value" after label ${labelName} in ${JSON.stringify(line)}`;
      const value = readQuoted(rest.slice(1));
      if (!value.ok) return `${value.why === 'escape' ? 'invalid escape in label' : 'unterminated value of label'} ${labelName} in ${JSON.stringify(line)}`;
      labels[labelName] = value.value;
      rest = value.rest.trimStart();
      if (rest.startsWith(',')) rest = rest.slice(1);
      else if (!rest.startsWith('}')) return `expected , or } after label ${labelName} in ${JSON.stringify(line)}`;
    }
  }
  if (name === undefined) return `missing metric name in ${JSON.stringify(line)}`;
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

/** What one exporter (DCGM or Intel XPU) says about its node. */
export interface DcgmReading {
  /** The `Hostname` label (Intel: `node_name`); "" when absent. */
  readonly hostname: string;
  /** Distinct `gpu` label values of DCGM_FI_DEV_GPU_TEMP (Intel: distinct device ids of `hw_gpu_info`). */
  readonly gpuCount: number;
  /** The first `modelName` label (Intel: the device name); "" when absent. */
  readonly model: string;
  /** VRAM per GPU in MiB: the largest FB_FREE + FB_USED + FB_RESERVED over the GPUs (Intel: device memory size). */
  readonly vramMb: number;
  /** `nvlink` when a GPU reports NVLink links, else `pcie` (Intel: always `pcie`). */
  readonly interconnect: 'nvlink' | 'pcie';
  /** `full-mesh` (>= 12 links), `high` (>= 6), `partial`, or `none` without NVLink. */
  readonly interconnectTier: 'full-mesh' | 'high' | 'partial' | 'none';
  /** The first positive DCGM_FI_DEV_NVLINK_LINK_COUNT (0 without NVLink). */
  readonly nvlinkLinks: number;
  /** Intel XPU exporters only: the first `pci_device_id` label ("" when absent), which the SKU is also inferred from. */
  readonly pciDeviceId?: string;
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
 * Reads one scraped body: Prometheus text, then Intel XPU metrics when the body has the
 * `hw_gpu_info` family ({@link hasIntelXpuMetricFamilies}), DCGM metrics otherwise, whichever
 * exporter label found the pod. With `nodeName` (the pod's `spec.nodeName`), a sample whose node
 * label (`Hostname`, Intel `node_name`: {@link EXPORTER_NODE_LABELS}) names another node is
 * ignored: an exporter speaks only for the node it runs on (the GPU Operator's DaemonSet sets
 * `NODE_NAME` from `spec.nodeName`, which dcgm-exporter writes as `Hostname`). Failures: the
 * parse error, or the chosen reader's (so a body only about other nodes is `no GPUs detected from
 * DCGM metrics`).
 * Source: upstream `ScrapeMetricsEndpoint` ("if hasIntelMetricFamilies ... parseIntelMetrics");
 * the node rule is issue 20 item 1's (upstream counts every sample). Pure.
 */
export function readExporterMetrics(body: string, nodeName?: string): DcgmReadingResult {
  const parsed = parsePrometheusText(body);
  if (!parsed.ok) return parsed;
  const own = nodeName === undefined ? parsed : { ...parsed, samples: parsed.samples.filter((sample) => isSampleOfNode(sample, nodeName)) };
  return hasIntelXpuMetricFamilies(own) ? readIntelXpuMetrics(own) : readDcgmMetrics(own.samples);
}

/** A sample with no node label, or whose node labels all name `nodeName`. */
function isSampleOfNode(sample: PrometheusSample, nodeName: string): boolean {
  return EXPORTER_NODE_LABELS.every((label) => {
    const value = sample.labels[label];
    return value === undefined || value === '' || value === nodeName;
  });
}

/**
 * The URL an exporter pod is scraped at: every `{POD_IP}` in the template replaced by the pod's IP,
 * an IPv6 address in brackets unless the template already brackets it (`http://[{POD_IP}]:9400/...`).
 * Source: upstream `buildDCGMEndpoints` (template `http://{POD_IP}:9400/metrics`, or
 * `$DCGM_METRICS_ENDPOINT_TEMPLATE`) and `buildIntelMetricsEndpoints` (`http://{POD_IP}:8080/metrics`,
 * or `$INTEL_XPU_METRICS_ENDPOINT_TEMPLATE`); IPv6 as upstream's newer `buildDCGMEndpoint`
 * (TestBuildDCGMEndpoint, TestDiscoverGPUsFromDCGMIPv6), applied to the Intel endpoint alike. Pure.
 */
export function metricsEndpoint(template: string, podIp: string): string {
  const host = podIp.includes(':') && !template.includes('[{POD_IP}]') ? `[${podIp}]` : podIp;
  return template.replaceAll('{POD_IP}', host);
}

/** An exporter pod (DCGM or Intel XPU) as discovery sees it, with the outcome of its scrape when it was scraped. */
export interface DcgmExporterPod {
  readonly namespace: string;
  readonly name: string;
  /** `spec.nodeName` ("" when unscheduled). */
  readonly nodeName: string;
  readonly phase: string;
  /** `status.podIP` ("" when none). */
  readonly podIp: string;
  /** The pod's controller owner reference (`controller: true`), when it has one ({@link exporterPodTrust} reads it). */
  readonly controller?: { readonly apiVersion: string; readonly kind: string; readonly name: string };
  /** The endpoint scraped and its body, or the scrape's error (`HTTP GET <endpoint> failed: ...`, `metrics endpoint <endpoint> returned status <n>`); absent for a pod not scraped. */
  readonly scrape?: { readonly endpoint: string; readonly ok: true; readonly body: string } | { readonly endpoint: string; readonly ok: false; readonly error: string };
}

/** Only a Running pod with an IP is scraped (upstream `discoverPrometheusPods`). Pure. */
export function isScrapableExporterPod(pod: Pick<DcgmExporterPod, 'phase' | 'podIp'>): boolean {
  return pod.phase === 'Running' && pod.podIp !== '';
}

/** One metrics source's exporter pods, or why they could not be listed. */
export interface ExporterPodsFacts {
  /** Why the exporter pods could not be listed (e.g. the API server refused it); the pods are then empty. */
  readonly listError?: string;
  /** The source's trusted exporter pods ({@link exporterPodTrust}), deduplicated by namespace/name, in list order. */
  readonly exporterPods: readonly DcgmExporterPod[];
  /** The source's labelled pods that were not trusted, and why: never scraped, named in discovery's failure message. */
  readonly untrustedPods?: readonly UntrustedExporterPod[];
}

/**
 * What the function observed for metrics discovery: the DCGM exporters (the fields of this object)
 * and, when they were read, the Intel XPU exporters (`intelXpu`; read only when DCGM gives no
 * matching node, as upstream tries its sources in order).
 */
export interface DcgmFacts extends ExporterPodsFacts {
  /** Whether Running GPU Operator pods exist in `gpu-operator` (only read when there are no exporter pods). */
  readonly isGpuOperatorRunning: boolean;
  /** The Intel XPU exporter pods and their scrapes; absent when not read (as no pods). */
  readonly intelXpu?: ExporterPodsFacts;
}

/** One node as an exporter describes it. */
export interface DcgmNode {
  /** The node's name: the pod's `spec.nodeName` (never a name the exporter's metrics give). */
  readonly name: string;
  readonly product: string;
  readonly gpuCount: number;
  readonly vramMb: number;
  readonly interconnect: 'nvlink' | 'pcie';
  /** Intel XPU exporters only: the PCI device id (`pci_device_id`). */
  readonly pciDeviceId?: string;
}

export type DcgmNodesResult = { readonly ok: true; readonly nodes: readonly DcgmNode[] } | { readonly ok: false; readonly error: string };

/** Upstream's names of its metrics sources, as its messages print them (`prometheusDiscoverySources`). */
export type MetricsSource = 'dcgm' | 'intel-xpumd';

/**
 * The GPU nodes one source's exporter pods describe, one per node (the first exporter of a node
 * wins, so two exporters on one node count once), or why none, with upstream's messages:
 * `failed to scrape any <source> exporter pod: [pod <name> (<ip>): <endpoint>: <error> ...]` (HTTP,
 * status, parse and reader errors alike), or `no GPU metrics could be parsed from any <source>
 * exporter pod` when none was scrapable. In: the source's pods with their scrapes. A pod gives
 * only its own node (`spec.nodeName`), counting only the samples about that node
 * ({@link readExporterMetrics}); a pod with no node gives none (upstream names it by the
 * exporter's `Hostname`, which the exporter chooses: issue 20 item 1).
 * Source: upstream `discoverPrometheusPods`, `scrapeAnyEndpoint` (profiler.md §2.2); its test
 * TestDiscoverGPUsFromIntelExporterFiltered "dedupes same node across multiple intel exporter pods". Pure.
 */
export function readExporterNodes(source: MetricsSource, exporterPods: readonly DcgmExporterPod[]): DcgmNodesResult {
  const nodes: DcgmNode[] = [];
  const errors: string[] = [];
  for (const pod of exporterPods) {
    if (!isScrapableExporterPod(pod) || pod.nodeName === '' || pod.scrape === undefined) continue;
    const reading = pod.scrape.ok ? readExporterMetrics(pod.scrape.body, pod.nodeName) : { ok: false as const, error: pod.scrape.error };
    if (!reading.ok) {
      errors.push(`pod ${pod.name} (${pod.podIp}): ${pod.scrape.endpoint}: ${reading.error}`);
      continue;
    }
    const name = pod.nodeName;
    if (nodes.some((n) => n.name === name)) continue;
    const { model, gpuCount, vramMb, interconnect, pciDeviceId } = reading.reading;
    nodes.push({ name, product: model, gpuCount, vramMb, interconnect, ...(pciDeviceId === undefined ? {} : { pciDeviceId }) });
  }
  if (nodes.length > 0) return { ok: true, nodes };
  return { ok: false, error: errors.length > 0 ? `failed to scrape any ${source} exporter pod: [${errors.join(' ')}]` : `no GPU metrics could be parsed from any ${source} exporter pod` };
}

/**
 * Whether the `nvidia-network-operator` namespace runs an RDMA pod (a name containing `rdma`),
 * which upstream takes as InfiniBand RDMA for the whole cluster. Source: upstream `detectIBPods`
 * (dgdr.md §3.5). Pure.
 */
export function hasInfinibandPods(networkOperatorPodNames: readonly string[]): boolean {
  return networkOperatorPodNames.some((name) => name.includes('rdma'));
}
