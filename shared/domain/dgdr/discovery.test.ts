/**
 * The hardware discovery table: node fleets (GPU Feature Discovery labels) -> gpuSku, vramMb,
 * numGpusPerNode, totalGpus and rdma, or the exact failure. Rows quote
 * ../shared/reference/dgdr-reference.txt "hardware" / "SKU format"; upstream values from
 * upstream-notes/profiler.md §2 (InferHardwareSystem) and the controller test pinning two
 * `H200-SXM5-141GB` nodes with `gpuSku: h200_sxm` -> `totalGpus: 16` (dgdr.md §3.3).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../../test/support/paths.js';
import type { DgdrHardware } from '../../api/index.js';
import type { DcgmExporterPod, DcgmFacts } from './dcgm.js';
import {
  discoverHardware,
  discoverHardwareMetadata,
  MAX_NAMED_UNTRUSTED_EXPORTER_PODS,
  hasMetricsExporters,
  inferIntelXpuSku,
  isGpuDiscoveryCacheEntryFresh,
  needsHardwareMetadataDiscovery,
  normalizeGpuProduct,
  readMetricsGpuNodes,
  type DiscoveredGpuSku,
  type DiscoveryResult,
  type DiscoverySignals,
  type GpuNode,
  type NodeFacts,
} from './discovery.js';

function gpuNode(name: string, product: string, count: number, memoryMb: number, extra: Record<string, string> = {}): NodeFacts {
  return { name, labels: { 'nvidia.com/gpu.product': product, 'nvidia.com/gpu.count': String(count), 'nvidia.com/gpu.memory': String(memoryMb), 'nvidia.com/gpu.present': 'true', ...extra } };
}

const H100 = 'NVIDIA-H100-80GB-HBM3-SXM';
const H200 = 'H200-SXM5-141GB';

describe('normalizeGpuProduct', () => {
  it.each([
    { name: '"NVIDIA B300 SXM6 AC" -> b300_sxm', reason: 'dgdr-reference "SKU format"', input: 'NVIDIA B300 SXM6 AC', want: 'b300_sxm' },
    { name: '"NVIDIA VR NVL72 ES" -> vr_nvl72', reason: 'dgdr-reference "SKU format"', input: 'NVIDIA VR NVL72 ES', want: 'vr_nvl72' },
    { name: '"its GPU Feature Discovery form NVIDIA-VR-NVL72-ES" -> vr_nvl72', reason: 'dgdr-reference "SKU format"', input: 'NVIDIA-VR-NVL72-ES', want: 'vr_nvl72' },
    { name: '"GB200 discovery uses the canonical AISimulate identifier gb200"', reason: 'dgdr-reference "SKU format" (upstream gb200_sxm is deprecated)', input: 'NVIDIA GB200', want: 'gb200' },
    { name: 'GB200 NVL form -> gb200, never b200_sxm', reason: 'order: GB200 before B200 (upstream-notes/profiler.md §2.4)', input: 'NVIDIA-GB200-NVL72', want: 'gb200' },
    { name: 'NVIDIA-H100-80GB-HBM3 has no SXM hint -> h100_pcie', reason: 'upstream-notes/profiler.md §2.4 "consequence"', input: 'NVIDIA-H100-80GB-HBM3', want: 'h100_pcie' },
    { name: 'NVIDIA H100 80GB HBM3 SXM -> h100_sxm', reason: 'upstream InferHardwareSystem (SXM hint)', input: 'NVIDIA H100 80GB HBM3 SXM', want: 'h100_sxm' },
    { name: 'NVIDIA H100 PCIe -> h100_pcie', reason: 'upstream InferHardwareSystem', input: 'NVIDIA H100 PCIe', want: 'h100_pcie' },
    { name: 'H100 SXM PCIe -> h100_sxm: SXM wins over PCIe if both present', reason: 'upstream TestDetectFormFactor "SXM wins over PCIe if both present" (detectFormFactor checks SXM first)', input: 'H100 SXM PCIe', want: 'h100_sxm' },
    { name: '"NVIDIA H200" (SXM-only GPU) -> h200_sxm without a hint', reason: 'upstream-notes/profiler.md §2.4', input: 'NVIDIA H200', want: 'h200_sxm' },
    { name: 'NVIDIA-A100-SXM4-80GB -> a100_sxm', reason: 'upstream InferHardwareSystem', input: 'NVIDIA-A100-SXM4-80GB', want: 'a100_sxm' },
    { name: 'NVIDIA DGX A100 -> a100_sxm (DGX is an SXM hint)', reason: 'upstream InferHardwareSystem', input: 'NVIDIA DGX A100', want: 'a100_sxm' },
    { name: 'NVIDIA L40S -> l40s (L40S before L40 before L4)', reason: 'upstream InferHardwareSystem', input: 'NVIDIA L40S', want: 'l40s' },
    { name: 'NVIDIA L40 -> l40', reason: 'upstream InferHardwareSystem', input: 'NVIDIA L40', want: 'l40' },
    { name: 'NVIDIA L4 -> l4', reason: 'upstream InferHardwareSystem', input: 'NVIDIA L4', want: 'l4' },
    { name: 'Tesla-V100-SXM2-32GB -> v100_sxm', reason: 'upstream InferHardwareSystem', input: 'Tesla-V100-SXM2-32GB', want: 'v100_sxm' },
    { name: 'Tesla-T4 -> t4', reason: 'upstream InferHardwareSystem', input: 'Tesla-T4', want: 't4' },
    { name: 'AMD Instinct MI300X -> mi300', reason: 'upstream InferHardwareSystem', input: 'AMD Instinct MI300X', want: 'mi300' },
    { name: 'AMD Instinct MI250X -> mi200', reason: 'upstream InferHardwareSystem', input: 'AMD Instinct MI250X', want: 'mi200' },
    { name: 'an unknown product maps to nothing', reason: 'upstream InferHardwareSystem ("Unknown products give")', input: 'NVIDIA RTX 4090', want: undefined },
    { name: '"Intel(R) Graphics [0xe211]" -> b60', reason: 'upstream TestInferHardwareSystem "Intel e211 maps to B60"', input: 'Intel(R) Graphics [0xe211]', want: 'b60' },
  ])('$name', ({ input, want }) => {
    expect(normalizeGpuProduct(input)).toBe(want);
  });
});

describe('inferIntelXpuSku', () => {
  it.each([
    { name: 'the device name "Intel(R) Graphics [0xe211]" -> b60', reason: 'upstream inferIntelHardwareSystem (device name first); TestScrapeMetricsEndpoint "xpumd metrics" (System b60)', input: { deviceName: 'Intel(R) Graphics [0xe211]', pciDeviceId: '0xe211' }, want: 'b60' },
    { name: '"Intel(R) Arc(TM) Pro B60 Graphics" names no token: the PCI device id e211 -> b60', reason: 'upstream inferIntelHardwareSystem (then the PCI device id); deploy/observability XPUMD_SAMPLE_1 (pci_device_id "e211")', input: { deviceName: 'Intel(R) Arc(TM) Pro B60 Graphics', pciDeviceId: 'e211' }, want: 'b60' },
    { name: 'another Intel device maps to nothing', reason: 'upstream inferIntelHardwareSystem returns ""', input: { deviceName: 'Intel(R) Data Center GPU Max 1550', pciDeviceId: '0x0bd5' }, want: undefined },
  ])('$name', ({ input, want }) => {
    expect(inferIntelXpuSku(input.deviceName, input.pciDeviceId)).toBe(want);
  });
});

describe('isGpuDiscoveryCacheEntryFresh', () => {
  const expiresAt = new Date('2026-12-01T12:01:00Z');
  it.each([
    { name: '59.999 s after the store (before expiry): fresh', reason: 'upstream GPUDiscoveryCache.Get ("time.Now().Before(e.expiresAt)")', now: new Date('2026-12-01T12:00:59.999Z'), want: true },
    { name: 'at expiry (60 s): no longer fresh', reason: 'upstream GPUDiscoveryCache.Get (Before, not equal)', now: expiresAt, want: false },
  ])('$name', ({ now, want }) => {
    expect(isGpuDiscoveryCacheEntryFresh(expiresAt, now)).toBe(want);
  });
});

interface Row {
  readonly name: string;
  readonly reason: string;
  readonly input: { readonly hardware?: DgdrHardware; readonly nodes: readonly NodeFacts[] };
  readonly want: DiscoveryResult;
}

const ok = (hardware: DgdrHardware): DiscoveryResult => ({ ok: true, hardware });

const ROWS: Row[] = [
  {
    name: 'one 8-GPU H100 SXM node: sku, VRAM, GPUs per node and budget from its labels',
    reason: 'dgdr-reference "hardware" (auto-detected when omitted)',
    input: { nodes: [gpuNode('gpu-1', H100, 8, 81559)] },
    want: ok({ gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8, rdma: false }),
  },
  {
    name: 'two H200-SXM5-141GB nodes with gpuSku h200_sxm -> totalGpus 16',
    reason: 'upstream controller test (upstream-notes/dgdr.md §3.3)',
    input: { hardware: { gpuSku: 'h200_sxm' }, nodes: [gpuNode('a', H200, 8, 141312), gpuNode('b', H200, 8, 141312)] },
    want: ok({ gpuSku: 'h200_sxm', vramMb: 141312, numGpusPerNode: 8, totalGpus: 16, rdma: false }),
  },
  {
    name: '"same-type nodes with 8 and 4 GPUs represent 12 GPUs of inventory, while the auto-selected 8-GPU shape yields an automatic budget of 8"',
    reason: 'dgdr-reference "totalGpus"',
    input: { nodes: [gpuNode('big', H100, 8, 81559), gpuNode('small', H100, 4, 81559)] },
    want: ok({ gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8, rdma: false }),
  },
  {
    name: '"the GPU type of the node with the most GPUs (ties broken by highest VRAM per GPU)"',
    reason: 'dgdr-reference "gpuSku"',
    input: { nodes: [gpuNode('h100', H100, 8, 81559), gpuNode('h200', H200, 8, 141312), gpuNode('l4', 'NVIDIA L4', 4, 23034)] },
    want: ok({ gpuSku: 'h200_sxm', vramMb: 141312, numGpusPerNode: 8, totalGpus: 8, rdma: false }),
  },
  {
    name: '"In mixed-GPU clusters, set this to choose the GPU type; discovery and totalGpus are then restricted to matching nodes"',
    reason: 'dgdr-reference "gpuSku"',
    input: { hardware: { gpuSku: 'l4' }, nodes: [gpuNode('h200', H200, 8, 141312), gpuNode('l4-a', 'NVIDIA L4', 4, 23034), gpuNode('l4-b', 'NVIDIA L4', 4, 23034)] },
    want: ok({ gpuSku: 'l4', vramMb: 23034, numGpusPerNode: 4, totalGpus: 8, rdma: false }),
  },
  {
    name: '"The result is temporarily capped at 32"',
    reason: 'dgdr-reference "totalGpus"; upstream defaultMaxAutoGPUs = 32',
    input: { nodes: ['a', 'b', 'c', 'd', 'e'].map((n) => gpuNode(n, H100, 8, 81559)) },
    want: ok({ gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 32, rdma: false }),
  },
  {
    name: 'an explicit totalGpus is never capped',
    reason: 'upstream-notes/profiler.md §2.5 ("Explicit totalGpus is never capped")',
    input: { hardware: { totalGpus: 64 }, nodes: [gpuNode('a', H100, 8, 81559)] },
    want: ok({ gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 64, rdma: false }),
  },
  {
    name: '"vramMb: 81920 matches a measured 81079 MiB" (within 10%): the budget is still discovered',
    reason: 'dgdr-reference "vramMb"',
    input: { hardware: { vramMb: 81920 }, nodes: [gpuNode('a', H100, 8, 81079), gpuNode('b', H100, 8, 81079)] },
    want: ok({ gpuSku: 'h100_sxm', vramMb: 81920, numGpusPerNode: 8, totalGpus: 16, rdma: false }),
  },
  {
    name: '"aggregating discovered nodes still requires equal measured VRAM"',
    reason: 'dgdr-reference "vramMb"',
    input: { nodes: [gpuNode('a', H100, 8, 81559), gpuNode('b', H100, 8, 81079)] },
    want: ok({ gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8, rdma: false }),
  },
  {
    name: '"If this value differs by more than 10% and totalGpus is omitted, automatic GPU-budget discovery fails"',
    reason: 'dgdr-reference "vramMb"',
    input: { hardware: { vramMb: 40960 }, nodes: [gpuNode('gpu-1', H100, 8, 81559)] },
    want: { ok: false, message: 'spec.hardware.vramMb 40960 differs by more than 10% from the measured 81559 MiB of the auto-selected h100_sxm shape (node gpu-1); set spec.hardware.totalGpus explicitly to use that override' },
  },
  {
    name: '"set totalGpus explicitly to use that override": vramMb far off with totalGpus is accepted',
    reason: 'dgdr-reference "vramMb"',
    input: { hardware: { vramMb: 40960, totalGpus: 4 }, nodes: [gpuNode('gpu-1', H100, 8, 81559)] },
    want: ok({ gpuSku: 'h100_sxm', vramMb: 40960, numGpusPerNode: 8, totalGpus: 4, rdma: false }),
  },
  {
    name: '"If this value differs from the auto-selected shape and totalGpus is omitted, automatic GPU-budget discovery fails" (numGpusPerNode)',
    reason: 'dgdr-reference "numGpusPerNode"',
    input: { hardware: { numGpusPerNode: 4 }, nodes: [gpuNode('gpu-1', H100, 8, 81559)] },
    want: { ok: false, message: 'spec.hardware.numGpusPerNode 4 differs from the 8 GPUs per node of the auto-selected h100_sxm shape (node gpu-1); set spec.hardware.totalGpus explicitly to use that override' },
  },
  {
    name: 'numGpusPerNode equal to the shape keeps budget discovery',
    reason: 'dgdr-reference "numGpusPerNode"',
    input: { hardware: { numGpusPerNode: 8 }, nodes: [gpuNode('gpu-1', H100, 8, 81559)] },
    want: ok({ gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8, rdma: false }),
  },
  {
    name: 'no GPU Feature Discovery labels anywhere',
    reason: 'upstream node-label discovery message (upstream-notes/profiler.md §2.3), plus the fields to set',
    input: { nodes: [{ name: 'cpu-1', labels: { 'kubernetes.io/os': 'linux' } }, gpuNode('bad', H100, 0, 81559)] },
    want: { ok: false, message: 'no nodes with NVIDIA GPU Feature Discovery labels found (checked 2 nodes). Ensure GPU nodes have labels: nvidia.com/gpu.count, nvidia.com/gpu.product, nvidia.com/gpu.memory; or set spec.hardware.{gpuSku,vramMb,numGpusPerNode,totalGpus} explicitly' },
  },
  {
    name: 'an explicit gpuSku no node matches',
    reason: 'upstream "no GPU nodes matching SKU" (upstream-notes/profiler.md §2.2)',
    input: { hardware: { gpuSku: 'b200_sxm' }, nodes: [gpuNode('a', H100, 8, 81559), gpuNode('b', 'NVIDIA L4', 4, 23034)] },
    want: { ok: false, message: 'no GPU nodes matching spec.hardware.gpuSku "b200_sxm" found (GPU types found: h100_sxm, l4); set spec.hardware.gpuSku to one of them' },
  },
  {
    name: '"Never write a value the CRD would reject": an unknown product is a failure, not a raw gpuSku',
    reason: 'issue 13 part 3; upstream stores the raw product (upstream-notes/profiler.md §2.4), which the CRD enum rejects',
    input: { nodes: [gpuNode('gpu-1', 'NVIDIA RTX 4090', 1, 24564)] },
    want: { ok: false, message: 'GPU product "NVIDIA RTX 4090" on node gpu-1 does not map to a known spec.hardware.gpuSku; set spec.hardware.gpuSku explicitly (supported values: vr_nvl72, gb200, gb200_sxm, gb10, b300_sxm, b200_sxm, h200_sxm, h100_sxm, h100_pcie, a100_sxm, a100_pcie, a30, l40s, l40, l4, v100_sxm, v100_pcie, t4, mi200, mi300)' },
  },
  {
    name: 'rdma from nvidia.com/rdma.present=true on a node of the selected type',
    reason: 'upstream-notes/dgdr.md §3.5',
    input: { nodes: [gpuNode('a', H100, 8, 81559, { 'nvidia.com/rdma.present': 'true' })] },
    want: ok({ gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8, rdma: true }),
  },
  {
    name: 'rdma from feature.node.kubernetes.io/network-sriov.capable=true; explicit interconnect kept',
    reason: 'upstream-notes/dgdr.md §3.5; dgdr-reference "interconnect" (capability metadata)',
    input: { hardware: { interconnect: 'nvlink' }, nodes: [gpuNode('a', H100, 8, 81559, { 'feature.node.kubernetes.io/network-sriov.capable': 'true' })] },
    want: ok({ interconnect: 'nvlink', gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8, rdma: true }),
  },
  {
    name: 'GB200 nodes are stored as gb200 ("newly discovered GB200 hardware is stored as gb200")',
    reason: 'dgdr-reference "SKU format"',
    input: { nodes: [gpuNode('gb', 'NVIDIA-GB200', 4, 189471)] },
    want: ok({ gpuSku: 'gb200', vramMb: 189471, numGpusPerNode: 4, totalGpus: 4, rdma: false }),
  },
];

describe('discoverHardware', () => {
  it.each(ROWS)('$name', ({ input, want }) => {
    expect(discoverHardware(input.hardware, input.nodes)).toEqual(want);
  });

  it('is deterministic and does not modify a frozen input', () => {
    const nodes = Object.freeze([Object.freeze(gpuNode('b', H100, 8, 81559)), Object.freeze(gpuNode('a', H100, 8, 81559))]);
    const hardware = Object.freeze({ gpuSku: 'h100_sxm' as const });
    expect(discoverHardware(hardware, nodes)).toEqual(discoverHardware(hardware, [...nodes].reverse()));
  });

  it('discovering again from the persisted result changes nothing', () => {
    const nodes = [gpuNode('a', H100, 8, 81559), gpuNode('b', H100, 8, 81559)];
    const first = discoverHardware(undefined, nodes);
    if (!first.ok) throw new Error(first.message);
    expect(discoverHardware(first.hardware, nodes)).toEqual(first);
  });
});

/** A Node with no GPU Feature Discovery labels (GFD not installed), as the DCGM rows use. */
function bareNode(name: string, extra: Record<string, string> = {}): NodeFacts {
  return { name, labels: { 'kubernetes.io/hostname': name, ...extra } };
}

/** The GPU Operator's DCGM exporter DaemonSet, the controller of its pods (NVIDIA gpu-operator assets/state-dcgm-exporter). */
const DCGM_DAEMONSET = { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'nvidia-dcgm-exporter' };

/**
 * A Running DCGM exporter pod of the GPU Operator's DaemonSet on `nodeName` whose scrape returned
 * the fixture body (test/fixtures/dcgm/), its `Hostname` label the pod's node (the DaemonSet sets
 * NODE_NAME from spec.nodeName, which dcgm-exporter writes as Hostname).
 */
function exporterOn(nodeName: string, fixture: string, index: number): DcgmExporterPod {
  const podIp = `10.244.0.${index + 10}`;
  const body = readFileSync(resolve(repoRoot, 'test', 'fixtures', 'dcgm', fixture), 'utf8').replace(/Hostname="[^"]*"/g, `Hostname="${nodeName}"`);
  return { namespace: 'gpu-operator', name: `nvidia-dcgm-exporter-${index}`, nodeName, phase: 'Running', podIp, controller: DCGM_DAEMONSET, scrape: { endpoint: `http://${podIp}:9400/metrics`, ok: true, body } };
}

/** A Running Intel XPU exporter pod (label app.kubernetes.io/name=xpumd) on `nodeName` serving upstream's xpumd body (3 x B60). */
function xpumdOn(nodeName: string, index: number): DcgmExporterPod {
  const podIp = `10.244.1.${index + 10}`;
  const body = readFileSync(resolve(repoRoot, 'test', 'fixtures', 'dcgm', 'xpumd-b60-3gpu.metrics'), 'utf8');
  return { namespace: 'intel-xpum', name: `xpumd-${index}`, nodeName, phase: 'Running', podIp, controller: { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'intel-xpumanager' }, scrape: { endpoint: `http://${podIp}:8080/metrics`, ok: true, body } };
}

const failing = (pod: DcgmExporterPod, status: number): DcgmExporterPod => ({ ...pod, scrape: { endpoint: pod.scrape?.endpoint ?? '', ok: false, error: `metrics endpoint ${pod.scrape?.endpoint ?? ''} returned status ${status}` } });

interface SignalRow {
  readonly name: string;
  readonly reason: string;
  readonly input: { readonly hardware?: DgdrHardware; readonly nodes: readonly NodeFacts[]; readonly signals: DiscoverySignals };
  readonly want: DiscoveryResult;
}

const SIGNAL_ROWS: SignalRow[] = [
  {
    name: 'GFD labels absent: two H200 HGX nodes from DCGM alone -> h200_sxm, measured VRAM, budget 16, interconnect nvlink',
    reason: 'upstream enrichHardwareFromDiscovery (DCGM first) and parseDCGMAcceleratorMetrics; dgdr-reference "interconnect" (best-effort nvlink vs pcie)',
    input: { nodes: [bareNode('gpu-a'), bareNode('gpu-b')], signals: { dcgm: { exporterPods: [exporterOn('gpu-a', 'h200-hgx-8gpu.metrics', 0), exporterOn('gpu-b', 'h200-hgx-8gpu.metrics', 1)], isGpuOperatorRunning: false } } },
    want: ok({ gpuSku: 'h200_sxm', vramMb: 143771, numGpusPerNode: 8, totalGpus: 16, rdma: false, interconnect: 'nvlink' }),
  },
  {
    name: 'DCGM wins over GFD labels: the exporter\'s measured VRAM and model, not the labels\' (labels say 4 x 141312 MiB)',
    reason: 'upstream enrichHardwareFromDiscovery: node labels are only the fallback',
    input: { nodes: [gpuNode('gpu-a', H200, 4, 141312)], signals: { dcgm: { exporterPods: [exporterOn('gpu-a', 'h200-hgx-8gpu.metrics', 0)], isGpuOperatorRunning: false } } },
    want: ok({ gpuSku: 'h200_sxm', vramMb: 143771, numGpusPerNode: 8, totalGpus: 8, rdma: false, interconnect: 'nvlink' }),
  },
  {
    name: 'DCGM\'s "NVIDIA H100 80GB HBM3" has no SXM hint -> h100_pcie, as upstream infers it',
    reason: 'upstream InferHardwareSystem on the exporter\'s modelName (upstream-notes/profiler.md §2.4 "consequence")',
    input: { nodes: [bareNode('gpu-a')], signals: { dcgm: { exporterPods: [exporterOn('gpu-a', 'h100-hgx-8gpu.metrics', 0)], isGpuOperatorRunning: false } } },
    want: ok({ gpuSku: 'h100_pcie', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8, rdma: false, interconnect: 'nvlink' }),
  },
  {
    name: 'a PCIe L40S node: interconnect pcie; an explicit interconnect is kept',
    reason: 'dgdr-reference "interconnect" (distinguishes nvlink from pcie when omitted; explicit values win)',
    input: { hardware: { interconnect: 'nvlink' }, nodes: [bareNode('gpu-c')], signals: { dcgm: { exporterPods: [exporterOn('gpu-c', 'l40s-pcie-4gpu.metrics', 0)], isGpuOperatorRunning: false } } },
    want: ok({ interconnect: 'nvlink', gpuSku: 'l40s', vramMb: 46068, numGpusPerNode: 4, totalGpus: 4, rdma: false }),
  },
  {
    name: 'mixed fleet from DCGM: gpuSku l40s restricts discovery and the budget to the L40S node',
    reason: 'dgdr-reference "gpuSku" (discovery and totalGpus restricted to matching nodes); upstream discoverPrometheusPods filter',
    input: {
      hardware: { gpuSku: 'l40s' },
      nodes: [bareNode('gpu-a'), bareNode('gpu-c')],
      signals: { dcgm: { exporterPods: [exporterOn('gpu-a', 'h200-hgx-8gpu.metrics', 0), exporterOn('gpu-c', 'l40s-pcie-4gpu.metrics', 1)], isGpuOperatorRunning: false } },
    },
    want: ok({ gpuSku: 'l40s', vramMb: 46068, numGpusPerNode: 4, totalGpus: 4, rdma: false, interconnect: 'pcie' }),
  },
  {
    name: 'RDMA for a DCGM node from its Node\'s nvidia.com/rdma.present=true',
    reason: 'upstream discoverPrometheusPods -> detectRDMAFromNode on the selected SKU\'s nodes',
    input: { nodes: [bareNode('gpu-a', { 'nvidia.com/rdma.present': 'true' })], signals: { dcgm: { exporterPods: [exporterOn('gpu-a', 'h200-hgx-8gpu.metrics', 0)], isGpuOperatorRunning: false } } },
    want: ok({ gpuSku: 'h200_sxm', vramMb: 143771, numGpusPerNode: 8, totalGpus: 8, rdma: true, interconnect: 'nvlink' }),
  },
  {
    name: 'RDMA from an rdma pod in nvidia-network-operator (InfiniBand), on the GFD-label path too',
    reason: 'upstream detectIBPods (dgdr.md §3.5)',
    input: { nodes: [gpuNode('gpu-a', H100, 8, 81559)], signals: { dcgm: { exporterPods: [], isGpuOperatorRunning: false }, networkOperatorPodNames: ['rdma-shared-dp-ds-x7k2p'] } },
    want: ok({ gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8, rdma: true }),
  },
  {
    name: 'no exporter pods: GFD labels decide, and the label path yields no interconnect',
    reason: 'upstream-notes/dgdr.md §3.5 ("the node-label path yields none")',
    input: { nodes: [gpuNode('gpu-a', H100, 8, 81559)], signals: { dcgm: { exporterPods: [], isGpuOperatorRunning: true } } },
    want: ok({ gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8, rdma: false }),
  },
  {
    name: 'every exporter failing falls back to GFD labels',
    reason: 'upstream discoverHardwareForEnrichment ("DCGM discovery failed, falling back to node-label discovery")',
    input: {
      nodes: [gpuNode('gpu-a', H100, 8, 81559)],
      signals: { dcgm: { exporterPods: [{ ...exporterOn('gpu-a', 'h200-hgx-8gpu.metrics', 0), scrape: { endpoint: 'http://10.244.0.10:9400/metrics', ok: false, error: 'HTTP GET http://10.244.0.10:9400/metrics failed: connect ECONNREFUSED' } }], isGpuOperatorRunning: false } },
    },
    want: ok({ gpuSku: 'h100_sxm', vramMb: 81559, numGpusPerNode: 8, totalGpus: 8, rdma: false }),
  },
  {
    name: 'exporters failing and no GFD labels: "metrics discovery failed: <dcgm>; node-label discovery failed: <labels>"',
    reason: 'upstream DiscoverGPUHardware',
    input: {
      nodes: [bareNode('gpu-a')],
      signals: { dcgm: { exporterPods: [{ ...exporterOn('gpu-a', 'h200-hgx-8gpu.metrics', 0), scrape: { endpoint: 'http://10.244.0.10:9400/metrics', ok: false, error: 'metrics endpoint http://10.244.0.10:9400/metrics returned status 503' } }], isGpuOperatorRunning: false } },
    },
    want: {
      ok: false,
      message:
        'metrics discovery failed: dcgm discovery failed: failed to scrape any dcgm exporter pod: [pod nvidia-dcgm-exporter-0 (10.244.0.10): http://10.244.0.10:9400/metrics: metrics endpoint http://10.244.0.10:9400/metrics returned status 503]; ' +
        'node-label discovery failed: no nodes with NVIDIA GPU Feature Discovery labels found (checked 1 nodes). Ensure GPU nodes have labels: nvidia.com/gpu.count, nvidia.com/gpu.product, nvidia.com/gpu.memory; or set spec.hardware.{gpuSku,vramMb,numGpusPerNode,totalGpus} explicitly',
    },
  },
  {
    name: 'DCGM nodes none of the requested gpuSku, nor labelled ones: both failures are named',
    reason: 'upstream discoverPrometheusPods ("no GPU nodes matching SKU %q found") and DiscoverGPUHardware',
    input: { hardware: { gpuSku: 'b200_sxm' }, nodes: [bareNode('gpu-a')], signals: { dcgm: { exporterPods: [exporterOn('gpu-a', 'h200-hgx-8gpu.metrics', 0)], isGpuOperatorRunning: false } } },
    want: {
      ok: false,
      message:
        'metrics discovery failed: dcgm discovery failed: no GPU nodes matching SKU "b200_sxm" found; ' +
        'node-label discovery failed: no nodes with NVIDIA GPU Feature Discovery labels found (checked 1 nodes). Ensure GPU nodes have labels: nvidia.com/gpu.count, nvidia.com/gpu.product, nvidia.com/gpu.memory; or set spec.hardware.{gpuSku,vramMb,numGpusPerNode,totalGpus} explicitly',
    },
  },
  {
    name: 'the reference\'s 10% rule applies to DCGM-measured VRAM: vramMb 81920 vs measured 81559 still discovers the budget',
    reason: 'dgdr-reference "vramMb" ("vramMb: 81920 matches a measured 81079 MiB")',
    input: { hardware: { vramMb: 81920 }, nodes: [bareNode('gpu-a')], signals: { dcgm: { exporterPods: [exporterOn('gpu-a', 'h100-hgx-8gpu.metrics', 0)], isGpuOperatorRunning: false } } },
    want: ok({ gpuSku: 'h100_pcie', vramMb: 81920, numGpusPerNode: 8, totalGpus: 8, rdma: false, interconnect: 'nvlink' }),
  },
];

/** Rows with Intel XPU exporters (the second metrics source). */
const INTEL_SIGNAL_ROWS: SignalRow[] = [
  {
    name: 'only Intel XPU exporters: the B60 node is found, but b60 is no v1beta1 gpuSku, so the request fails naming it and the v1beta2 way',
    reason: 'upstream discoverFromMetricsSources (intel-xpumd after dcgm) and TestEnrichHardwareFromDiscovery_B60UsesXPUMD (3 GPUs, 24480 MiB, b60); dgdr-reference "SKU format" (the v1beta1 allowed values have no b60) and "v1beta2 hardware SKU" (b60 is in the catalog)',
    input: { nodes: [bareNode('xpu-node')], signals: { dcgm: { exporterPods: [], isGpuOperatorRunning: false, intelXpu: { exporterPods: [xpumdOn('xpu-node', 0)] } } } },
    want: {
      ok: false,
      message:
        'GPU product "Intel(R) Graphics [0xe211]" on node xpu-node is the AISimulate system b60, which spec.hardware.gpuSku cannot hold (supported values: vr_nvl72, gb200, gb200_sxm, gb10, b300_sxm, b200_sxm, h200_sxm, h100_sxm, h100_pcie, a100_sxm, a100_pcie, a30, l40s, l40, l4, v100_sxm, v100_pcie, t4, mi200, mi300); ' +
        'request this hardware as nvidia.com/v1beta2 with spec.hardware.gpu.sku b60, budget and numGpusPerNode, or set spec.hardware.gpuSku to another GPU type',
    },
  },
  {
    name: 'DCGM and Intel XPU exporters both failing, no GFD labels: each source\'s failure is named, joined by "; "',
    reason: 'upstream discoverFromMetricsSources (sourceErrors joined by "; ") and DiscoverGPUHardware ("metrics discovery failed: %v; node-label discovery failed: %w")',
    input: {
      nodes: [bareNode('gpu-a'), bareNode('xpu-node')],
      signals: { dcgm: { exporterPods: [failing(exporterOn('gpu-a', 'h200-hgx-8gpu.metrics', 0), 503)], isGpuOperatorRunning: false, intelXpu: { exporterPods: [failing(xpumdOn('xpu-node', 0), 404)] } } },
    },
    want: {
      ok: false,
      message:
        'metrics discovery failed: dcgm discovery failed: failed to scrape any dcgm exporter pod: [pod nvidia-dcgm-exporter-0 (10.244.0.10): http://10.244.0.10:9400/metrics: metrics endpoint http://10.244.0.10:9400/metrics returned status 503]; ' +
        'intel-xpumd discovery failed: failed to scrape any intel-xpumd exporter pod: [pod xpumd-0 (10.244.1.10): http://10.244.1.10:8080/metrics: metrics endpoint http://10.244.1.10:8080/metrics returned status 404]; ' +
        'node-label discovery failed: no nodes with NVIDIA GPU Feature Discovery labels found (checked 2 nodes). Ensure GPU nodes have labels: nvidia.com/gpu.count, nvidia.com/gpu.product, nvidia.com/gpu.memory; or set spec.hardware.{gpuSku,vramMb,numGpusPerNode,totalGpus} explicitly',
    },
  },
];

describe('readMetricsGpuNodes', () => {
  const h200 = exporterOn('gpu-a', 'h200-hgx-8gpu.metrics', 0);
  const xpumd = xpumdOn('xpu-node', 0);
  const b60Node: GpuNode = { name: 'xpu-node', product: 'Intel(R) Graphics [0xe211]', sku: 'b60', gpuCount: 3, vramMb: 24480, hasRdma: false, interconnect: 'pcie' };
  const h200Node: GpuNode = { name: 'gpu-a', product: 'NVIDIA H200', sku: 'h200_sxm', gpuCount: 8, vramMb: 143771, hasRdma: false, interconnect: 'nvlink' };
  const rows: { name: string; reason: string; input: { dcgm: DcgmFacts; gpuSku?: DiscoveredGpuSku }; want: ReturnType<typeof readMetricsGpuNodes> }[] = [
    {
      name: 'DCGM giving nodes wins: the Intel exporters are not consulted',
      reason: 'upstream discoverFromMetricsSources (the first source that succeeds returns)',
      input: { dcgm: { exporterPods: [h200], isGpuOperatorRunning: false, intelXpu: { exporterPods: [xpumd] } } },
      want: { ok: true, nodes: [h200Node] },
    },
    {
      name: 'no DCGM pods: the Intel exporters give the nodes, the SKU b60 from the device name',
      reason: 'upstream TestDiscoverGPUsFromIntelExporterFiltered "xpumd endpoint" (System b60, GPUsPerNode 3, NodesWithGPUs 1)',
      input: { dcgm: { exporterPods: [], isGpuOperatorRunning: false, intelXpu: { exporterPods: [xpumd] } }, gpuSku: 'b60' },
      want: { ok: true, nodes: [b60Node] },
    },
    {
      name: 'DCGM nodes of another SKU than the filter: DCGM fails and Intel is tried, whatever the filter',
      reason: 'upstream discoverFromMetricsSources (every source for every filter; discoverPrometheusPods "no GPU nodes matching SKU")',
      input: { dcgm: { exporterPods: [h200], isGpuOperatorRunning: false, intelXpu: { exporterPods: [xpumd] } }, gpuSku: 'b60' },
      want: { ok: true, nodes: [b60Node] },
    },
    {
      name: 'neither source has a node of the filter: both failures',
      reason: 'upstream discoverFromMetricsSources (sourceErrors joined by "; ")',
      input: { dcgm: { exporterPods: [h200], isGpuOperatorRunning: false, intelXpu: { exporterPods: [xpumd] } }, gpuSku: 'l40s' },
      want: { ok: false, error: 'dcgm discovery failed: no GPU nodes matching SKU "l40s" found; intel-xpumd discovery failed: no GPU nodes matching SKU "l40s" found' },
    },
    {
      name: 'the Intel exporters could not be listed: "listing Intel XPUMD pods failed: list pods: <error>"',
      reason: 'upstream discoverFromMetricsSources (listErrorPrefix of the intel-xpumd source; returned at once)',
      input: { dcgm: { exporterPods: [failing(h200, 503)], isGpuOperatorRunning: false, intelXpu: { listError: 'pods is forbidden', exporterPods: [] } } },
      want: { ok: false, error: 'listing Intel XPUMD pods failed: list pods: pods is forbidden' },
    },
    {
      name: 'the DCGM exporters could not be listed: "listing DCGM exporter pods failed: list pods: <error>"',
      reason: 'upstream discoverFromMetricsSources (listErrorPrefix)',
      input: { dcgm: { listError: 'pods is forbidden', exporterPods: [], isGpuOperatorRunning: false } },
      want: { ok: false, error: 'listing DCGM exporter pods failed: list pods: pods is forbidden' },
    },
    {
      name: 'no exporter pods and no GPU Operator: "no DCGM exporter pods found and no Intel XPU exporter pods found"',
      reason: 'upstream TestDiscoverGPUsFromDCGM_NoGPUOperator_NoDCGM; discoverFromMetricsSources',
      input: { dcgm: { exporterPods: [], isGpuOperatorRunning: false, intelXpu: { exporterPods: [] } } },
      want: { ok: false, error: 'no GPU metrics exporters found: no DCGM exporter pods found and no Intel XPU exporter pods found' },
    },
    {
      name: 'no exporter pods but a Running GPU Operator: "DCGM is not enabled in the GPU Operator"',
      reason: 'upstream TestDiscoverGPUsFromDCGM_GPUOperatorInstalled_DCgmNotEnabled',
      input: { dcgm: { exporterPods: [], isGpuOperatorRunning: true } },
      want: { ok: false, error: 'no GPU metrics exporters found: DCGM is not enabled in the GPU Operator and no Intel XPU exporter pods found' },
    },
    {
      name: 'only untrusted exporter pods (a function only trusts what it can prove): none is read, and the failure names each with its reason',
      reason: 'issue 20 item 1 ("untrusted exporter pods are skipped ... and named there"); upstream\'s own message first',
      input: {
        dcgm: {
          exporterPods: [],
          untrustedPods: [{ namespace: 'team-a', name: 'fake-dcgm', reason: 'namespace team-a is not a trusted exporter namespace (gpu-operator)' }],
          isGpuOperatorRunning: false,
          intelXpu: { exporterPods: [], untrustedPods: [{ namespace: 'gpu-operator', name: 'xpumd-debug', reason: 'not controlled by a DaemonSet' }] },
        },
      },
      want: {
        ok: false,
        error:
          'no GPU metrics exporters found: no DCGM exporter pods found and no Intel XPU exporter pods found; ignored untrusted exporter pods: ' +
          'team-a/fake-dcgm (namespace team-a is not a trusted exporter namespace (gpu-operator)), gpu-operator/xpumd-debug (not controlled by a DaemonSet)',
      },
    },
    {
      name: 'a trusted exporter failing beside an untrusted one: the failure is the trusted one\'s, and the untrusted pod is named',
      reason: 'issue 20 item 1; upstream discoverPrometheusPods for the trusted pod',
      input: { dcgm: { exporterPods: [failing(h200, 503)], untrustedPods: [{ namespace: 'team-a', name: 'fake-dcgm', reason: 'namespace team-a is not a trusted exporter namespace (gpu-operator)' }], isGpuOperatorRunning: false, intelXpu: { exporterPods: [] } } },
      want: {
        ok: false,
        error:
          'dcgm discovery failed: failed to scrape any dcgm exporter pod: [pod nvidia-dcgm-exporter-0 (10.244.0.10): http://10.244.0.10:9400/metrics: metrics endpoint http://10.244.0.10:9400/metrics returned status 503]' +
          '; ignored untrusted exporter pods: team-a/fake-dcgm (namespace team-a is not a trusted exporter namespace (gpu-operator))',
      },
    },
  ];
  it.each(rows)('$name', ({ input, want }) => {
    expect(readMetricsGpuNodes(input.dcgm, input.gpuSku, [bareNode('gpu-a'), bareNode('xpu-node')])).toEqual(want);
  });
});

describe('hasMetricsExporters', () => {
  it.each([
    { name: 'no pods, no list error: metrics discovery is absent', reason: 'upstream: without exporters the node labels decide alone', input: { exporterPods: [], isGpuOperatorRunning: false }, want: false },
    { name: 'only an untrusted pod counts as seen, so a failed discovery names it', reason: 'issue 20 item 1 ("named there")', input: { exporterPods: [], untrustedPods: [{ namespace: 'team-a', name: 'fake-dcgm', reason: 'r' }], isGpuOperatorRunning: false }, want: true },
    { name: 'an untrusted Intel pod counts too', reason: 'issue 20 item 1', input: { exporterPods: [], isGpuOperatorRunning: false, intelXpu: { exporterPods: [], untrustedPods: [{ namespace: 'team-a', name: 'xpumd', reason: 'r' }] } }, want: true },
  ])('$name', ({ input, want }) => {
    expect(hasMetricsExporters(input)).toBe(want);
  });

  it(`many untrusted pods: the first ${MAX_NAMED_UNTRUSTED_EXPORTER_PODS} are named, the rest counted, so planting pods cannot grow the request's message without bound`, () => {
    const untrustedPods = Array.from({ length: 25 }, (_, i) => ({ namespace: 'team-a', name: `fake-${i}`, reason: 'r' }));
    const result = readMetricsGpuNodes({ exporterPods: [], untrustedPods, isGpuOperatorRunning: false, intelXpu: { exporterPods: [] } }, undefined, []);
    expect(result).toEqual({
      ok: false,
      error: `no GPU metrics exporters found: no DCGM exporter pods found and no Intel XPU exporter pods found; ignored untrusted exporter pods: ${untrustedPods.slice(0, 10).map((p) => `team-a/${p.name} (r)`).join(', ')}, and 15 more`,
    });
  });

  it('labels failing with only untrusted exporters: the request\'s message names the ignored pods beside the node-label failure', () => {
    const dcgm: DcgmFacts = { exporterPods: [], untrustedPods: [{ namespace: 'team-a', name: 'fake-dcgm', reason: 'namespace team-a is not a trusted exporter namespace (gpu-operator)' }], isGpuOperatorRunning: false, intelXpu: { exporterPods: [] } };
    expect(discoverHardware(undefined, [bareNode('gpu-a')], { dcgm })).toEqual({
      ok: false,
      message:
        'metrics discovery failed: no GPU metrics exporters found: no DCGM exporter pods found and no Intel XPU exporter pods found; ignored untrusted exporter pods: team-a/fake-dcgm (namespace team-a is not a trusted exporter namespace (gpu-operator))' +
        '; node-label discovery failed: no nodes with NVIDIA GPU Feature Discovery labels found (checked 1 nodes). Ensure GPU nodes have labels: nvidia.com/gpu.count, nvidia.com/gpu.product, nvidia.com/gpu.memory; or set spec.hardware.{gpuSku,vramMb,numGpusPerNode,totalGpus} explicitly',
    });
  });
});

describe('discoverHardware with DCGM exporters and the network operator', () => {
  it.each([...SIGNAL_ROWS, ...INTEL_SIGNAL_ROWS])('$name', ({ input, want }) => {
    expect(discoverHardware(input.hardware, input.nodes, input.signals)).toEqual(want);
  });

  it('discovering again from the persisted result changes nothing', () => {
    const row = SIGNAL_ROWS[0];
    if (row === undefined) throw new Error('no rows');
    const first = discoverHardware(undefined, row.input.nodes, row.input.signals);
    if (!first.ok) throw new Error(first.message);
    expect(discoverHardware(first.hardware, row.input.nodes, row.input.signals)).toEqual(first);
  });
});

const EXPLICIT = { gpuSku: 'h200_sxm', vramMb: 143771, numGpusPerNode: 8, totalGpus: 8 } as const;

describe('needsHardwareMetadataDiscovery', () => {
  it.each([
    { name: 'all four required fields set, interconnect and rdma missing: best-effort discovery', reason: 'upstream enrichHardwareFromDiscovery (metadataComplete)', input: EXPLICIT, want: true },
    { name: 'rdma set but no interconnect: still best-effort', reason: 'upstream: metadataComplete needs both', input: { ...EXPLICIT, rdma: false }, want: true },
    { name: 'everything set: no discovery at all', reason: 'upstream: requiredComplete && metadataComplete returns', input: { ...EXPLICIT, interconnect: 'pcie', rdma: false }, want: false },
    { name: 'a required field missing: that is required discovery, not this', reason: 'upstream discoveryRequired', input: { gpuSku: 'h200_sxm' } as const, want: false },
  ])('$name', ({ input, want }) => {
    expect(needsHardwareMetadataDiscovery(input)).toBe(want);
  });
});

describe('discoverHardwareMetadata', () => {
  const h200Dcgm: DiscoverySignals = { dcgm: { exporterPods: [exporterOn('gpu-a', 'h200-hgx-8gpu.metrics', 0)], isGpuOperatorRunning: false } };
  it.each([
    {
      name: 'explicit hardware on a DCGM node: interconnect nvlink and rdma false filled, the explicit shape kept as given',
      reason: 'upstream enrichHardwareFromDiscovery: only unset fields change; interconnect only if discovered, rdma always',
      input: { hardware: { ...EXPLICIT, numGpusPerNode: 4, totalGpus: 4 }, nodes: [bareNode('gpu-a')], signals: h200Dcgm },
      want: { ...EXPLICIT, numGpusPerNode: 4, totalGpus: 4, interconnect: 'nvlink', rdma: false },
    },
    {
      name: 'GFD labels only: rdma from the labels, no interconnect (the label path yields none)',
      reason: 'upstream-notes/dgdr.md §3.5',
      input: { hardware: EXPLICIT, nodes: [gpuNode('gpu-a', 'NVIDIA-H200', 8, 143771, { 'nvidia.com/rdma.present': 'true' })], signals: {} },
      want: { ...EXPLICIT, rdma: true },
    },
    {
      name: 'nothing of the requested type in the cluster: the hardware is left as it is, never a failure',
      reason: 'upstream: "Optional hardware metadata discovery unavailable; leaving unset fields unchanged"',
      input: { hardware: EXPLICIT, nodes: [gpuNode('gpu-a', H100, 8, 81559)], signals: {} },
      want: EXPLICIT,
    },
    {
      name: 'explicit interconnect and rdma are never replaced',
      reason: 'dgdr-reference "interconnect", "rdma" (discovery only when omitted)',
      input: { hardware: { ...EXPLICIT, interconnect: 'pcie' }, nodes: [bareNode('gpu-a', { 'nvidia.com/rdma.present': 'true' })], signals: h200Dcgm },
      want: { ...EXPLICIT, interconnect: 'pcie', rdma: true },
    },
  ])('$name', ({ input, want }) => {
    expect(discoverHardwareMetadata(input.hardware, input.nodes, input.signals)).toEqual(want);
  });
});
