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
  DEFAULT_EXPORTER_NAMESPACES,
  exporterControllerOf,
  exporterPodTrust,
  hasInfinibandPods,
  interconnectOf,
  metricsEndpoint,
  parsePrometheusText,
  readDcgmMetrics,
  readExporterMetrics,
  readExporterNodes,
  parseExporterNamespaces,
  splitExporterPods,
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

/** The GPU Operator's DCGM exporter DaemonSet, the controller of its pods (NVIDIA gpu-operator assets/state-dcgm-exporter). */
const DCGM_DAEMONSET = { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'nvidia-dcgm-exporter' };

/** The h200 fixture as the exporter on `nodeName` serves it: the DaemonSet sets NODE_NAME from spec.nodeName, which dcgm-exporter writes as `Hostname`. */
const h200On = (nodeName: string): string => fixture('h200-hgx-8gpu.metrics').replace(/Hostname="[^"]*"/g, `Hostname="${nodeName}"`);

/** A Running pod of the GPU Operator's DCGM exporter DaemonSet in gpu-operator, serving the h200 fixture about its own node. */
function exporter(name: string, overrides: Partial<DcgmExporterPod> = {}): DcgmExporterPod {
  const podIp = overrides.podIp ?? '10.0.0.1';
  const nodeName = overrides.nodeName ?? `node-of-${name}`;
  return { namespace: 'gpu-operator', name, nodeName, phase: 'Running', podIp, controller: DCGM_DAEMONSET, scrape: { endpoint: `http://${podIp}:9400/metrics`, ok: true, body: h200On(nodeName) }, ...overrides };
}

/** DCGM samples of `gpus` GPUs (ids from `firstGpu`) of `model`, each with `fbMb` MiB, as the exporter on `hostname` labels them. */
const dcgmSamples = (hostname: string, model: string, firstGpu: number, gpus: number, fbMb: number): string =>
  Array.from({ length: gpus }, (_, i) => `DCGM_FI_DEV_GPU_TEMP{gpu="${firstGpu + i}",modelName="${model}",Hostname="${hostname}"} 40\nDCGM_FI_DEV_FB_FREE{gpu="${firstGpu + i}",Hostname="${hostname}"} ${fbMb}\n`).join('');

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
      name: 'a pod that is not Running, or has no IP, is not read (upstream); a pod with no spec.nodeName gives no node, whatever Hostname its metrics claim (a function only trusts what it can prove)',
      reason: 'upstream discoverPrometheusPods ("pod.Status.Phase != Running || PodIP == \\"\\"" skips; it names an unscheduled pod\'s node by the exporter\'s Hostname, which the exporter chooses); issue 20 item 1',
      input: { source: 'dcgm', pods: [exporter('pending', { phase: 'Pending' }), exporter('no-ip', { podIp: '' }), exporter('dcgm-c', { nodeName: '', scrape: { endpoint: 'http://10.0.0.1:9400/metrics', ok: true, body: h200On('gpu-node-0') } })] },
      want: { ok: false, error: 'no GPU metrics could be parsed from any dcgm exporter pod' },
    },
    {
      name: 'each pod\'s metrics count only for the node the pod runs on: GPUs its samples label with another node\'s Hostname are ignored',
      reason: 'issue 20 item 1 ("a pod reporting GPUs of other nodes is ignored for those"); upstream counts every sample for the pod\'s node',
      input: { source: 'dcgm', pods: [exporter('dcgm-a', { nodeName: 'node-a', scrape: { endpoint: 'http://10.0.0.1:9400/metrics', ok: true, body: dcgmSamples('node-a', 'NVIDIA H200', 0, 8, 143771) + dcgmSamples('node-b', 'NVIDIA B200', 8, 64, 183359) } })] },
      want: { ok: true, nodes: [{ name: 'node-a', product: 'NVIDIA H200', gpuCount: 8, vramMb: 143771, interconnect: 'pcie' }] },
    },
    {
      name: 'a pod whose metrics are all about other nodes gives no node: "no GPUs detected from DCGM metrics" for it',
      reason: 'issue 20 item 1 (metrics count only for the pod\'s spec.nodeName); upstream parseDCGMAcceleratorMetrics error text',
      input: { source: 'dcgm', pods: [exporter('dcgm-a', { nodeName: 'node-a', scrape: { endpoint: 'http://10.0.0.1:9400/metrics', ok: true, body: dcgmSamples('node-b', 'NVIDIA B200', 0, 8, 183359) } })] },
      want: { ok: false, error: 'failed to scrape any dcgm exporter pod: [pod dcgm-a (10.0.0.1): http://10.0.0.1:9400/metrics: no GPUs detected from DCGM metrics]' },
    },
    {
      name: 'an Intel exporter\'s devices labelled with another node_name are ignored for its own node',
      reason: 'issue 20 item 1; upstream parseIntelAcceleratorMetrics reads node_name, counts every device',
      input: {
        source: 'intel-xpumd',
        pods: [
          exporter('xpumd', {
            nodeName: 'xpu-node',
            podIp: '10.0.0.4',
            scrape: {
              endpoint: 'http://10.0.0.4:8080/metrics',
              ok: true,
              body: '# TYPE hw_gpu_info gauge\nhw_gpu_info{device_id="0",device_name="Intel(R) Graphics [0xe211]",pci_device_id="0xe211",node_name="xpu-node"} 1\nhw_gpu_info{device_id="1",device_name="Intel(R) Graphics [0xe211]",pci_device_id="0xe211",node_name="other-node"} 1\n',
            },
          }),
        ],
      },
      want: { ok: true, nodes: [{ name: 'xpu-node', product: 'Intel(R) Graphics [0xe211]', gpuCount: 1, vramMb: 0, interconnect: 'pcie', pciDeviceId: '0xe211' }] },
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

describe('exporterPodTrust: a function only trusts what it can prove (issue 20 item 1)', () => {
  const pod = (overrides: Partial<DcgmExporterPod> = {}): Pick<DcgmExporterPod, 'namespace' | 'name' | 'controller'> => ({ namespace: 'gpu-operator', name: 'nvidia-dcgm-exporter-x7k2p', controller: DCGM_DAEMONSET, ...overrides });
  const rows: { name: string; reason: string; input: { pod: Pick<DcgmExporterPod, 'namespace' | 'name' | 'controller'>; trustedNamespaces: readonly string[] }; want: ReturnType<typeof exporterPodTrust> }[] = [
    {
      name: 'the GPU Operator\'s DaemonSet pod in gpu-operator, the default trusted namespace, is trusted',
      reason: 'NVIDIA gpu-operator runs nvidia-dcgm-exporter as a DaemonSet in its namespace; DEFAULT_EXPORTER_NAMESPACES',
      input: { pod: pod(), trustedNamespaces: DEFAULT_EXPORTER_NAMESPACES },
      want: { isTrusted: true },
    },
    {
      name: 'a labelled pod in a foreign (user) namespace is not trusted, though a DaemonSet controls it',
      reason: 'issue 20 item 1 (a): any user who can create a pod can label it as a DCGM exporter',
      input: { pod: pod({ namespace: 'team-a' }), trustedNamespaces: DEFAULT_EXPORTER_NAMESPACES },
      want: { isTrusted: false, reason: 'namespace team-a is not a trusted exporter namespace (gpu-operator)' },
    },
    {
      name: 'a pod in gpu-operator that no DaemonSet controls (a bare or debug pod) is not trusted',
      reason: 'issue 20 item 1 (b): controlled by a DaemonSet (controller ownerReference kind DaemonSet)',
      input: { pod: pod({ controller: undefined }), trustedNamespaces: DEFAULT_EXPORTER_NAMESPACES },
      want: { isTrusted: false, reason: 'not controlled by a DaemonSet' },
    },
    {
      name: 'a pod in gpu-operator controlled by a ReplicaSet is not trusted',
      reason: 'issue 20 item 1 (b)',
      input: { pod: pod({ controller: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'exporter-5d9c' } }), trustedNamespaces: DEFAULT_EXPORTER_NAMESPACES },
      want: { isTrusted: false, reason: 'not controlled by a DaemonSet' },
    },
    {
      name: 'a controller named DaemonSet of another API group is not a DaemonSet',
      reason: 'issue 20 item 1 (b): apps/v1 DaemonSet (a CRD may be called DaemonSet too)',
      input: { pod: pod({ controller: { apiVersion: 'example.com/v1', kind: 'DaemonSet', name: 'x' } }), trustedNamespaces: DEFAULT_EXPORTER_NAMESPACES },
      want: { isTrusted: false, reason: 'not controlled by a DaemonSet' },
    },
    {
      name: 'an Intel XPU Manager DaemonSet pod in a namespace the administrator names is trusted',
      reason: 'GPU_EXPORTER_NAMESPACES / hardwareDiscovery.exporterNamespaces (Intel has no conventional namespace)',
      input: { pod: pod({ namespace: 'intel-xpu', controller: { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'intel-xpumanager' } }), trustedNamespaces: ['gpu-operator', 'intel-xpu'] },
      want: { isTrusted: true },
    },
    {
      name: '"*" trusts any namespace, as upstream does (switch-over), and still requires a DaemonSet',
      reason: 'ANY_EXPORTER_NAMESPACE; issue 20 item 1 (b) still applies',
      input: { pod: pod({ namespace: 'team-a', controller: undefined }), trustedNamespaces: ['*'] },
      want: { isTrusted: false, reason: 'not controlled by a DaemonSet' },
    },
    {
      name: '"*" trusts a DaemonSet pod in any namespace',
      reason: 'ANY_EXPORTER_NAMESPACE: upstream listDCGMExporterPods lists every namespace',
      input: { pod: pod({ namespace: 'monitoring' }), trustedNamespaces: ['*'] },
      want: { isTrusted: true },
    },
  ];
  it.each(rows)('$name', ({ input, want }) => {
    expect(exporterPodTrust(input.pod, input.trustedNamespaces)).toEqual(want);
  });

  it('splitExporterPods keeps the trusted pods in list order and names every other one with its reason', () => {
    const pods = [pod({ name: 'planted', namespace: 'team-a' }), pod({ name: 'ds-0' }), pod({ name: 'debug', controller: undefined }), pod({ name: 'ds-1' })];
    expect(splitExporterPods(pods, DEFAULT_EXPORTER_NAMESPACES)).toEqual({
      trusted: [pods[1], pods[3]],
      untrusted: [
        { namespace: 'team-a', name: 'planted', reason: 'namespace team-a is not a trusted exporter namespace (gpu-operator)' },
        { namespace: 'gpu-operator', name: 'debug', reason: 'not controlled by a DaemonSet' },
      ],
    });
  });

  it.each([
    { name: 'the controller owner reference of a DaemonSet pod', input: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'nvidia-dcgm-exporter', uid: 'u1', controller: true, blockOwnerDeletion: true }], want: DCGM_DAEMONSET },
    { name: 'an owner that is not the controller gives none', input: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'nvidia-dcgm-exporter', uid: 'u1' }], want: undefined },
    { name: 'a malformed ownerReferences (an object, not a list) gives none', input: { apiVersion: 'apps/v1', kind: 'DaemonSet', controller: true }, want: undefined },
  ])('exporterControllerOf: $name', ({ input, want }) => {
    expect(exporterControllerOf({ metadata: { name: 'p', ownerReferences: input as never } })).toEqual(want);
  });
});

describe('parseExporterNamespaces (GPU_EXPORTER_NAMESPACES)', () => {
  it.each([
    { name: 'unset: gpu-operator, the GPU Operator\'s namespace', input: undefined, want: { ok: true, namespaces: ['gpu-operator'] } },
    { name: 'empty: the default too', input: ' ', want: { ok: true, namespaces: ['gpu-operator'] } },
    { name: 'a comma-separated list, spaces and empty entries ignored, duplicates dropped', input: ' gpu-operator , intel-xpu,,gpu-operator', want: { ok: true, namespaces: ['gpu-operator', 'intel-xpu'] } },
    { name: '"*": any namespace (upstream\'s behaviour)', input: '*', want: { ok: true, namespaces: ['*'] } },
    { name: 'a name that is not a namespace name is refused', input: 'gpu-operator,GPU_Operator', want: { ok: false, invalid: 'GPU_Operator' } },
    { name: 'a wildcard pattern is not "*"', input: 'gpu-*', want: { ok: false, invalid: 'gpu-*' } },
  ])('$name', ({ input, want }) => {
    expect(parseExporterNamespaces(input)).toEqual(want);
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
