/**
 * Hardware discovery for a DGDR from the cluster's Nodes: GPU Feature Discovery labels, SKU
 * normalisation, the auto-selected shape, the GPU budget and every mismatch the reference names.
 *
 * Source: ../shared/reference/dgdr-reference.txt "hardware" (gpuSku, vramMb, totalGpus,
 * numGpusPerNode, interconnect, rdma) and "SKU format"; upstream deploy/operator/internal/gpu/discovery.go
 * (`InferHardwareSystem`, node-label discovery, RDMA labels, the 32-GPU cap) as recorded in
 * ../shared/upstream-notes/profiler.md §2 and dgdr.md §3. The reference wins where they differ
 * (b300_sxm, vr_nvl72, gb200, the 10 % tolerance, shape-only budgets). Where metrics exporters
 * run, their metrics describe the nodes first (DCGM, then Intel XPU: ./dcgm.ts, ./intel-xpu.ts), as
 * upstream's `enrichHardwareFromDiscovery` tries its metrics sources before node labels.
 * @module
 */
import { GPU_SKUS, type DgdrHardware, type GpuSku } from '../../api/index.js';
import { hasInfinibandPods, readExporterNodes, type DcgmFacts, type DcgmNode, type MetricsSource } from './dcgm.js';

/** GPU Feature Discovery labels (upstream-notes/profiler.md §2.3). */
export const LABEL_GPU_COUNT = 'nvidia.com/gpu.count';
export const LABEL_GPU_PRODUCT = 'nvidia.com/gpu.product';
export const LABEL_GPU_MEMORY = 'nvidia.com/gpu.memory';
/** RDMA signals on nodes (upstream-notes/dgdr.md §3.5). */
export const LABEL_RDMA_PRESENT = 'nvidia.com/rdma.present';
export const LABEL_SRIOV_CAPABLE = 'feature.node.kubernetes.io/network-sriov.capable';

/** "The result is temporarily capped at 32 to limit the profiler search space" (dgdr-reference "totalGpus"). */
export const MAX_AUTO_TOTAL_GPUS = 32;
/** How long a successful metrics discovery is reused, per SKU filter (upstream `cache.Set(filterSKU, info, 60*time.Second)`). */
export const GPU_DISCOVERY_CACHE_TTL_SECONDS = 60;

/** A cached discovery is fresh strictly before its expiry (upstream `GPUDiscoveryCache.Get`: `time.Now().Before(e.expiresAt)`). Pure. */
export function isGpuDiscoveryCacheEntryFresh(expiresAt: Date, now: Date): boolean {
  return now.getTime() < expiresAt.getTime();
}

/** "An explicit value within 10% of the auto-selected shape's measured VRAM permits automatic GPU-budget discovery" (dgdr-reference "vramMb"). */
export const VRAM_TOLERANCE = 0.1;

/** A Node as discovery reads it: its name and labels. */
export interface NodeFacts {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * Intel Arc Pro B60 (PCI device `0xe211`): an AISimulate system (dgdr-reference "v1beta2 hardware
 * SKU" lists `b60`) that discovery can name, but not a v1beta1 `gpuSku` (dgdr-reference "SKU format").
 * Source: upstream `GPUSKUTypeB60`, `tokenE211`.
 */
export const GPU_SKU_B60 = 'b60';
/** What SKU normalisation can name: a v1beta1 `gpuSku`, or an AISimulate system v1beta1 cannot hold. */
export type DiscoveredGpuSku = GpuSku | typeof GPU_SKU_B60;

/** Whether a discovered SKU is a v1beta1 `spec.hardware.gpuSku` value (dgdr-reference "SKU format"). Pure. */
export function isGpuSku(sku: string): sku is GpuSku {
  return (GPU_SKUS as readonly string[]).includes(sku);
}

/** One GPU node: its product, normalised SKU (undefined when unknown), GPU count and VRAM per GPU (MiB). */
export interface GpuNode {
  readonly name: string;
  readonly product: string;
  readonly sku: DiscoveredGpuSku | undefined;
  readonly gpuCount: number;
  readonly vramMb: number;
  readonly hasRdma: boolean;
  /** `nvlink` or `pcie`, known only from DCGM metrics (the node-label path yields none, dgdr.md §3.5). */
  readonly interconnect?: 'nvlink' | 'pcie';
}

/** SKU rules in order; the first token contained in the normalised product wins (GB200 before B200, L40S before L40 before L4). */
const SKU_RULES: readonly { readonly token: string; readonly sxm?: GpuSku; readonly pcie?: GpuSku; readonly single?: DiscoveredGpuSku }[] = [
  // dgdr-reference "SKU format": VR NVL72 -> vr_nvl72, GB200 -> gb200, B300 SXM6 -> b300_sxm.
  { token: 'VRNVL72', single: 'vr_nvl72' },
  { token: 'GB200', single: 'gb200' },
  { token: 'GB10', single: 'gb10' },
  { token: 'B300', sxm: 'b300_sxm' },
  // upstream InferHardwareSystem (upstream-notes/profiler.md §2.4).
  { token: 'B200', sxm: 'b200_sxm' },
  { token: 'H200', sxm: 'h200_sxm' },
  { token: 'H100', sxm: 'h100_sxm', pcie: 'h100_pcie' },
  { token: 'A100', sxm: 'a100_sxm', pcie: 'a100_pcie' },
  { token: 'A30', single: 'a30' },
  { token: 'L40S', single: 'l40s' },
  { token: 'L40', single: 'l40' },
  { token: 'L4', single: 'l4' },
  { token: 'V100', sxm: 'v100_sxm', pcie: 'v100_pcie' },
  { token: 'T4', single: 't4' },
  { token: 'MI300', single: 'mi300' },
  { token: 'MI250', single: 'mi200' },
  { token: 'MI200', single: 'mi200' },
  // upstream InferHardwareSystem, Intel: PCI device 0xe211 (TestInferHardwareSystem "Intel e211 maps to B60").
  { token: 'E211', single: GPU_SKU_B60 },
];

/**
 * Normalises a GPU product name to a `gpuSku`, or undefined when no rule matches.
 * Rules: uppercase, dashes become spaces, spaces removed; form factor sxm when the name contains
 * `SXM`, `HGX` or `DGX` (even beside `PCIE`), else pcie; a matched GPU with only an SXM SKU maps to it
 * without a hint. So `NVIDIA B300 SXM6 AC` -> `b300_sxm`, `NVIDIA VR NVL72 ES` and
 * `NVIDIA-VR-NVL72-ES` -> `vr_nvl72`, `NVIDIA GB200` -> `gb200`, `NVIDIA-H100-80GB-HBM3` -> `h100_pcie`,
 * `Intel(R) Graphics [0xe211]` -> `b60` (not a v1beta1 gpuSku: {@link GPU_SKU_B60}).
 * Source: dgdr-reference "SKU format"; upstream `InferHardwareSystem` (upstream-notes/profiler.md §2.4). Pure.
 */
export function normalizeGpuProduct(product: string): DiscoveredGpuSku | undefined {
  const normalised = product.toUpperCase().replaceAll('-', ' ').replaceAll(' ', '');
  // Upstream detectFormFactor checks SXM/HGX/DGX first: with both hints SXM wins; PCIE and no hint are pcie.
  const isSxm = /SXM|HGX|DGX/.test(normalised);
  for (const rule of SKU_RULES) {
    if (!normalised.includes(rule.token)) continue;
    if (rule.single !== undefined) return rule.single;
    if (rule.sxm !== undefined && rule.pcie === undefined) return rule.sxm;
    return isSxm ? rule.sxm : rule.pcie;
  }
  return undefined;
}

/**
 * The SKU of an Intel XPU exporter's devices: the device name's, else the PCI device id's
 * (`e211` or `0xe211` -> `b60`), else undefined. Upstream also maps `0xe211` with at least 24000
 * MiB to b60 after both; the `E211` token has then already matched, so that rule adds nothing here.
 * Source: upstream `inferIntelHardwareSystem` (discovery.go); its tests TestScrapeMetricsEndpoint
 * "xpumd metrics" and the XPUMD sample of deploy/observability (`hw_model` "Intel(R) Arc(TM) Pro
 * B60 Graphics", `pci_device_id` "e211"). Pure.
 */
export function inferIntelXpuSku(deviceName: string, pciDeviceId: string): DiscoveredGpuSku | undefined {
  return normalizeGpuProduct(deviceName) ?? normalizeGpuProduct(pciDeviceId);
}

function positiveInteger(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d+$/.test(text.trim())) return undefined;
  const value = Number(text);
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
}

/**
 * Reads one node's GPU Feature Discovery labels: `nvidia.com/gpu.count` (integer > 0),
 * `nvidia.com/gpu.product` (non-empty), `nvidia.com/gpu.memory` (MiB, integer > 0). A node with a
 * missing or invalid label is not a GPU node (undefined). RDMA from `nvidia.com/rdma.present=true` or
 * `feature.node.kubernetes.io/network-sriov.capable=true`.
 * Source: upstream-notes/profiler.md §2.3; dgdr.md §3.5. Pure.
 */
export function readGpuNode(node: NodeFacts): GpuNode | undefined {
  const gpuCount = positiveInteger(node.labels[LABEL_GPU_COUNT]);
  const product = node.labels[LABEL_GPU_PRODUCT] ?? '';
  const vramMb = positiveInteger(node.labels[LABEL_GPU_MEMORY]);
  if (gpuCount === undefined || product.trim() === '' || vramMb === undefined) return undefined;
  return { name: node.name, product, sku: normalizeGpuProduct(product), gpuCount, vramMb, hasRdma: hasRdmaLabel(node) };
}

/**
 * `nvidia.com/rdma.present=true` or `feature.node.kubernetes.io/network-sriov.capable=true`.
 * Source: upstream `detectRDMAFromNode` (dgdr.md §3.5). Pure.
 */
export function hasRdmaLabel(node: NodeFacts | undefined): boolean {
  return node?.labels[LABEL_RDMA_PRESENT] === 'true' || node?.labels[LABEL_SRIOV_CAPABLE] === 'true';
}

/** What discovery reads besides the Nodes; each signal is optional (absent: not observed). */
export interface DiscoverySignals {
  /** The metrics exporters (DCGM, then Intel XPU) and their scrapes. */
  readonly dcgm?: DcgmFacts;
  /** Names of the pods in `nvidia-network-operator` (an `rdma` pod there means InfiniBand). */
  readonly networkOperatorPodNames?: readonly string[];
}

type GpuNodesResult = { readonly ok: true; readonly nodes: readonly GpuNode[] } | { readonly ok: false; readonly error: string };

/**
 * Whether any metrics exporter was seen (pods of either source, trusted or not, or a refused
 * list): without one, metrics discovery is simply absent. An untrusted pod counts, so that a
 * failed discovery's message names it (issue 20 item 1). Pure.
 */
export function hasMetricsExporters(dcgm: DcgmFacts): boolean {
  const sources = [dcgm, dcgm.intelXpu ?? { exporterPods: [] }];
  return sources.some((source) => source.exporterPods.length > 0 || source.listError !== undefined || (source.untrustedPods?.length ?? 0) > 0);
}

/** How many untrusted exporter pods a failure message names; the rest are counted (anyone can create many, and a condition message is bounded). */
export const MAX_NAMED_UNTRUSTED_EXPORTER_PODS = 10;

/**
 * `; ignored untrusted exporter pods: <ns>/<name> (<reason>), ...` for the untrusted pods of both
 * sources (the first {@link MAX_NAMED_UNTRUSTED_EXPORTER_PODS}, then `and <n> more`), or "". Pure.
 */
function untrustedPodsNote(dcgm: DcgmFacts): string {
  const untrusted = [...(dcgm.untrustedPods ?? []), ...(dcgm.intelXpu?.untrustedPods ?? [])];
  if (untrusted.length === 0) return '';
  const named = untrusted.slice(0, MAX_NAMED_UNTRUSTED_EXPORTER_PODS).map((pod) => `${pod.namespace}/${pod.name} (${pod.reason})`);
  const more = untrusted.length - named.length;
  return `; ignored untrusted exporter pods: ${named.join(', ')}${more > 0 ? `, and ${more} more` : ''}`;
}

/** An exporter's node with its SKU (Intel: from the device name, then the PCI device id) and the Node's RDMA labels. */
function gpuNodeOf(node: DcgmNode, nodes: readonly NodeFacts[]): GpuNode {
  return {
    name: node.name,
    product: node.product,
    sku: node.pciDeviceId === undefined ? normalizeGpuProduct(node.product) : inferIntelXpuSku(node.product, node.pciDeviceId),
    gpuCount: node.gpuCount,
    vramMb: node.vramMb,
    hasRdma: hasRdmaLabel(nodes.find((n) => n.name === node.name)),
    interconnect: node.interconnect,
  };
}

/**
 * Metrics discovery over its sources in upstream's order, DCGM then Intel XPU: the first source
 * whose exporters give a node (of `gpuSku`, when set) gives the nodes, with the SKU normalised, RDMA
 * from the Node's labels, and the interconnect. Failures, with upstream's messages:
 * - a source's pods could not be listed: `listing DCGM exporter pods failed: list pods: <error>` /
 *   `listing Intel XPUMD pods failed: list pods: <error>` (the sources after it are not tried);
 * - a source with pods gives nothing: `<source> discovery failed: <why>` (./dcgm.ts
 *   `readExporterNodes`, or `no GPU nodes matching SKU "<x>" found`), the failed sources joined by `; `;
 * - neither source has pods: `no GPU metrics exporters found: DCGM is not enabled in the GPU
 *   Operator and no Intel XPU exporter pods found` when GPU Operator pods run, else `no GPU metrics
 *   exporters found: no DCGM exporter pods found and no Intel XPU exporter pods found`.
 * - either failure ends with `; ignored untrusted exporter pods: <ns>/<name> (<reason>), ...` when
 *   labelled pods were not trusted (./dcgm.ts `exporterPodTrust`; issue 20 item 1, ours).
 * Intel exporters are read whatever `gpuSku` asks for: upstream tries both sources for every filter.
 * `gpuSku` is a v1beta1 `gpuSku` or a v1beta2 open `sku`: a node counts when its normalised SKU equals it.
 * Source: upstream `discoverFromMetricsSources`, `discoverPrometheusPods`, `normalizeScrapedGPUInfo`
 * (discovery.go; profiler.md §2.2). Pure.
 */
export function readMetricsGpuNodes(dcgm: DcgmFacts, gpuSku: string | undefined, nodes: readonly NodeFacts[]): GpuNodesResult {
  const sources: readonly { readonly source: MetricsSource; readonly listErrorPrefix: string; readonly facts: Pick<DcgmFacts, 'listError' | 'exporterPods'> }[] = [
    { source: 'dcgm', listErrorPrefix: 'listing DCGM exporter pods failed', facts: dcgm },
    { source: 'intel-xpumd', listErrorPrefix: 'listing Intel XPUMD pods failed', facts: dcgm.intelXpu ?? { exporterPods: [] } },
  ];
  const errors: string[] = [];
  for (const { source, listErrorPrefix, facts } of sources) {
    if (facts.listError !== undefined) return { ok: false, error: `${listErrorPrefix}: list pods: ${facts.listError}` };
    if (facts.exporterPods.length === 0) continue;
    const read = readExporterNodes(source, facts.exporterPods);
    const gpuNodes = read.ok ? read.nodes.map((n) => gpuNodeOf(n, nodes)) : [];
    if (read.ok && (gpuSku === undefined || gpuNodes.some((n) => n.sku === gpuSku))) return { ok: true, nodes: gpuNodes };
    errors.push(`${source} discovery failed: ${read.ok ? `no GPU nodes matching SKU "${gpuSku ?? ''}" found` : read.error}`);
  }
  if (errors.length > 0) return { ok: false, error: `${errors.join('; ')}${untrustedPodsNote(dcgm)}` };
  return {
    ok: false,
    error: `${
      dcgm.isGpuOperatorRunning
        ? 'no GPU metrics exporters found: DCGM is not enabled in the GPU Operator and no Intel XPU exporter pods found'
        : 'no GPU metrics exporters found: no DCGM exporter pods found and no Intel XPU exporter pods found'
    }${untrustedPodsNote(dcgm)}`,
  };
}

/** The hardware discovery decides: the complete hardware to persist, or the failure message. */
export type DiscoveryResult = { readonly ok: true; readonly hardware: DgdrHardware } | { readonly ok: false; readonly message: string };

function isWithinTolerance(requested: number, measured: number): boolean {
  return Math.abs(requested - measured) <= VRAM_TOLERANCE * measured;
}

/**
 * Whether required discovery is needed: any of gpuSku, vramMb, numGpusPerNode, totalGpus unset; its
 * failure fails the request. (Missing interconnect or rdma alone is best-effort:
 * {@link needsHardwareMetadataDiscovery}.) Source: upstream-notes/dgdr.md §3.1 "Enrichment". Pure.
 */
export function needsHardwareDiscovery(hardware: DgdrHardware | undefined): boolean {
  return hardware?.gpuSku === undefined || hardware.vramMb === undefined || hardware.numGpusPerNode === undefined || hardware.totalGpus === undefined;
}

/**
 * Whether only the capability metadata is missing: gpuSku, vramMb, numGpusPerNode and totalGpus
 * all set, but interconnect or rdma not. Upstream then still discovers, best-effort
 * ("metadataComplete := hw.Interconnect != \"\" && hw.RDMA != nil"; dgdr.md §3.1).
 * Source: upstream `enrichHardwareFromDiscovery`; dgdr-reference "interconnect", "rdma"
 * ("Best-effort discovery ... when omitted"). Pure.
 */
export function needsHardwareMetadataDiscovery(hardware: DgdrHardware | undefined): boolean {
  return !needsHardwareDiscovery(hardware) && (hardware?.interconnect === undefined || hardware.rdma === undefined);
}

/**
 * Best-effort discovery of the missing capability metadata for otherwise explicit hardware: the
 * discovery of {@link discoverHardware} restricted to the requested gpuSku (the explicit shape
 * fields are not checked against the cluster), then only `interconnect` (when measured by DCGM) and
 * `rdma` (false means "checked, not found") are filled where unset. Discovery finding nothing
 * leaves the hardware unchanged and never fails the request.
 * Source: upstream `enrichHardwareFromDiscovery` with `discoveryRequired` false ("leaving unset
 * fields unchanged"); dgdr.md §3.1. Pure.
 */
export function discoverHardwareMetadata(requested: DgdrHardware, nodes: readonly NodeFacts[], signals: DiscoverySignals = {}): DgdrHardware {
  const found = discoverHardware(requested.gpuSku === undefined ? {} : { gpuSku: requested.gpuSku }, nodes, signals);
  if (!found.ok) return requested;
  return {
    ...requested,
    ...(requested.interconnect === undefined && found.hardware.interconnect !== undefined ? { interconnect: found.hardware.interconnect } : {}),
    ...(requested.rdma === undefined ? { rdma: found.hardware.rdma ?? false } : {}),
  };
}

/**
 * Discovers the DGDR's hardware from the cluster's nodes, keeping every explicit value.
 * In: the requested `spec.hardware` (possibly absent), every Node (name, labels), and the DCGM and
 * network-operator signals when observed. Out: the hardware to persist (gpuSku, vramMb,
 * numGpusPerNode, totalGpus, rdma; interconnect when given or measured by DCGM), or a failure
 * message naming the value to set.
 * Source precedence (upstream `enrichHardwareFromDiscovery`, `DiscoverGPUHardware`): the DCGM
 * exporters' metrics describe the GPU nodes when they give any (so their model, measured VRAM and
 * NVLink interconnect win over GPU Feature Discovery labels); otherwise the GFD labels do. When
 * exporters exist but give nothing and the labels fail too, the message is upstream's
 * `metrics discovery failed: <dcgm error>; node-label discovery failed: <label error>`.
 * RDMA: a selected-type node's labels, or an `rdma` pod in `nvidia-network-operator` (InfiniBand).
 * Rules (dgdr-reference "hardware"):
 * - the auto-selected shape is the GPU type, GPUs per node and VRAM per GPU of the node with the most
 *   GPUs, ties broken by the highest VRAM per GPU; an explicit `gpuSku` restricts discovery (and the
 *   budget) to nodes of that SKU;
 * - `numGpusPerNode` defaults to the shape's count; `vramMb` to the shape's VRAM;
 * - `totalGpus`, when omitted, sums the GPUs of nodes of exactly that shape (equal measured VRAM), capped
 *   at 32; an explicit `vramMb` more than 10 % from the shape's measured VRAM, or a `numGpusPerNode` that
 *   differs from the shape, then fails ("set totalGpus explicitly");
 * - no value is ever persisted that the CRD would reject: an unknown product fails unless gpuSku is set.
 * Failures (messages are ours; the reference gives none): no GPU nodes; none matching gpuSku; unknown
 * product; the two shape mismatches. Pure.
 */
export function discoverHardware(requested: DgdrHardware | undefined, nodes: readonly NodeFacts[], signals: DiscoverySignals = {}): DiscoveryResult {
  const hardware = requested ?? {};
  const hasInfiniband = hasInfinibandPods(signals.networkOperatorPodNames ?? []);
  return discoverFromSources(hardware.gpuSku, nodes, signals, (gpuNodes) => selectHardware(hardware, gpuNodes, nodes.length, hasInfiniband), (metricsError, fromLabels) =>
    fromLabels.ok ? fromLabels : { ok: false, message: `metrics discovery failed: ${metricsError}; node-label discovery failed: ${fromLabels.message}` },
  );
}

/**
 * The source order of hardware discovery, shared by v1beta1 (the profile function) and v1beta2
 * (admission): the metrics exporters' nodes (DCGM, then Intel XPU: {@link readMetricsGpuNodes},
 * filtered by `gpuSku`) when they give any; otherwise the GPU Feature Discovery labels
 * ({@link readGpuNode}). `select` applies the version's rules to one source's GPU nodes. When
 * exporters exist but give nothing and the labels' selection fails too, `combine` words both
 * failures (upstream: `metrics discovery failed: <x>; node-label discovery failed: <y>`); without
 * any exporter pod (or with no `signals.dcgm` observed) the labels' result stands alone.
 * Source: upstream `enrichHardwareFromDiscovery`, `DiscoverGPUHardware` (dgdr.md §3.1-3.3). Pure.
 */
export function discoverFromSources<R extends { readonly ok: boolean }>(
  gpuSku: string | undefined,
  nodes: readonly NodeFacts[],
  signals: DiscoverySignals,
  select: (gpuNodes: readonly GpuNode[]) => R,
  combine: (metricsError: string, fromLabels: R) => R,
): R {
  const fromLabels = (): R => select(nodes.map(readGpuNode).filter((n): n is GpuNode => n !== undefined));
  if (signals.dcgm === undefined) return fromLabels();
  const fromMetrics = readMetricsGpuNodes(signals.dcgm, gpuSku, nodes);
  if (fromMetrics.ok) return select(fromMetrics.nodes);
  const labelled = fromLabels();
  if (labelled.ok || !hasMetricsExporters(signals.dcgm)) return labelled;
  return combine(fromMetrics.error, labelled);
}

/** The rules of {@link discoverHardware} over one source's GPU nodes. */
function selectHardware(hardware: DgdrHardware, gpuNodes: readonly GpuNode[], nodeCount: number, hasInfiniband: boolean): DiscoveryResult {
  if (gpuNodes.length === 0) {
    return {
      ok: false,
      message: `no nodes with NVIDIA GPU Feature Discovery labels found (checked ${nodeCount} nodes). Ensure GPU nodes have labels: ${LABEL_GPU_COUNT}, ${LABEL_GPU_PRODUCT}, ${LABEL_GPU_MEMORY}; or set spec.hardware.{gpuSku,vramMb,numGpusPerNode,totalGpus} explicitly`,
    };
  }
  const candidates = hardware.gpuSku === undefined ? gpuNodes : gpuNodes.filter((n) => n.sku === hardware.gpuSku);
  if (candidates.length === 0) {
    const found = [...new Set(gpuNodes.map((n) => n.sku ?? n.product))].sort().join(', ');
    return { ok: false, message: `no GPU nodes matching spec.hardware.gpuSku "${hardware.gpuSku ?? ''}" found (GPU types found: ${found}); set spec.hardware.gpuSku to one of them` };
  }
  const best = selectShapeNode(candidates);
  const sku = hardware.gpuSku ?? best.sku;
  if (sku !== undefined && !isGpuSku(sku)) {
    return {
      ok: false,
      message: `GPU product "${best.product}" on node ${best.name} is the AISimulate system ${sku}, which spec.hardware.gpuSku cannot hold (supported values: ${GPU_SKUS.join(', ')}); request this hardware as nvidia.com/v1beta2 with spec.hardware.gpu.sku ${sku}, budget and numGpusPerNode, or set spec.hardware.gpuSku to another GPU type`,
    };
  }
  if (sku === undefined) {
    return { ok: false, message: `GPU product "${best.product}" on node ${best.name} does not map to a known spec.hardware.gpuSku; set spec.hardware.gpuSku explicitly (supported values: ${GPU_SKUS.join(', ')})` };
  }
  const shapeNodes = candidates.filter((n) => n.sku === best.sku && n.gpuCount === best.gpuCount && n.vramMb === best.vramMb);
  let totalGpus = hardware.totalGpus;
  if (totalGpus === undefined) {
    if (hardware.vramMb !== undefined && !isWithinTolerance(hardware.vramMb, best.vramMb)) {
      return { ok: false, message: `spec.hardware.vramMb ${hardware.vramMb} differs by more than 10% from the measured ${best.vramMb} MiB of the auto-selected ${sku} shape (node ${best.name}); set spec.hardware.totalGpus explicitly to use that override` };
    }
    if (hardware.numGpusPerNode !== undefined && hardware.numGpusPerNode !== best.gpuCount) {
      return { ok: false, message: `spec.hardware.numGpusPerNode ${hardware.numGpusPerNode} differs from the ${best.gpuCount} GPUs per node of the auto-selected ${sku} shape (node ${best.name}); set spec.hardware.totalGpus explicitly to use that override` };
    }
    totalGpus = Math.min(shapeNodes.reduce((sum, n) => sum + n.gpuCount, 0), MAX_AUTO_TOTAL_GPUS);
  }
  return {
    ok: true,
    hardware: {
      ...hardware,
      gpuSku: sku,
      vramMb: hardware.vramMb ?? best.vramMb,
      numGpusPerNode: hardware.numGpusPerNode ?? best.gpuCount,
      totalGpus,
      rdma: hardware.rdma ?? (hasInfiniband || candidates.some((n) => n.hasRdma)),
      ...(hardware.interconnect === undefined && best.interconnect !== undefined ? { interconnect: best.interconnect } : {}),
    },
  };
}

/** The node with the most GPUs, ties broken by the highest VRAM per GPU, then by name (stable). */
function selectShapeNode(nodes: readonly GpuNode[]): GpuNode {
  const sorted = [...nodes].sort((a, b) => b.gpuCount - a.gpuCount || b.vramMb - a.vramMb || a.name.localeCompare(b.name));
  const best = sorted[0];
  if (best === undefined) throw new RangeError('selectShapeNode needs at least one node');
  return best;
}
