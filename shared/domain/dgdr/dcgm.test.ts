/**
 * DCGM- and Intel XPU-exporter discovery, the pure part: the Prometheus text, what one exporter
 * says about its node, and what a source's exporter pods give (or upstream's error). Values from upstream
 * deploy/operator/internal/gpu/discovery_test.go (`TestParseMetrics`, `TestScrapeMetricsEndpoint`,
 * `TestDiscoverGPUsFromDCGM_*`), the parser in deploy/operator/internal/gpu (NVLink tiers), and
 * the exporter-format bodies in test/fixtures/dcgm/ (see its README).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

import { repoRoot } from '../../../test/support/paths.js';
import {
  DEFAULT_DCGM_ENDPOINT_TEMPLATE,
  hasInfinibandPods,
  interconnectOf,
  metricsEndpoint,
  parsePrometheusText,
  readDcgmMetrics,
  readExporterMetrics,
  readExporterNodes,
  type DcgmExporterPod,
  type DcgmNodesResult,
  type MetricsSource,
  type DcgmReadingResult,
  type PrometheusSample,
} from './dcgm.js';

const fixture = (name: string): string => readFileSync(resolve(repoRoot, 'test', 'fixtures', 'dcgm', name), 'utf8');

/** The body upstream's TestScrapeMetricsEndpoint serves (one NVIDIA A100, 10000 + 2000 + 500 MiB). */
const UPSTREAM_SCRAPE_BODY = `
# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{gpu="0",modelName="NVIDIA A100",Hostname="test-node"} 50
# HELP DCGM_FI_DEV_FB_FREE Framebuffer free
# TYPE DCGM_FI_DEV_FB_FREE gauge
DCGM_FI_DEV_FB_FREE{gpu="0",Hostname="test-node"} 10000
# HELP DCGM_FI_DEV_FB_USED Framebuffer used
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{gpu="0",Hostname="test-node"} 2000
# HELP DCGM_FI_DEV_FB_RESERVED Framebuffer reserved
# TYPE DCGM_FI_DEV_FB_RESERVED gauge
DCGM_FI_DEV_FB_RESERVED{gpu="0",Hostname="test-node"} 500
		`;

describe('parsePrometheusText', () => {
  it.each([
    {
      name: 'a sample with labels, HELP and TYPE lines skipped',
      reason: 'Prometheus text format 0.0.4 (upstream parses with expfmt.TextParser)',
      input: '# HELP x X.\n# TYPE x gauge\nx{gpu="0",Hostname="n"} 50\n',
      want: { ok: true, samples: [{ name: 'x', labels: { gpu: '0', Hostname: 'n' }, value: 50 }], families: ['x'] },
    },
    {
      name: 'escapes in label values, a timestamp, NaN and +Inf, a sample without labels',
      reason: 'Prometheus text format 0.0.4 (label value escapes \\\\ \\" \\n; Go float values)',
      input: 'a{l="say \\"hi\\"\\\\\\n"} 1.5e3 1700000000000\nb NaN\nc +Inf\nd{} -2\n',
      want: {
        ok: true,
        samples: [
          { name: 'a', labels: { l: 'say "hi"\\\n' }, value: 1500 },
          { name: 'b', labels: {}, value: Number.NaN },
          { name: 'c', labels: {}, value: Number.POSITIVE_INFINITY },
          { name: 'd', labels: {}, value: -2 },
        ],
        families: [],
      },
    },
    {
      name: 'UTF-8 names are quoted: {"hw.gpu.info","hw.id"="0"} 1 and # TYPE "hw.gpu.info" gauge; a declared family with no sample is listed',
      reason: 'Prometheus text format with UTF-8 names (upstream parses with expfmt.NewTextParser(model.UTF8Validation); getMetricFamily accepts "hw.gpu.info")',
      input: '# TYPE "hw.gpu.info" gauge\n{"hw.gpu.info","hw.id"="0", hw_name="B60"} 1\n# HELP hw_memory_size_bytes Size of the memory.\n',
      want: { ok: true, samples: [{ name: 'hw.gpu.info', labels: { 'hw.id': '0', hw_name: 'B60' }, value: 1 }], families: ['hw.gpu.info', 'hw_memory_size_bytes'] },
    },
    {
      name: '"not a prometheus format" is refused with its line',
      reason: 'upstream TestScrapeMetricsEndpoint "invalid metrics" (expected parse error)',
      input: 'not a prometheus format\n',
      want: { ok: false, error: 'parse prometheus metrics: line 1: expected a value (and an optional timestamp) in "not a prometheus format"' },
    },
    {
      name: 'an unterminated label value is refused',
      reason: 'Prometheus text format 0.0.4',
      input: '# ok\nx{gpu="0} 1\n',
      want: { ok: false, error: 'parse prometheus metrics: line 2: unterminated value of label gpu in "x{gpu=\\"0} 1"' },
    },
  ])('$name', ({ input, want }) => {
    expect(parsePrometheusText(input)).toEqual(want);
  });
});

function samples(text: string): readonly PrometheusSample[] {
  const parsed = parsePrometheusText(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.samples;
}

describe('readDcgmMetrics', () => {
  const rows: { name: string; reason: string; input: string; want: DcgmReadingResult }[] = [
    {
      name: 'two GPUs: VRAM is the largest FB_FREE + FB_USED + FB_RESERVED (12000 + 6000 + 0 = 18000)',
      reason: 'upstream TestParseMetrics',
      input: [
        'DCGM_FI_DEV_GPU_TEMP{gpu="0",modelName="H100-SXM5-80GB",Hostname="node1"} 40',
        'DCGM_FI_DEV_GPU_TEMP{gpu="1",modelName="H100-SXM5-80GB",Hostname="node1"} 41',
        'DCGM_FI_DEV_FB_FREE{gpu="0"} 10000',
        'DCGM_FI_DEV_FB_FREE{gpu="1"} 12000',
        'DCGM_FI_DEV_FB_USED{gpu="0"} 5000',
        'DCGM_FI_DEV_FB_USED{gpu="1"} 6000',
        'DCGM_FI_DEV_FB_RESERVED{gpu="0"} 0',
        'DCGM_FI_DEV_FB_RESERVED{gpu="1"} 0',
      ].join('\n'),
      want: { ok: true, reading: { hostname: 'node1', gpuCount: 2, model: 'H100-SXM5-80GB', vramMb: 18000, interconnect: 'pcie', interconnectTier: 'none', nvlinkLinks: 0 } },
    },
    {
      name: 'upstream TestScrapeMetricsEndpoint body: one NVIDIA A100, 12500 MiB, no NVLink metric means pcie',
      reason: 'upstream TestScrapeMetricsEndpoint; parser: "none means pcie"',
      input: UPSTREAM_SCRAPE_BODY,
      want: { ok: true, reading: { hostname: 'test-node', gpuCount: 1, model: 'NVIDIA A100', vramMb: 12500, interconnect: 'pcie', interconnectTier: 'none', nvlinkLinks: 0 } },
    },
    {
      name: 'an 8-GPU H200 HGX exporter: 143771 MiB per GPU, 18 NVLink links -> nvlink full-mesh',
      reason: 'upstream parser: links >= 12 -> full-mesh; fixture h200-hgx-8gpu.metrics',
      input: fixture('h200-hgx-8gpu.metrics'),
      want: { ok: true, reading: { hostname: 'gpu-node-0', gpuCount: 8, model: 'NVIDIA H200', vramMb: 143771, interconnect: 'nvlink', interconnectTier: 'full-mesh', nvlinkLinks: 18 } },
    },
    {
      name: 'a 4-GPU L40S PCIe exporter: link count 0 -> pcie',
      reason: 'upstream parser: only a positive DCGM_FI_DEV_NVLINK_LINK_COUNT means NVLink; fixture l40s-pcie-4gpu.metrics',
      input: fixture('l40s-pcie-4gpu.metrics'),
      want: { ok: true, reading: { hostname: 'gpu-node-2', gpuCount: 4, model: 'NVIDIA L40S', vramMb: 46068, interconnect: 'pcie', interconnectTier: 'none', nvlinkLinks: 0 } },
    },
    {
      name: 'metrics without DCGM_FI_DEV_GPU_TEMP: "no GPUs detected from DCGM metrics"',
      reason: 'upstream parseDCGMAcceleratorMetrics',
      input: 'DCGM_FI_DEV_FB_FREE{gpu="0"} 10000\n',
      want: { ok: false, error: 'no GPUs detected from DCGM metrics' },
    },
  ];
  it.each(rows)('$name', ({ input, want }) => {
    expect(readDcgmMetrics(samples(input))).toEqual(want);
  });
});

describe('interconnectOf', () => {
  it.each([
    { name: '18 links -> nvlink full-mesh', reason: 'upstream parser: >= 12', input: 18, want: { interconnect: 'nvlink', interconnectTier: 'full-mesh' } },
    { name: '12 links -> nvlink full-mesh', reason: 'upstream parser: >= 12', input: 12, want: { interconnect: 'nvlink', interconnectTier: 'full-mesh' } },
    { name: '6 links -> nvlink high', reason: 'upstream parser: >= 6', input: 6, want: { interconnect: 'nvlink', interconnectTier: 'high' } },
    { name: '2 links -> nvlink partial', reason: 'upstream parser: otherwise partial', input: 2, want: { interconnect: 'nvlink', interconnectTier: 'partial' } },
    { name: '0 links -> pcie', reason: 'upstream parser: no NVLink means pcie', input: 0, want: { interconnect: 'pcie', interconnectTier: 'none' } },
  ])('$name', ({ input, want }) => {
    expect(interconnectOf(input)).toEqual(want);
  });
});

describe('metricsEndpoint', () => {
  it.each([
    { name: 'default IPv4', reason: 'upstream TestBuildDCGMEndpoint', input: { podIp: '10.0.0.1', template: DEFAULT_DCGM_ENDPOINT_TEMPLATE }, want: 'http://10.0.0.1:9400/metrics' },
    { name: 'default IPv6 is bracketed', reason: 'upstream TestBuildDCGMEndpoint', input: { podIp: 'fd00::1234', template: DEFAULT_DCGM_ENDPOINT_TEMPLATE }, want: 'http://[fd00::1234]:9400/metrics' },
    { name: 'custom IPv4', reason: 'upstream TestBuildDCGMEndpoint', input: { podIp: '10.0.0.1', template: 'https://{POD_IP}:9443/custom/metrics' }, want: 'https://10.0.0.1:9443/custom/metrics' },
    { name: 'custom IPv6', reason: 'upstream TestBuildDCGMEndpoint', input: { podIp: 'fd00::1234', template: 'https://{POD_IP}:9443/custom/metrics' }, want: 'https://[fd00::1234]:9443/custom/metrics' },
    { name: 'already bracketed IPv6 is not bracketed twice', reason: 'upstream TestBuildDCGMEndpoint', input: { podIp: 'fd00::1234', template: 'http://[{POD_IP}]:9400/metrics' }, want: 'http://[fd00::1234]:9400/metrics' },
  ])('$name', ({ input, want }) => {
    expect(metricsEndpoint(input.template, input.podIp)).toBe(want);
  });
});

describe('readExporterMetrics', () => {
  it.each([
    {
      name: 'a body with hw_gpu_info is read as Intel XPU metrics: 3 x "Intel(R) Graphics [0xe211]", 24480 MiB, pcie',
      reason: 'upstream ScrapeMetricsEndpoint ("if hasIntelMetricFamilies ... parseIntelMetrics"); TestScrapeMetricsEndpoint "xpumd metrics" (GPUsPerNode 3, VRAMPerGPU 24480)',
      input: fixture('xpumd-b60-3gpu.metrics'),
      want: { ok: true, reading: { hostname: '', gpuCount: 3, model: 'Intel(R) Graphics [0xe211]', vramMb: 24480, interconnect: 'pcie', interconnectTier: 'none', nvlinkLinks: 0, pciDeviceId: '0xe211' } },
    },
    {
      name: 'any other body is read as DCGM metrics',
      reason: 'upstream ScrapeMetricsEndpoint (parseMetrics otherwise); TestScrapeMetricsEndpoint "successful scrape"',
      input: UPSTREAM_SCRAPE_BODY,
      want: { ok: true, reading: { hostname: 'test-node', gpuCount: 1, model: 'NVIDIA A100', vramMb: 12500, interconnect: 'pcie', interconnectTier: 'none', nvlinkLinks: 0 } },
    },
    {
      name: 'a body that is not Prometheus text is refused whichever exporter served it',
      reason: 'upstream TestScrapeMetricsEndpoint "invalid metrics"',
      input: 'not a prometheus format\n',
      want: { ok: false, error: 'parse prometheus metrics: line 1: expected a value (and an optional timestamp) in "not a prometheus format"' },
    },
  ])('$name', ({ input, want }) => {
    expect(readExporterMetrics(input)).toEqual(want);
  });
});

function exporter(name: string, overrides: Partial<DcgmExporterPod> = {}): DcgmExporterPod {
  const podIp = overrides.podIp ?? '10.0.0.1';
  return { namespace: 'gpu-operator', name, nodeName: `node-of-${name}`, phase: 'Running', podIp, scrape: { endpoint: `http://${podIp}:9400/metrics`, ok: true, body: fixture('h200-hgx-8gpu.metrics') }, ...overrides };
}

describe('readExporterNodes', () => {
  const xpumd = fixture('xpumd-b60-3gpu.metrics');
  const rows: { name: string; reason: string; input: { source: MetricsSource; pods: DcgmExporterPod[] }; want: DcgmNodesResult }[] = [
    {
      name: 'two exporters on two nodes: one node each, named by the pod\'s spec.nodeName',
      reason: 'upstream discoverPrometheusPods (nodeName from the pod; the Hostname label only when it is empty)',
      input: { source: 'dcgm', pods: [exporter('dcgm-a'), exporter('dcgm-b', { podIp: '10.0.0.2' })] },
      want: {
        ok: true,
        nodes: [
          { name: 'node-of-dcgm-a', product: 'NVIDIA H200', gpuCount: 8, vramMb: 143771, interconnect: 'nvlink' },
          { name: 'node-of-dcgm-b', product: 'NVIDIA H200', gpuCount: 8, vramMb: 143771, interconnect: 'nvlink' },
        ],
      },
    },
    {
      name: 'a pod that is not Running, or has no IP, is not read; an unscheduled pod\'s node is its Hostname',
      reason: 'upstream discoverPrometheusPods ("pod.Status.Phase != Running || PodIP == \\"\\"" skips)',
      input: { source: 'dcgm', pods: [exporter('pending', { phase: 'Pending' }), exporter('no-ip', { podIp: '' }), exporter('dcgm-c', { nodeName: '' })] },
      want: { ok: true, nodes: [{ name: 'gpu-node-0', product: 'NVIDIA H200', gpuCount: 8, vramMb: 143771, interconnect: 'nvlink' }] },
    },
    {
      name: 'an xpumd exporter: the Intel node with its PCI device id, scraped at :8080',
      reason: 'upstream TestDiscoverGPUsFromIntelExporterFiltered "xpumd endpoint" (http://10.0.0.4:8080/metrics, GPUsPerNode 3, node xpu-node)',
      input: { source: 'intel-xpumd', pods: [exporter('xpumd', { nodeName: 'xpu-node', podIp: '10.0.0.4', scrape: { endpoint: 'http://10.0.0.4:8080/metrics', ok: true, body: xpumd } })] },
      want: { ok: true, nodes: [{ name: 'xpu-node', product: 'Intel(R) Graphics [0xe211]', gpuCount: 3, vramMb: 24480, interconnect: 'pcie', pciDeviceId: '0xe211' }] },
    },
    {
      name: 'an xpumd and an intel-xpumanager exporter on one node count as one node',
      reason: 'upstream TestDiscoverGPUsFromIntelExporterFiltered "dedupes same node across multiple intel exporter pods" (NodesWithGPUs 1)',
      input: {
        source: 'intel-xpumd',
        pods: [
          exporter('xpumd', { namespace: 'intel-xpu', nodeName: 'shared-node', podIp: '10.0.0.5', scrape: { endpoint: 'http://10.0.0.5:8080/metrics', ok: true, body: xpumd } }),
          exporter('xpu-manager', { namespace: 'intel-xpu', nodeName: 'shared-node', podIp: '10.0.0.6', scrape: { endpoint: 'http://10.0.0.6:8080/metrics', ok: true, body: xpumd } }),
        ],
      },
      want: { ok: true, nodes: [{ name: 'shared-node', product: 'Intel(R) Graphics [0xe211]', gpuCount: 3, vramMb: 24480, interconnect: 'pcie', pciDeviceId: '0xe211' }] },
    },
    {
      name: 'every scrape failing: "failed to scrape any dcgm exporter pod: [pod <name> (<ip>): <endpoint>: <error> ...]"',
      reason: 'upstream discoverPrometheusPods, scrapeAnyEndpoint; ScrapeMetricsEndpoint "returned status 404" (TestScrapeMetricsEndpoint)',
      input: {
        source: 'dcgm',
        pods: [
          exporter('dcgm-a', { scrape: { endpoint: 'http://10.0.0.1:9400/metrics', ok: false, error: 'metrics endpoint http://10.0.0.1:9400/metrics returned status 404' } }),
          exporter('dcgm-b', { podIp: '10.0.0.2', scrape: { endpoint: 'http://10.0.0.2:9400/metrics', ok: true, body: 'not a prometheus format\n' } }),
        ],
      },
      want: {
        ok: false,
        error:
          'failed to scrape any dcgm exporter pod: [pod dcgm-a (10.0.0.1): http://10.0.0.1:9400/metrics: metrics endpoint http://10.0.0.1:9400/metrics returned status 404 ' +
          'pod dcgm-b (10.0.0.2): http://10.0.0.2:9400/metrics: parse prometheus metrics: line 1: expected a value (and an optional timestamp) in "not a prometheus format"]',
      },
    },
    {
      name: 'an Intel exporter serving no device: "failed to scrape any intel-xpumd exporter pod: [... no XPU devices detected from XPUMD metrics]"',
      reason: 'upstream parseIntelAcceleratorMetrics error, wrapped by discoverPrometheusPods with the source name',
      input: { source: 'intel-xpumd', pods: [exporter('xpumd', { podIp: '10.0.0.4', scrape: { endpoint: 'http://10.0.0.4:8080/metrics', ok: true, body: '# TYPE hw_gpu_info gauge\n' } })] },
      want: { ok: false, error: 'failed to scrape any intel-xpumd exporter pod: [pod xpumd (10.0.0.4): http://10.0.0.4:8080/metrics: no XPU devices detected from XPUMD metrics]' },
    },
    {
      name: 'exporter pods, none Running: "no GPU metrics could be parsed from any <source> exporter pod"',
      reason: 'upstream discoverPrometheusPods',
      input: { source: 'intel-xpumd', pods: [exporter('pending', { phase: 'Pending', scrape: undefined })] },
      want: { ok: false, error: 'no GPU metrics could be parsed from any intel-xpumd exporter pod' },
    },
  ];
  it.each(rows)('$name', ({ input, want }) => {
    expect(readExporterNodes(input.source, input.pods)).toEqual(want);
  });
});

describe('hasInfinibandPods', () => {
  it.each([
    { name: 'a pod whose name contains "rdma" means InfiniBand', reason: 'upstream detectIBPods', input: ['network-operator-abc', 'rdma-shared-dp-ds-x7k2p'], want: true },
    { name: 'no such pod: none', reason: 'upstream detectIBPods', input: ['network-operator-abc'], want: false },
  ])('$name', ({ input, want }) => {
    expect(hasInfinibandPods(input)).toBe(want);
  });
});
