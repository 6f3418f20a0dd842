/**
 * Scraping a DCGM exporter's metrics endpoint over real HTTP on loopback, with upstream's error
 * texts (deploy/operator/internal/gpu/discovery_test.go `TestScrapeMetricsEndpoint`: a 404 gives
 * `metrics endpoint <url> returned status 404`; deploy/operator/internal/gpu/discovery.go
 * `ScrapeMetricsEndpoint`: `HTTP GET <url> failed: ...`).
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MAX_METRICS_BODY_BYTES, scrapeMetricsEndpoint } from './dcgm.js';

let server: Server;
let base = '';

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === '/metrics') response.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end('DCGM_FI_DEV_GPU_TEMP{gpu="0",modelName="NVIDIA A100",Hostname="test-node"} 50\n');
    else if (request.url === '/huge') response.writeHead(200).end(Buffer.alloc(MAX_METRICS_BODY_BYTES + 1, 'a'));
    else response.writeHead(404).end('404 page not found\n');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});

afterAll(async () => {
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

  it(`a body over ${MAX_METRICS_BODY_BYTES} bytes is refused, not read whole`, async () => {
    expect(await scrapeMetricsEndpoint(`${base}/huge`)).toEqual({ ok: false, error: `metrics endpoint ${base}/huge returned more than ${MAX_METRICS_BODY_BYTES} bytes` });
  });
});
