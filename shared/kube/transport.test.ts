import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RequestOptions } from 'node:https';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TransientError } from '../runtime/index.js';
import { classifyKubeError, kubeStatusOf } from './errors.js';
import { ENV_SERVICE_ACCOUNT_DIR, inClusterConfig, KubeTransport, loadKubeConnection } from './transport.js';

describe('inClusterConfig (client-go rest.InClusterConfig)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sa-'));
    writeFileSync(join(dir, 'token'), 'first\n');
    writeFileSync(join(dir, 'ca.crt'), 'CA');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('the server is https://KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, http on ports 80, 8080 and 8001, IPv6 hosts in brackets', () => {
    expect(inClusterConfig({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }).getCurrentCluster()?.server).toBe('https://10.0.0.1:443');
    expect(inClusterConfig({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '8080' }).getCurrentCluster()?.server).toBe('http://10.0.0.1:8080');
    expect(inClusterConfig({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }).getCurrentCluster()?.server).toBe('https://[fd00::1]:443');
    expect(inClusterConfig({ KUBERNETES_SERVICE_HOST: 'kubernetes.default.svc', KUBERNETES_SERVICE_PORT: '443' }).getCurrentCluster()?.server).toBe('https://kubernetes.default.svc:443');
  });

  it('sends the service account token as a bearer token and trusts its CA; the token file is re-read a minute after the last read (it rotates), not before', async () => {
    let now = 0;
    const config = inClusterConfig({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443', [ENV_SERVICE_ACCOUNT_DIR]: dir }, () => now);
    const first: RequestOptions = {};
    await config.applyToHTTPSOptions(first);
    expect(first.headers).toEqual({ Authorization: 'Bearer first' });
    expect(String(first.ca)).toBe('CA');
    writeFileSync(join(dir, 'token'), 'second');
    now = 60_000;
    const withinAMinute: RequestOptions = {};
    await config.applyToHTTPSOptions(withinAMinute);
    expect(withinAMinute.headers).toEqual({ Authorization: 'Bearer first' });
    now = 60_001;
    const later: RequestOptions = {};
    await config.applyToHTTPSOptions(later);
    expect(later.headers).toEqual({ Authorization: 'Bearer second' });
  });
});

describe('loadKubeConnection', () => {
  it('KUBECONFIG wins (read by client-node, its current context), else in-cluster when KUBERNETES_SERVICE_HOST is set, else nothing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kubeconfig-'));
    try {
      const file = join(dir, 'config');
      writeFileSync(file, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://kube.example:6443"}}]\nusers: [{name: u, user: {token: abc}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n');
      const fromFile = await loadKubeConnection(file, { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' });
      expect(fromFile?.getCurrentCluster()?.server).toBe('https://kube.example:6443');
      const options: RequestOptions = {};
      await fromFile?.applyToHTTPSOptions(options);
      expect(options.headers).toMatchObject({ Authorization: 'Bearer abc' });
      expect((await loadKubeConnection(undefined, { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }))?.getCurrentCluster()?.server).toBe('https://10.0.0.1:443');
      expect(await loadKubeConnection(undefined, {})).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('KubeTransport', () => {
  let server: Server;
  let url: string;
  const sockets = new Set<unknown>();
  const seen: { method: string; url: string; headers: Record<string, unknown>; body: string }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      sockets.add(req.socket);
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        if (req.url === '/slow') return; // never answers
        if (req.url?.startsWith('/gone') === true) {
          res.writeHead(404, { 'content-type': 'application/json', 'retry-after': '3' }).end(JSON.stringify({ kind: 'Status', code: 404, reason: 'NotFound', message: 'not here' }));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });

  const config = (server: () => string) => ({
    getCurrentCluster: () => ({ server: server() }),
    applyToHTTPSOptions: (options: RequestOptions) => {
      options.headers = { ...options.headers, Authorization: 'Bearer t' };
      return Promise.resolve();
    },
  });

  it('sends JSON with the query and the auth header, and reuses one kept-alive connection', async () => {
    const transport = new KubeTransport(config(() => url), 5_000);
    expect(await transport.send('PATCH', '/apis/x/v1/things/a', { query: { fieldManager: 'fm', force: undefined }, body: { a: 1 }, contentType: 'application/apply-patch+yaml' })).toEqual({ ok: true });
    expect(await transport.send('GET', '/api/v1/things')).toEqual({ ok: true });
    const [patch, get] = seen.slice(-2);
    expect(patch).toMatchObject({ method: 'PATCH', url: '/apis/x/v1/things/a?fieldManager=fm', body: '{"a":1}', headers: { authorization: 'Bearer t', 'content-type': 'application/apply-patch+yaml', accept: 'application/json' } });
    expect(get).toMatchObject({ method: 'GET', url: '/api/v1/things', body: '' });
    expect(sockets.size).toBe(1);
  });

  it('a non-2xx answer carries its Status, code and Retry-After to kubeStatusOf', async () => {
    const transport = new KubeTransport(config(() => url), 5_000);
    const error = await transport.send('GET', '/gone').catch((e: unknown) => e);
    expect(kubeStatusOf(error)).toEqual({ code: 404, reason: 'NotFound', message: 'not here', causeReasons: [], retryAfterSeconds: 3 });
  });

  it('a request that times out, or a server nobody listens on, is a TransientError', async () => {
    const transport = new KubeTransport(config(() => url), 200);
    expect(classifyKubeError(await transport.send('GET', '/slow').catch((e: unknown) => e), 'get slow')).toBeInstanceOf(TransientError);
    const closed = new KubeTransport(config(() => 'http://127.0.0.1:1'), 5_000);
    expect(classifyKubeError(await closed.send('GET', '/x').catch((e: unknown) => e), 'get x')).toBeInstanceOf(TransientError);
  });
});
