/**
 * Scraping a DCGM exporter's metrics endpoint over real HTTP on loopback, with upstream's error
 * texts (deploy/operator/internal/gpu/discovery_test.go `TestScrapeMetricsEndpoint`: a 404 gives
 * `metrics endpoint <url> returned status 404`; deploy/operator/internal/gpu/discovery.go
 * `ScrapeMetricsEndpoint`: `HTTP GET <url> failed: ...`); and the 60 s discovery cache (upstream
 * `GPUDiscoveryCache`, tests `TestDiscoverGPUsFromDCGM_CacheHit` and `TestDiscoverGPUsFromDCGMFiltered_MixedSKU`
 * "cache is per SKU") on an injected clock.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DcgmFacts } from '../domain/index.js';
import { GpuDiscoveryCache, MAX_METRICS_BODY_BYTES, discoveryBudget, scrapeMetricsEndpoint } from './exporters.js';

let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === '/metrics') response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end('DCGM_FI_DEV_GPU_TEMP{gpu="0",modelName="NVIDIA A100",Hostname="test-node"} 50\n');
    // An exporter that accepts and never answers: only a timeout or the caller's budget ends the GET.
    else if (request.url === '/hang') return;
    else if (request.url === '/huge') response.writeHead(200).end(Buffer.alloc(MAX_METRICS_BODY_BYTES + 1, 'a'));
    else response.writeHead(404).end('404 page not found\n');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((done) => server.close(() => done()));
});

describe('scrapeMetricsEndpoint', () => {
  it('returns the body of a 200 answer (upstream TestScrapeMetricsEndpoint "successful scrape")', async () => {
    expect(await scrapeMetricsEndpoint(`${base}/metrics`)).toEqual({ ok: true, body: 'DCGM_FI_DEV_GPU_TEMP{gpu="0",modelName="NVIDIA A100",Hostname="test-node"} 50\n' });
  });

  it('a 404 is "metrics endpoint <url> returned status 404" (upstream TestScrapeMetricsEndpoint "404 response")', async () => {
    expect(await scrapeMetricsEndpoint(`${base}/nothing`)).toEqual({ ok: false, error: `metrics endpoint ${base}/nothing returned status 404` });
  });

  it('a refused connection is "HTTP GET <url> failed: ..." (upstream ScrapeMetricsEndpoint), never a throw', async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(closed.address() as { port: number }).port}/metrics`;
    await new Promise<void>((done) => closed.close(() => done()));
    const result = await scrapeMetricsEndpoint(url);
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.error).toMatch(new RegExp(`^HTTP GET ${url.replaceAll('.', '\\.')} failed: `));
  });

  it('an exporter that does not answer within the caller\'s time budget (admission: inside the webhook timeout) fails naming the budget, before upstream\'s 5 s request timeout', async () => {
    expect(await scrapeMetricsEndpoint(`${base}/hang`, discoveryBudget(0.2))).toEqual({ ok: false, error: `HTTP GET ${base}/hang failed: hardware discovery's time budget of 0.2 s ran out` });
  });

  it('a budget already spent fails the scrape without sending it', async () => {
    const spent = discoveryBudget(0);
    await new Promise((done) => spent.addEventListener('abort', done, { once: true }));
    expect(await scrapeMetricsEndpoint(`${base}/metrics`, spent)).toEqual({ ok: false, error: `HTTP GET ${base}/metrics failed: hardware discovery's time budget of 0 s ran out` });
  });

  it(`a body over ${MAX_METRICS_BODY_BYTES} bytes is refused, not read whole`, async () => {
    expect(await scrapeMetricsEndpoint(`${base}/huge`)).toEqual({ ok: false, error: `metrics endpoint ${base}/huge returned more than ${MAX_METRICS_BODY_BYTES} bytes` });
  });
});

describe('GpuDiscoveryCache', () => {
  const facts: DcgmFacts = { exporterPods: [{ namespace: 'gpu-operator', name: 'dcgm-pod', nodeName: 'node-a', phase: 'Running', podIp: '10.0.0.1', controller: { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'nvidia-dcgm-exporter' } }], isGpuOperatorRunning: false };
  const start = new Date('2026-12-01T12:00:00Z');
  function cacheAt(): { cache: GpuDiscoveryCache; advanceMs: (ms: number) => void } {
    let now = start;
    return { cache: new GpuDiscoveryCache(() => now), advanceMs: (ms) => (now = new Date(now.getTime() + ms)) };
  }

  it('a stored discovery is returned again within 60 s without scraping (upstream TestDiscoverGPUsFromDCGM_CacheHit)', () => {
    const { cache, advanceMs } = cacheAt();
    expect(cache.get(undefined)).toBeUndefined();
    cache.set(undefined, facts);
    advanceMs(59_999);
    expect(cache.get(undefined)).toBe(facts);
  });

  it('60 s after it was stored it is gone, and stays gone (upstream cache.Set(filterSKU, info, 60*time.Second); Get: time.Now().Before(expiresAt))', () => {
    const { cache, advanceMs } = cacheAt();
    cache.set(undefined, facts);
    advanceMs(60_000);
    expect(cache.get(undefined)).toBeUndefined();
    advanceMs(-1);
    expect(cache.get(undefined)).toBeUndefined();
  });

  it('entries are per SKU filter: the unfiltered result does not answer a100_sxm (upstream TestDiscoverGPUsFromDCGMFiltered_MixedSKU "cache is per SKU")', () => {
    const { cache } = cacheAt();
    cache.set(undefined, facts);
    expect(cache.get('a100_sxm')).toBeUndefined();
    const a100: DcgmFacts = { ...facts, exporterPods: [] };
    cache.set('a100_sxm', a100);
    expect(cache.get('a100_sxm')).toBe(a100);
    expect(cache.get(undefined)).toBe(facts);
  });
});
