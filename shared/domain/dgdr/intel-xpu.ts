/**
 * Intel XPU exporter hardware discovery, the second metrics source after DCGM: which pods are
 * Intel XPU Manager exporters (`xpumd`, `intel-xpumanager`), where they are scraped, and what their
 * OpenTelemetry hardware metrics (`hw_gpu_info`, `hw_memory_size_bytes`) say about a node. The pod
 * and node reading shared with DCGM is in ./dcgm.ts; the SKU (`b60` for PCI device `0xe211`) is
 * inferred in ./discovery.ts. Everything here is pure.
 *
 * Source: upstream deploy/operator/internal/gpu/discovery.go (`listIntelXPUExporterPods`,
 * `buildIntelMetricsEndpoints`, `defaultXPUMDMetricsEndpoint`, `prometheusDiscoverySources`) and
 * its metrics parser (`hasIntelMetricFamilies`, `parseIntelAcceleratorMetrics`, `getMetricFamily`,
 * `getMetricLabel`); ../shared/upstream-notes/dgdr.md §3.2, profiler.md §2.2.
 * @module
 */
import type { DcgmReadingResult, PrometheusSample } from './dcgm.js';

/**
 * Label selectors of Intel XPU exporter pods, in upstream's order (`listIntelXPUExporterPods`:
 * `app` then `app.kubernetes.io/name`, each `xpumd` then `intel-xpumanager`; any namespace).
 */
export const INTEL_XPU_EXPORTER_SELECTORS: readonly string[] = ['app=xpumd', 'app=intel-xpumanager', 'app.kubernetes.io/name=xpumd', 'app.kubernetes.io/name=intel-xpumanager'];
/** Upstream `defaultXPUMDMetricsEndpoint`; the env `INTEL_XPU_METRICS_ENDPOINT_TEMPLATE` replaces it (`{POD_IP}` replaced). */
export const DEFAULT_INTEL_XPU_ENDPOINT_TEMPLATE = 'http://{POD_IP}:8080/metrics';
export const ENV_INTEL_XPU_ENDPOINT_TEMPLATE = 'INTEL_XPU_METRICS_ENDPOINT_TEMPLATE';

/** The device-info family, by its Prometheus and its OpenTelemetry (dotted) name, in upstream's order. */
export const INTEL_XPU_INFO_FAMILIES: readonly string[] = ['hw_gpu_info', 'hw.gpu.info'];
/** The memory-size family (bytes), by each name upstream accepts, in its order. */
export const INTEL_XPU_MEMORY_FAMILIES: readonly string[] = ['hw_memory_size_bytes', 'hw_memory_size', 'hw.memory.size'];
/** Labels naming a device, in upstream's order of preference. */
const DEVICE_ID_LABELS = ['device_id', 'hw_id', 'hw.id', 'pci_bdf', 'pci.bdf'];
/** Labels naming a device's model, in upstream's order of preference. */
const MODEL_LABELS = ['device_name', 'hw_model', 'hw.model', 'hw_name', 'hw.name'];
const PCI_DEVICE_ID_LABELS = ['pci_device_id', 'pci.device_id'];
const MEMORY_LOCATION_LABELS = ['hw_memory_location', 'hw.memory.location'];
const NODE_NAME_LABEL = 'node_name';
const BYTES_PER_MIB = 1024 * 1024;

/** A parsed body: its samples and the families its `# HELP`/`# TYPE` lines declare. */
export interface MetricFamilies {
  readonly samples: readonly PrometheusSample[];
  readonly families: readonly string[];
}

/**
 * The samples of the first of `names` that the body has as a family (declared, or sampled), or
 * undefined when it has none of them: a declared family with no sample is present and empty, as in
 * expfmt's family map. Source: upstream `getMetricFamily`. Pure.
 */
export function metricFamily(body: MetricFamilies, names: readonly string[]): readonly PrometheusSample[] | undefined {
  for (const name of names) {
    const samples = body.samples.filter((sample) => sample.name === name);
    if (samples.length > 0 || body.families.includes(name)) return samples;
  }
  return undefined;
}

/** The value of the first of `names` the sample carries ("" when none; a present empty label wins). Source: upstream `getMetricLabel`. Pure. */
function firstLabel(sample: PrometheusSample, names: readonly string[]): string {
  for (const name of names) {
    const value = sample.labels[name];
    if (value !== undefined) return value;
  }
  return '';
}

/** Whether a body is Intel XPU metrics: it has the `hw_gpu_info` (or `hw.gpu.info`) family. Source: upstream `hasIntelMetricFamilies`. Pure. */
export function hasIntelXpuMetricFamilies(body: MetricFamilies): boolean {
  return metricFamily(body, INTEL_XPU_INFO_FAMILIES) !== undefined;
}

/**
 * Reads an Intel XPU exporter's metrics the way upstream does:
 * - the devices are the distinct device ids (`device_id`, else `hw_id`, `hw.id`, `pci_bdf`,
 *   `pci.bdf`) of the `hw_gpu_info` samples; the model is the first `device_name` (else `hw_model`,
 *   `hw.model`, `hw_name`, `hw.name`), the PCI device id the first `pci_device_id`;
 * - VRAM per device (MiB, rounded) = its largest `hw_memory_size_bytes` (or `hw_memory_size`,
 *   `hw.memory.size`) sample whose `hw_memory_location` is `device` or absent; the reading's VRAM is
 *   the largest over the listed devices (0 when none has a size);
 * - the node from the first `node_name` label (memory samples first); interconnect `pcie`.
 * In: the parsed body. Out: the reading, or `no XPU devices detected from XPUMD metrics` when the
 * info family is missing or names no device.
 * Source: upstream `parseIntelAcceleratorMetrics`; values pinned by upstream TestScrapeMetricsEndpoint
 * "xpumd metrics" (3 devices, 25669140480 bytes = 24480 MiB). Pure.
 */
export function readIntelXpuMetrics(body: MetricFamilies): DcgmReadingResult {
  const info = metricFamily(body, INTEL_XPU_INFO_FAMILIES);
  const none = { ok: false as const, error: 'no XPU devices detected from XPUMD metrics' };
  if (info === undefined || info.length === 0) return none;
  let hostname = '';
  const memoryMibByDevice = new Map<string, number>();
  for (const sample of metricFamily(body, INTEL_XPU_MEMORY_FAMILIES) ?? []) {
    const deviceId = firstLabel(sample, DEVICE_ID_LABELS);
    if (deviceId === '') continue;
    const location = firstLabel(sample, MEMORY_LOCATION_LABELS).trim().toLowerCase();
    if (location !== '' && location !== 'device') continue;
    memoryMibByDevice.set(deviceId, Math.max(memoryMibByDevice.get(deviceId) ?? 0, Math.round(sample.value / BYTES_PER_MIB)));
    if (hostname === '') hostname = sample.labels[NODE_NAME_LABEL] ?? '';
  }
  const devices = new Set<string>();
  let model = '';
  let pciDeviceId = '';
  let vramMb = 0;
  for (const sample of info) {
    const deviceId = firstLabel(sample, DEVICE_ID_LABELS);
    if (deviceId === '') continue;
    devices.add(deviceId);
    if (model === '') model = firstLabel(sample, MODEL_LABELS);
    if (pciDeviceId === '') pciDeviceId = firstLabel(sample, PCI_DEVICE_ID_LABELS);
    if (hostname === '') hostname = sample.labels[NODE_NAME_LABEL] ?? '';
    vramMb = Math.max(vramMb, memoryMibByDevice.get(deviceId) ?? 0);
  }
  if (devices.size === 0) return none;
  return { ok: true, reading: { hostname, gpuCount: devices.size, model, vramMb, interconnect: 'pcie', interconnectTier: 'none', nvlinkLinks: 0, pciDeviceId } };
}
