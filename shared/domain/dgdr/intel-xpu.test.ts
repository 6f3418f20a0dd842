/**
 * Intel XPU exporter metrics, the pure part. Bodies from upstream: deploy/operator/internal/gpu/
 * discovery_test.go `TestScrapeMetricsEndpoint` "xpumd metrics" (test/fixtures/dcgm/xpumd-b60-3gpu.metrics)
 * and the XPU Manager sample of deploy/observability's exporter test (`XPUMD_SAMPLE_1`, its
 * `hw_gpu_info` and memory families); the rules from upstream `parseIntelAcceleratorMetrics`.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

import { repoRoot } from '../../../test/support/paths.js';
import { metricsEndpoint, parsePrometheusText, type DcgmReadingResult } from './dcgm.js';
import { DEFAULT_INTEL_XPU_ENDPOINT_TEMPLATE, hasIntelXpuMetricFamilies, readIntelXpuMetrics, type MetricFamilies } from './intel-xpu.js';

const UPSTREAM_XPUMD_BODY = readFileSync(resolve(repoRoot, 'test', 'fixtures', 'dcgm', 'xpumd-b60-3gpu.metrics'), 'utf8');

/** XPU Manager's own families for two Arc Pro B60 cards (deploy/observability XPUMD_SAMPLE_1, first two families and the usage family). */
const XPUMD_SAMPLE = [
  '# HELP hw_gpu_info Information about the GPU device.',
  '# TYPE hw_gpu_info gauge',
  'hw_gpu_info{hw_id="gpu-uuid-0",hw_model="Intel(R) Arc(TM) Pro B60 Graphics",hw_name="gpu-1",hw_vendor="Intel(R) Corporation",pci_bdf="0000:03:00.0",pci_device_id="e211",pci_vendor_id="8086"} 1',
  'hw_gpu_info{hw_id="gpu-uuid-1",hw_model="Intel(R) Arc(TM) Pro B60 Graphics",hw_name="gpu-2",hw_vendor="Intel(R) Corporation",pci_bdf="0000:05:00.0",pci_device_id="e211",pci_vendor_id="8086"} 1',
  '# HELP hw_memory_size_bytes Size of the memory.',
  '# TYPE hw_memory_size_bytes gauge',
  'hw_memory_size_bytes{hw_id="gpu-uuid-0",hw_memory_location="device",hw_memory_type="gddr6",hw_name="mem-1",pci_bdf="0000:03:00.0"} 25669140480',
  'hw_memory_size_bytes{hw_id="gpu-uuid-1",hw_memory_location="device",hw_memory_type="gddr6",hw_name="mem-1",pci_bdf="0000:05:00.0"} 25669140480',
  '# HELP hw_memory_usage_bytes Memory used.',
  '# TYPE hw_memory_usage_bytes gauge',
  'hw_memory_usage_bytes{hw_id="gpu-uuid-0",hw_memory_location="device",hw_memory_type="gddr6",hw_name="mem-1",pci_bdf="0000:03:00.0"} 8589934592',
].join('\n');

function body(text: string): MetricFamilies {
  const parsed = parsePrometheusText(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed;
}

describe('readIntelXpuMetrics', () => {
  const rows: { name: string; reason: string; input: string; want: DcgmReadingResult }[] = [
    {
      name: 'upstream\'s xpumd body: 3 devices by hw_id, model from hw_name, 25669140480 bytes = 24480 MiB, pci 0xe211',
      reason: 'upstream TestScrapeMetricsEndpoint "xpumd metrics" (GPUsPerNode 3, Model "Intel(R) Graphics [0xe211]", VRAMPerGPU 24480)',
      input: UPSTREAM_XPUMD_BODY,
      want: { ok: true, reading: { hostname: '', gpuCount: 3, model: 'Intel(R) Graphics [0xe211]', vramMb: 24480, interconnect: 'pcie', interconnectTier: 'none', nvlinkLinks: 0, pciDeviceId: '0xe211' } },
    },
    {
      name: 'XPU Manager\'s sample: hw_model wins over hw_name, the usage family is not the size family',
      reason: 'upstream parseIntelAcceleratorMetrics (model labels device_name, hw_model, hw.model, hw_name, hw.name in that order; size from hw_memory_size_bytes)',
      input: XPUMD_SAMPLE,
      want: { ok: true, reading: { hostname: '', gpuCount: 2, model: 'Intel(R) Arc(TM) Pro B60 Graphics', vramMb: 24480, interconnect: 'pcie', interconnectTier: 'none', nvlinkLinks: 0, pciDeviceId: 'e211' } },
    },
    {
      name: 'node_name names the node; host memory (hw_memory_location="host") is not VRAM; device_id wins over hw_id',
      reason: 'upstream parseIntelAcceleratorMetrics (location must be "device" or absent; device id labels device_id, hw_id, ...; node from node_name)',
      input: [
        'hw_gpu_info{device_id="a",hw_id="x",device_name="Intel(R) Graphics [0xe211]",node_name="xpu-node"} 1',
        'hw_memory_size_bytes{device_id="a",hw_memory_location="host"} 68719476736',
        'hw_memory_size_bytes{device_id="a",hw_memory_location="Device"} 25669140480',
      ].join('\n'),
      want: { ok: true, reading: { hostname: 'xpu-node', gpuCount: 1, model: 'Intel(R) Graphics [0xe211]', vramMb: 24480, interconnect: 'pcie', interconnectTier: 'none', nvlinkLinks: 0, pciDeviceId: '' } },
    },
    {
      name: 'the OpenTelemetry names: {"hw.gpu.info","hw.id"="0"} and "hw.memory.size"',
      reason: 'upstream getMetricFamily(families, "hw_gpu_info", "hw.gpu.info") and ("hw_memory_size_bytes", "hw_memory_size", "hw.memory.size"); getMetricLabel "hw.id", "hw.model", "pci.device_id"',
      input: ['{"hw.gpu.info","hw.id"="0","hw.model"="Intel(R) Arc(TM) Pro B60 Graphics","pci.device_id"="0xe211"} 1', '{"hw.memory.size","hw.id"="0"} 25669140480'].join('\n'),
      want: { ok: true, reading: { hostname: '', gpuCount: 1, model: 'Intel(R) Arc(TM) Pro B60 Graphics', vramMb: 24480, interconnect: 'pcie', interconnectTier: 'none', nvlinkLinks: 0, pciDeviceId: '0xe211' } },
    },
    {
      name: 'hw_gpu_info declared but without a device: "no XPU devices detected from XPUMD metrics"',
      reason: 'upstream parseIntelAcceleratorMetrics ("!ok || len(infoFamily.Metric) == 0")',
      input: '# HELP hw_gpu_info Information about the GPU device.\n# TYPE hw_gpu_info gauge\n',
      want: { ok: false, error: 'no XPU devices detected from XPUMD metrics' },
    },
    {
      name: 'devices without any id label: "no XPU devices detected from XPUMD metrics"',
      reason: 'upstream parseIntelAcceleratorMetrics (deviceCount == 0)',
      input: 'hw_gpu_info{hw_name="Intel(R) Graphics [0xe211]"} 1\n',
      want: { ok: false, error: 'no XPU devices detected from XPUMD metrics' },
    },
  ];
  it.each(rows)('$name', ({ input, want }) => {
    expect(readIntelXpuMetrics(body(input))).toEqual(want);
  });
});

describe('hasIntelXpuMetricFamilies', () => {
  it.each([
    { name: 'a declared hw_gpu_info family (even without samples) marks Intel XPU metrics', reason: 'upstream hasIntelMetricFamilies (expfmt keeps declared families)', input: '# TYPE hw_gpu_info gauge\n', want: true },
    { name: 'the dotted hw.gpu.info family too', reason: 'upstream hasIntelMetricFamilies ("hw_gpu_info", "hw.gpu.info")', input: '{"hw.gpu.info","hw.id"="0"} 1\n', want: true },
    { name: 'DCGM metrics do not', reason: 'upstream ScrapeMetricsEndpoint (parseMetrics otherwise)', input: 'DCGM_FI_DEV_GPU_TEMP{gpu="0"} 50\n', want: false },
  ])('$name', ({ input, want }) => {
    expect(hasIntelXpuMetricFamilies(body(input))).toBe(want);
  });
});

describe('the Intel XPU endpoint', () => {
  it('upstream\'s default http://{POD_IP}:8080/metrics, {POD_IP} replaced (TestDiscoverGPUsFromIntelExporterFiltered "xpumd endpoint": http://10.0.0.4:8080/metrics)', () => {
    expect(metricsEndpoint(DEFAULT_INTEL_XPU_ENDPOINT_TEMPLATE, '10.0.0.4')).toBe('http://10.0.0.4:8080/metrics');
  });
});
