/**
 * The event bridge's watch restart (issue 18 item 2), against a fake API server on loopback that
 * serves discovery, a LIST and watches the test can kill: a killed watch whose restarts fail fast
 * (a 500 answered before the watch call returns, which used to throw `ReferenceError: Cannot
 * access 'controller' before initialization` and lose the watch for good) and whose relist fails
 * too is restarted, with backoff, until it runs, and then delivers the next change.
 * Also the subscriptions and pings dev derives from the chart wiring.
 */
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { chartFunctions } from '../api/index.js';
import { chartSubscriptions, startEventBridge, type EventBridge } from './bridge.js';

interface FakeApiServer {
  readonly url: string;
  /** Watch requests so far. */
  watches: number;
  /** LIST requests so far. */
  lists: number;
  /** The next N watch requests get a 500 at once; the next M LISTs get a 500. */
  failWatches: number;
  failLists: number;
  /** The code of a failed LIST (500 unless set). */
  listFailureCode: number;
  /** Ends every open watch by destroying its connection. */
  killWatches(): void;
  /** Sends an ADDED event of a ConfigMap on every open watch. */
  add(name: string): void;
  open(): number;
  close(): Promise<void>;
}

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function startFakeApiServer(): Promise<FakeApiServer> {
  const open = new Set<ServerResponse>();
  let version = 10;
  const fake = {
    watches: 0,
    lists: 0,
    failWatches: 0,
    failLists: 0,
    listFailureCode: 500,
  } as FakeApiServer;
  const server = http.createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://x');
    const json = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (url.pathname === '/api/v1') {
      return json(200, { kind: 'APIResourceList', groupVersion: 'v1', resources: [{ name: 'configmaps', singularName: 'configmap', namespaced: true, kind: 'ConfigMap', verbs: ['get', 'list', 'watch'] }] });
    }
    if (url.pathname === '/api/v1/configmaps' && url.searchParams.get('watch') === 'true') {
      fake.watches += 1;
      if (fake.failWatches > 0) {
        fake.failWatches -= 1;
        return json(500, { kind: 'Status', status: 'Failure', code: 500 });
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.flushHeaders();
      open.add(response);
      response.on('close', () => open.delete(response));
      return;
    }
    if (url.pathname === '/api/v1/configmaps') {
      fake.lists += 1;
      if (fake.failLists > 0) {
        fake.failLists -= 1;
        // 429 as kube-apiserver answers while a CRD's storage (re)initialises after its install.
        const code = fake.listFailureCode;
        if (code === 429) response.setHeader('retry-after', '1');
        return json(code, { kind: 'Status', status: 'Failure', code, ...(code === 429 ? { reason: 'TooManyRequests', message: 'storage is (re)initializing', details: { retryAfterSeconds: 1 } } : {}) });
      }
      return json(200, { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: String(version) }, items: [] });
    }
    json(404, { kind: 'Status', code: 404 });
  });
  const url = await listen(server);
  return Object.assign(fake, {
    url,
    killWatches() {
      for (const response of open) response.socket?.destroy();
      open.clear();
    },
    add(name: string) {
      version += 1;
      const line = JSON.stringify({ type: 'ADDED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default', resourceVersion: String(version) } } });
      for (const response of open) response.write(`${line}\n`);
    },
    open: () => open.size,
    async close() {
      for (const response of open) response.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

/** A subscriber that records the `name` extension of each event it is sent. */
async function startSubscriber(): Promise<{ url: string; names: string[]; close(): Promise<void> }> {
  const names: string[] = [];
  const server = http.createServer((request, response) => {
    const name = request.headers['ce-name'];
    if (typeof name === 'string') names.push(name);
    request.resume();
    request.on('end', () => {
      response.writeHead(204);
      response.end();
    });
  });
  const url = await listen(server);
  return {
    url,
    names,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function eventually(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A kubeconfig naming the fake API server at `url` (no credentials). */
function fakeKubeConfig(url: string): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'fake', server: url, skipTLSVerify: true }],
    users: [{ name: 'fake' }],
    contexts: [{ name: 'fake', cluster: 'fake', user: 'fake' }],
    currentContext: 'fake',
  });
  return kubeConfig;
}

describe('event bridge watch restart', () => {
  it('a killed watch whose restarts fail at once (500 before the watch call returns) and whose relist fails is restarted with backoff until it runs, then delivers the next change', async () => {
    const api = await startFakeApiServer();
    cleanups.push(() => api.close());
    const subscriber = await startSubscriber();
    cleanups.push(() => subscriber.close());
    const kubeConfig = fakeKubeConfig(api.url);
    const warnings: string[] = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => void (JSON.parse(line).level >= 40 && warnings.push(line)) });
    const bridge: EventBridge = await startEventBridge({
      kubeConfig,
      log,
      resyncIntervalSeconds: 0,
      watchBackoff: { initialMs: 10, maxMs: 40 },
      subscriptions: [{ name: 'sub', url: subscriber.url, kinds: [{ apiVersion: 'v1', kind: 'ConfigMap' }], mode: 'Reference' }],
    });
    cleanups.push(() => bridge.stop());
    await eventually(() => api.open() === 1);
    api.add('before');
    await eventually(() => subscriber.names.includes('before'));

    const watchesBefore = api.watches;
    api.failWatches = 3;
    api.failLists = 1;
    api.killWatches();
    await eventually(() => api.open() === 1);
    // Three watches refused, one relist refused, then a watch that runs.
    expect(api.watches - watchesBefore).toBe(4);
    api.add('after');
    await eventually(() => subscriber.names.includes('after'));
    expect(warnings.join('')).not.toContain('ReferenceError');
  }, 30_000);
});

describe('event bridge start', () => {
  const start = (api: FakeApiServer) =>
    startEventBridge({
      kubeConfig: fakeKubeConfig(api.url),
      log: pino({ level: 'silent' }),
      resyncIntervalSeconds: 0,
      watchBackoff: { initialMs: 10, maxMs: 40 },
      subscriptions: [{ name: 'sub', url: 'http://127.0.0.1:9', kinds: [{ apiVersion: 'v1', kind: 'ConfigMap' }], mode: 'Reference' }],
    });

  it('the first LIST answered 429 "storage is (re)initializing" (kube-apiserver just after a CRD install; seen failing dev\'s start in a clean-clone run) is tried again until it is served', async () => {
    const api = await startFakeApiServer();
    cleanups.push(() => api.close());
    Object.assign(api, { failLists: 2, listFailureCode: 429 });
    const bridge = await start(api);
    cleanups.push(() => bridge.stop());
    expect(api.lists).toBe(3);
    await eventually(() => api.open() === 1);
  });

  it('a first LIST refused for good (403) fails the start at once, not after retries', async () => {
    const api = await startFakeApiServer();
    cleanups.push(() => api.close());
    Object.assign(api, { failLists: 5, listFailureCode: 403 });
    await expect(start(api)).rejects.toBeDefined();
    expect(api.lists).toBe(1);
  });
});

describe('event bridge stop', () => {
  it('does not wait out a delivery\'s retry backoff: a subscriber answering 503 with a 60 s backoff pending, stop() makes the last attempt at once and the event is dropped with a warning', async () => {
    const api = await startFakeApiServer();
    cleanups.push(() => api.close());
    let attempts = 0;
    const failing = http.createServer((request, response) => {
      attempts += 1;
      request.resume();
      request.on('end', () => {
        response.writeHead(503);
        response.end();
      });
    });
    const url = await listen(failing);
    cleanups.push(async () => {
      failing.closeAllConnections();
      await new Promise<void>((resolve) => failing.close(() => resolve()));
    });
    const kubeConfig = fakeKubeConfig(api.url);
    const warnings: string[] = [];
    let retrying = 0;
    const log = pino({ level: 'debug' }, {
      write: (line: string) => {
        if (JSON.parse(line).level >= 40) warnings.push(line);
        if (line.includes('Retrying event delivery')) retrying += 1;
      },
    });
    const bridge = await startEventBridge({
      kubeConfig,
      log,
      resyncIntervalSeconds: 0,
      retry: { retries: 3, backoffDelayMs: 60_000 },
      subscriptions: [{ name: 'sub', url, kinds: [{ apiVersion: 'v1', kind: 'ConfigMap' }], mode: 'Reference' }],
    });
    await eventually(() => api.open() === 1);
    api.add('refused');
    // The first attempt answered 503: the delivery now waits out its backoff.
    await eventually(() => retrying === 1);
    expect(attempts).toBe(1);
    const startedAt = Date.now();
    await bridge.stop();
    // Far below the 60 s backoff: only the request under way is waited for.
    expect(Date.now() - startedAt).toBeLessThan(10_000);
    expect(attempts).toBe(2);
    expect(warnings.join('')).toContain('Dropped event after retries');
  }, 30_000);
});

describe('chartSubscriptions', () => {
  it('subscribes each function to exactly its chart sources (kinds, label selectors, modes), with its resync and tick pings on its own source', () => {
    const urls = { reconcile: 'http://r', profile: 'http://p', cleanup: 'http://c' };
    const subscriptions = chartSubscriptions({ lpxEnabled: false, dgdrV1Beta2Enabled: true }, urls);
    expect(subscriptions.map((s) => [s.name, s.url, s.mode])).toEqual([
      ['reconcile', 'http://r', 'Reference'],
      ['reconcile-children', 'http://r', 'Resource'],
      ['profile', 'http://p', 'Reference'],
      ['cleanup', 'http://c', 'Reference'],
    ]);
    const cleanup = subscriptions.find((s) => s.name === 'cleanup');
    expect(cleanup?.kinds).toEqual([
      { apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRun' },
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim' },
      { apiVersion: 'batch/v1', kind: 'Job', labelSelector: 'nvidia.com/dgdr-run-uid' },
    ]);
    // The Run resync, the claims' resync (releases a gone Run's finalizer), and the run-retention tick.
    expect(cleanup?.pings).toEqual([
      { kind: 'DynamoGraphDeploymentRun', apiVersion: 'nvidia.com/v1beta2' },
      { kind: 'PersistentVolumeClaim', apiVersion: 'v1' },
      { kind: 'DynamoGraphDeploymentRun' },
    ]);
    expect(subscriptions.find((s) => s.name === 'profile')?.kinds).toContainEqual({ apiVersion: 'batch/v1', kind: 'Job', labelSelector: 'app=dynamo-profiler' });
  });

  it('runs cleanup whenever a gate that needs it is on, and only then', () => {
    const names = (lpxEnabled: boolean, dgdrV1Beta2Enabled: boolean) => chartFunctions({ lpxEnabled, dgdrV1Beta2Enabled }).map((f) => f.name);
    expect(names(false, false)).toEqual(['reconcile', 'profile']);
    expect(names(true, false)).toEqual(['reconcile', 'profile', 'cleanup']);
    expect(names(false, true)).toEqual(['reconcile', 'profile', 'cleanup']);
    expect(names(true, true)).toEqual(['reconcile', 'profile', 'cleanup']);
  });

  it('refuses a function the chart deploys that does not run', () => {
    expect(() => chartSubscriptions({ lpxEnabled: true, dgdrV1Beta2Enabled: false }, { reconcile: 'http://r', profile: 'http://p' })).toThrow('cannot subscribe function cleanup: it does not run');
  });
});
