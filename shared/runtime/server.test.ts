import { connect, createServer as createNetServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig } from './config.js';
import type { KubeEvent, ObjectKey, Outcome, Route } from './contract.js';
import { PermanentError, TransientError } from './errors.js';
import { RESYNC_EVENT_TYPE } from './events.js';
import { startFunctionServer } from './server.js';
import {
  DGD_KEY,
  aDefinition,
  aDgdObject,
  aResyncEvent,
  aRoute,
  anApiServerEvent,
  captureLogs,
  deferred,
  get,
  post,
  sampleValue,
  sendEvent,
  startTestHost,
  type Encoding,
  type Mode,
  type TestHost,
} from './test-support.js';

const hosts: TestHost[] = [];

async function host(...args: Parameters<typeof startTestHost>): Promise<TestHost> {
  const started = await startTestHost(...args);
  hosts.push(started);
  return started;
}

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((started) => started.server.close()));
});

/** A route that records the events it is handed and answers `outcome`. */
function recordingRoute(
  seen: KubeEvent[],
  overrides: Partial<Route> = {},
  outcome: Outcome = { kind: 'Done' },
): Route {
  return aRoute({
    handle: async (event) => {
      seen.push(event);
      return outcome;
    },
    ...overrides,
  });
}

function logLines(started: TestHost, msg: string): Record<string, unknown>[] {
  return started.lines.filter((line) => line['msg'] === msg);
}

const BINARY_HEADERS = {
  'ce-id': 'id-1',
  'ce-specversion': '1.0',
  'ce-type': 'dev.knative.apiserver.resource.update',
  'ce-source': 'https://10.96.0.1:443',
  'content-type': 'application/json',
} as const;

describe('ApiServerSource events', () => {
  it.each([
    { name: 'binary, Resource mode', encoding: 'binary', mode: 'Resource' },
    { name: 'binary, Reference mode', encoding: 'binary', mode: 'Reference' },
    { name: 'structured, Resource mode', encoding: 'structured', mode: 'Resource' },
    { name: 'structured, Reference mode', encoding: 'structured', mode: 'Reference' },
  ] satisfies { name: string; encoding: Encoding; mode: Mode }[])(
    '$name: hands the route a KubeEvent and answers 204 with no body',
    async ({ encoding, mode }) => {
      const seen: KubeEvent[] = [];
      const started = await host(aDefinition([recordingRoute(seen)]));

      const answer = await sendEvent(started.url, anApiServerEvent({ mode, action: 'add', id: 'evt-1' }), encoding);

      expect(answer.status).toBe(204);
      expect(answer.body).toBe('');
      expect(seen).toEqual([
        {
          id: 'evt-1',
          type: mode === 'Resource' ? 'dev.knative.apiserver.resource.add' : 'dev.knative.apiserver.ref.add',
          source: 'https://10.96.0.1:443',
          key: DGD_KEY,
          object: mode === 'Resource' ? aDgdObject() : undefined,
        },
      ]);
    },
  );

  it.each([
    {
      name: 'Resource mode without extensions: key from data.metadata',
      mode: 'Resource',
      extensions: { kind: undefined, apiversion: undefined, name: undefined, namespace: undefined },
    },
    {
      name: 'Reference mode without extensions: key from the reference',
      mode: 'Reference',
      extensions: { kind: undefined, apiversion: undefined, name: undefined, namespace: undefined },
    },
    {
      name: 'no name or namespace anywhere but subject',
      mode: 'Reference',
      extensions: { name: undefined, namespace: undefined },
      data: { apiVersion: DGD_KEY.apiVersion, kind: DGD_KEY.kind },
    },
  ] satisfies { name: string; mode: Mode; extensions: Record<string, undefined>; data?: unknown }[])(
    'derives the key robustly: $name',
    async ({ mode, extensions, ...rest }) => {
      const seen: KubeEvent[] = [];
      const started = await host(aDefinition([recordingRoute(seen)]));

      const answer = await sendEvent(started.url, anApiServerEvent({ mode, extensions, ...rest }), 'binary');

      expect(answer.status).toBe(204);
      expect(seen.map((event) => event.key)).toEqual([DGD_KEY]);
    },
  );

  it('prefers the extensions over data, and keeps an empty namespace for cluster-scoped objects', async () => {
    const seen: KubeEvent[] = [];
    const started = await host(aDefinition([recordingRoute(seen)]));
    const event = anApiServerEvent({
      mode: 'Reference',
      extensions: { name: 'from-extension', namespace: '' },
      data: { apiVersion: DGD_KEY.apiVersion, kind: DGD_KEY.kind, name: 'from-data', namespace: 'team-b' },
    });

    expect((await sendEvent(started.url, event, 'structured')).status).toBe(204);
    expect(seen.map((received) => received.key)).toEqual([{ ...DGD_KEY, name: 'from-extension', namespace: '' }]);
  });

  it('routes by kind and API group', async () => {
    const dgdEvents: KubeEvent[] = [];
    const serviceEvents: KubeEvent[] = [];
    const started = await host(
      aDefinition([
        recordingRoute(dgdEvents),
        recordingRoute(serviceEvents, { apiVersion: 'v1', kind: 'Service' }),
      ]),
    );
    const service = { apiVersion: 'v1', kind: 'Service', namespace: 'team-a', name: 'llama-frontend' };

    await sendEvent(started.url, anApiServerEvent({ key: service }), 'binary');
    // Another version of the same group goes to the same route (the API server converts).
    await sendEvent(started.url, anApiServerEvent({ key: { apiVersion: 'nvidia.com/v1alpha1' } }), 'binary');
    // Same kind name in another group is not ours.
    const foreign = await sendEvent(started.url, anApiServerEvent({ key: { apiVersion: 'example.com/v1' } }), 'binary');

    expect(serviceEvents.map((event) => event.key)).toEqual([service]);
    expect(dgdEvents.map((event) => event.key.apiVersion)).toEqual(['nvidia.com/v1alpha1']);
    expect(foreign.status).toBe(204);
  });

  it('skips a kind no route takes with an empty 204 and logs it as skipped', async () => {
    const seen: KubeEvent[] = [];
    const started = await host(aDefinition([recordingRoute(seen)]));
    const pod = { apiVersion: 'v1', kind: 'Pod', namespace: 'team-a', name: 'p' };

    const answer = await sendEvent(started.url, anApiServerEvent({ key: pod, id: 'pod-1' }), 'binary');

    expect(answer).toMatchObject({ status: 204, body: '' });
    expect(seen).toEqual([]);
    expect(logLines(started, 'Skipped event')).toEqual([
      expect.objectContaining({
        level: 30,
        function: 'reconcile',
        eventId: 'pod-1',
        eventType: 'dev.knative.apiserver.resource.update',
        kind: 'Pod',
        namespace: 'team-a',
        name: 'p',
        outcome: 'Skipped',
        reason: 'NoRouteForKind',
      }),
    ]);
  });

  it('skips a CloudEvent of a type it does not take', async () => {
    const seen: KubeEvent[] = [];
    const started = await host(aDefinition([recordingRoute(seen)]));
    const answer = await post(started.url, { ...BINARY_HEADERS, 'ce-type': 'com.example.other' }, '{}');

    expect(answer).toMatchObject({ status: 204, body: '' });
    expect(seen).toEqual([]);
    expect(logLines(started, 'Skipped event')).toEqual([
      expect.objectContaining({ eventType: 'com.example.other', reason: 'UnsupportedType' }),
    ]);
  });
});

describe('malformed requests', () => {
  const dgdReference = JSON.stringify({ apiVersion: DGD_KEY.apiVersion, kind: DGD_KEY.kind, name: 'x', namespace: 'y' });
  it.each<{ name: string; headers: Readonly<Record<string, string>>; body: string; reason: string }>([
    {
      name: 'plain JSON, no CloudEvent headers',
      headers: { 'content-type': 'application/json' },
      body: '{"hello":"world"}',
      reason: 'not a CloudEvent: missing ce-specversion header',
    },
    {
      name: 'binary mode without ce-type and ce-source',
      headers: { 'ce-id': '1', 'ce-specversion': '1.0', 'content-type': 'application/json' },
      body: '{}',
      reason: "invalid CloudEvent attributes: invalid payload: event must have required property 'source'",
    },
    {
      name: 'unsupported specversion',
      headers: { ...BINARY_HEADERS, 'ce-specversion': '0.3' },
      body: dgdReference,
      reason: 'unsupported CloudEvents specversion "0.3"',
    },
    {
      name: 'binary data that is not JSON',
      headers: { ...BINARY_HEADERS, 'ce-kind': 'DynamoGraphDeployment', 'ce-name': 'x' },
      body: '{"metadata":',
      reason: 'data is not valid JSON',
    },
    {
      name: 'structured body that is not JSON',
      headers: { 'content-type': 'application/cloudevents+json' },
      body: '{"specversion":"1.0",',
      reason: 'body is not valid JSON',
    },
    {
      name: 'structured event without id',
      headers: { 'content-type': 'application/cloudevents+json; charset=utf-8' },
      body: JSON.stringify({ specversion: '1.0', type: 'dev.knative.apiserver.ref.add', source: '/s', data: {} }),
      reason: 'invalid CloudEvent: missing id',
    },
    {
      name: 'batched events',
      headers: { 'content-type': 'application/cloudevents-batch+json' },
      body: '[]',
      reason: 'batched CloudEvents are not supported',
    },
    {
      name: 'apiserver event whose data is an array',
      headers: BINARY_HEADERS,
      body: '[1,2]',
      reason: 'apiserver event data is not a JSON object',
    },
    {
      name: 'apiserver event with no kind anywhere',
      headers: { ...BINARY_HEADERS, 'ce-name': 'x', 'ce-namespace': 'y', 'ce-apiversion': 'v1' },
      body: '{"metadata":{"name":"x"}}',
      reason: 'apiserver event has no kind',
    },
    {
      name: 'structured event without specversion (issue 12: the SDK would assume 1.0)',
      headers: { 'content-type': 'application/cloudevents+json' },
      body: JSON.stringify({ id: '1', type: 'dev.knative.apiserver.ref.add', source: '/s', data: {} }),
      reason: 'invalid CloudEvent: missing specversion',
    },
    {
      name: 'binary event without ce-specversion (issue 12: the SDK would assume 1.0)',
      headers: { 'ce-id': '1', 'ce-type': 'dev.knative.apiserver.ref.add', 'ce-source': '/s', 'content-type': 'application/json' },
      body: dgdReference,
      reason: 'not a CloudEvent: missing ce-specversion header',
    },
    {
      name: 'ce-name "." (issue 12: would name the collection, not an object)',
      headers: { ...BINARY_HEADERS, 'ce-kind': DGD_KEY.kind, 'ce-apiversion': DGD_KEY.apiVersion, 'ce-name': '.', 'ce-namespace': 'y' },
      body: '{}',
      reason: 'apiserver event name "." is not a valid object name (a DNS-1123 subdomain of at most 253 characters)',
    },
    {
      name: 'ce-name ".." (issue 12: would climb the API path)',
      headers: { ...BINARY_HEADERS, 'ce-kind': DGD_KEY.kind, 'ce-apiversion': DGD_KEY.apiVersion, 'ce-name': '..', 'ce-namespace': 'y' },
      body: '{}',
      reason: 'apiserver event name ".." is not a valid object name',
    },
    {
      name: 'a name with a slash',
      headers: { ...BINARY_HEADERS, 'ce-kind': DGD_KEY.kind, 'ce-apiversion': DGD_KEY.apiVersion, 'ce-name': 'a/b', 'ce-namespace': 'y' },
      body: '{}',
      reason: 'apiserver event name "a/b" is not a valid object name',
    },
    {
      name: 'a namespace that is not a DNS-1123 label',
      headers: { ...BINARY_HEADERS, 'ce-kind': DGD_KEY.kind, 'ce-apiversion': DGD_KEY.apiVersion, 'ce-name': 'x', 'ce-namespace': '../kube-system' },
      body: '{}',
      reason: 'apiserver event namespace "../kube-system" is not a valid namespace (a DNS-1123 label of at most 63 characters)',
    },
    {
      // (A name past Node's 16 KiB header limit gets 431 before any of our code runs.)
      name: 'a 10,000-character name: refused, and the reason quotes only its start',
      headers: { ...BINARY_HEADERS, 'ce-kind': DGD_KEY.kind, 'ce-apiversion': DGD_KEY.apiVersion, 'ce-name': 'a'.repeat(10_000), 'ce-namespace': 'y' },
      body: '{}',
      reason: `apiserver event name "${'a'.repeat(64)}…" is not a valid object name`,
    },
    {
      name: 'apiserver event with no name anywhere',
      headers: { ...BINARY_HEADERS, 'ce-kind': 'DynamoGraphDeployment', 'ce-apiversion': 'nvidia.com/v1beta1' },
      body: '{"metadata":{}}',
      reason: 'apiserver event has no name',
    },
  ])(
    '$name -> 400 with a short reason',
    async ({ headers, body, reason }) => {
    const seen: KubeEvent[] = [];
    const started = await host(aDefinition([recordingRoute(seen)]));

    const answer = await post(started.url, headers, body);

    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(answer.body).toContain(reason);
    expect(answer.body.length).toBeLessThan(300);
    expect(seen).toEqual([]);
    expect(logLines(started, 'Rejected event')).toEqual([
      expect.objectContaining({ level: 40, outcome: 'Malformed', reason: answer.body.trim() }),
    ]);
  });

  it.each([
    { name: 'GET', method: 'GET' },
    { name: 'PUT', method: 'PUT' },
    { name: 'DELETE', method: 'DELETE' },
  ])('answers $name on / with 405 and Allow: POST', async ({ method }) => {
    const started = await host(aDefinition([aRoute()]));
    const response = await fetch(`${started.url}/`, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });

  it('answers an unknown path with 404', async () => {
    const started = await host(aDefinition([aRoute()]));
    expect((await get(started.url, '/nope')).status).toBe(404);
  });
});

describe('body deadline and in-flight limit (issue 12)', () => {
  it('answers 408 to a body that does not arrive within BODY_TIMEOUT_SECONDS, and keeps serving', async () => {
    const seen: KubeEvent[] = [];
    const started = await host(aDefinition([recordingRoute(seen)]), { bodyTimeoutSeconds: 0.3 });
    const socket = connect(started.server.port, '127.0.0.1');
    socket.on('error', () => undefined);
    let response = '';
    const answered = new Promise<void>((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        response += chunk.toString('latin1');
        resolve();
      });
      socket.on('close', () => resolve());
    });
    // Declares 100 bytes and sends one: a slow-body client.
    socket.write('POST / HTTP/1.1\r\nhost: test\r\nce-id: 1\r\nce-specversion: 1.0\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{');
    const startedAt = Date.now();
    await answered;
    socket.destroy();

    expect(response.startsWith('HTTP/1.1 408')).toBe(true);
    expect(Date.now() - startedAt).toBeLessThan(3000);
    expect(logLines(started, 'Rejected event')).toEqual([expect.objectContaining({ outcome: 'TimedOut', bodyTimeoutMs: 300 })]);
    expect((await sendEvent(started.url, anApiServerEvent(), 'binary')).status).toBe(204);
    expect(seen).toHaveLength(1);
  });

  it('answers 429 with Retry-After to an event beyond MAX_IN_FLIGHT_EVENTS, and handles it once one finishes', async () => {
    const release = deferred();
    const started = await host(
      aDefinition([aRoute({ handle: async () => { await release.promise; return { kind: 'Done' }; } })]),
      { maxInFlightEvents: 1 },
    );
    const first = sendEvent(started.url, anApiServerEvent(), 'binary');
    await waitFor(async () => (await get(started.url, '/metrics')).body.includes('dynamo_fn_events_in_flight{function="reconcile"} 1'));

    const second = await sendEvent(started.url, anApiServerEvent(), 'binary');
    expect(second.status).toBe(429);
    expect(second.headers['retry-after']).toBe('1');

    release.resolve();
    expect((await first).status).toBe(204);
    expect((await sendEvent(started.url, anApiServerEvent(), 'binary')).status).toBe(204);
  });
});

describe('body size limit', () => {
  const overLimit = 3 * 1024 * 1024 + 1;

  it('answers 413 to a declared Content-Length over 3 MiB and keeps serving', async () => {
    const seen: KubeEvent[] = [];
    const started = await host(aDefinition([recordingRoute(seen)]));

    const answer = await post(started.url, BINARY_HEADERS, Buffer.alloc(overLimit, 0x20));

    expect(answer.status).toBe(413);
    expect(seen).toEqual([]);
    expect((await sendEvent(started.url, anApiServerEvent(), 'binary')).status).toBe(204);
    expect(seen).toHaveLength(1);
  });

  it('answers 413 to a chunked body once it passes 3 MiB', async () => {
    const started = await host(aDefinition([aRoute()]));
    async function* fourMiB(): AsyncIterable<Buffer> {
      for (let index = 0; index < 64; index += 1) yield Buffer.alloc(64 * 1024, 0x20);
    }

    const answer = await post(started.url, BINARY_HEADERS, fourMiB());

    expect(answer.status).toBe(413);
    expect(logLines(started, 'Rejected event')).toEqual([
      expect.objectContaining({ outcome: 'TooLarge', maxBodyBytes: 3 * 1024 * 1024 }),
    ]);
  });

  it('stops reading an endless body: answers 413 long before the client is done', async () => {
    const started = await host(aDefinition([aRoute()]), { maxBodyBytes: 1024 * 1024 });
    const socket = connect(started.server.port, '127.0.0.1');
    let response = '';
    let sentBytes = 0;
    const answered = new Promise<void>((resolve) => {
      socket.on('data', (chunk: Buffer) => {
        response += chunk.toString('latin1');
        resolve();
      });
      socket.on('close', () => resolve());
    });
    socket.on('error', () => undefined);
    socket.write(
      'POST / HTTP/1.1\r\nhost: test\r\nce-id: 1\r\nce-specversion: 1.0\r\ncontent-type: application/json\r\n' +
        'transfer-encoding: chunked\r\n\r\n',
    );
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let isAnswered = false;
    void answered.then(() => {
      isAnswered = true;
    });
    // An endless body as far as the server knows; give up at 256 MiB. Writes wait for the
    // socket to drain, so sentBytes counts what the server side could take in.
    while (!isAnswered && sentBytes < 256 * 1024 * 1024 && !socket.destroyed) {
      const isFlushed = socket.write(`${chunk.length.toString(16)}\r\n${chunk.toString('latin1')}\r\n`, 'latin1');
      sentBytes += chunk.length;
      if (!isFlushed) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), answered]);
    }
    await answered;
    socket.destroy();

    expect(response.startsWith('HTTP/1.1 413')).toBe(true);
    expect(sentBytes).toBeLessThan(64 * 1024 * 1024);
  });
});

describe('answers per outcome', () => {
  it.each([
    { name: 'Done', handle: async (): Promise<Outcome> => ({ kind: 'Done' }), status: 204, outcome: 'Done', level: 30 },
    {
      name: 'Permanent (already reported on status)',
      handle: async (): Promise<Outcome> => ({ kind: 'Permanent', reason: 'InvalidSpec', message: 'bad' }),
      status: 204,
      outcome: 'Permanent',
      level: 40,
    },
    {
      name: 'Transient',
      handle: async (): Promise<Outcome> => ({ kind: 'Transient', cause: new Error('apiserver 503') }),
      status: 500,
      outcome: 'Transient',
      level: 40,
    },
    {
      name: 'Transient, throttled',
      handle: async (): Promise<Outcome> => ({ kind: 'Transient', cause: new Error('429'), throttled: true }),
      status: 429,
      outcome: 'Transient',
      level: 40,
    },
    {
      name: 'a thrown Error (a bug)',
      handle: async (): Promise<Outcome> => {
        throw new TypeError('cannot read properties of undefined');
      },
      status: 500,
      outcome: 'Error',
      level: 50,
    },
    {
      name: 'a thrown TransientError, throttled',
      handle: async (): Promise<Outcome> => {
        throw new TransientError('cannot get DGD team-a/llama', { throttled: true });
      },
      status: 429,
      outcome: 'Transient',
      level: 40,
    },
    {
      name: 'a thrown PermanentError (not reported on status: logged as error)',
      handle: async (): Promise<Outcome> => {
        throw new PermanentError('cannot apply Service team-a/llama: forbidden', { reason: 'Forbidden' });
      },
      status: 204,
      outcome: 'Permanent',
      level: 50,
    },
    {
      name: 'no Outcome returned',
      handle: async (): Promise<Outcome> => undefined as unknown as Outcome,
      status: 500,
      outcome: 'Error',
      level: 50,
    },
  ])('$name -> $status with no body', async ({ handle, status, outcome, level }) => {
    const started = await host(aDefinition([aRoute({ handle })]));

    const answer = await sendEvent(started.url, anApiServerEvent({ id: 'evt-42' }), 'binary');

    expect(answer.status).toBe(status);
    expect(answer.body).toBe('');
    const summaries = logLines(started, 'Handled event');
    expect(summaries).toEqual([
      expect.objectContaining({
        level,
        function: 'reconcile',
        eventId: 'evt-42',
        eventType: 'dev.knative.apiserver.resource.update',
        kind: DGD_KEY.kind,
        namespace: DGD_KEY.namespace,
        name: DGD_KEY.name,
        outcome,
        status,
      }),
    ]);
    expect(typeof summaries[0]?.['durationMs']).toBe('number');
    if (status !== 204 || level === 50) expect(summaries[0]?.['err']).toEqual(expect.objectContaining({ message: expect.any(String) }));
  });

  it('hands the handler a per-event child logger and the configured deps', async () => {
    const started = await host(
      aDefinition([
        aRoute({
          handle: async (_event, deps) => {
            deps.log.info({ step: 'load' }, 'Loaded DynamoGraphDeployment');
            return deps.config.lpxEnabled ? { kind: 'Done' } : { kind: 'Transient', cause: new Error('gate off') };
          },
        }),
      ]),
      { lpxEnabled: true },
    );

    expect((await sendEvent(started.url, anApiServerEvent({ id: 'evt-7' }), 'structured')).status).toBe(204);
    expect(logLines(started, 'Loaded DynamoGraphDeployment')).toEqual([
      expect.objectContaining({ function: 'reconcile', eventId: 'evt-7', kind: DGD_KEY.kind, name: DGD_KEY.name, step: 'load' }),
    ]);
  });
});

describe('resync', () => {
  function keysOf(count: number, kind = DGD_KEY.kind): ObjectKey[] {
    return Array.from({ length: count }, (_, index) => ({ ...DGD_KEY, kind, name: `dgd-${index}` }));
  }

  it('reconciles every listed key as a Reference-mode event, never more than RESYNC_CONCURRENCY at once', async () => {
    const keys = keysOf(25);
    const seen: KubeEvent[] = [];
    let pending = 0;
    let maxPending = 0;
    const started = await host(
      aDefinition([
        aRoute({
          listKeys: async () => keys,
          handle: async (event) => {
            pending += 1;
            maxPending = Math.max(maxPending, pending);
            await new Promise((resolve) => setTimeout(resolve, 5));
            seen.push(event);
            pending -= 1;
            return { kind: 'Done' };
          },
        }),
      ]),
      { resyncConcurrency: 4 },
    );

    const answer = await sendEvent(started.url, aResyncEvent(), 'binary');

    expect(answer).toMatchObject({ status: 204, body: '' });
    expect(maxPending).toBe(4);
    expect(seen.map((event) => event.key).sort((a, b) => a.name.localeCompare(b.name))).toEqual(
      [...keys].sort((a, b) => a.name.localeCompare(b.name)),
    );
    expect(new Set(seen.map((event) => `${event.type} ${event.source} ${String(event.object)}`))).toEqual(
      new Set([`${RESYNC_EVENT_TYPE} /apis/v1/namespaces/dynamo/pingsources/resync undefined`]),
    );
    expect(logLines(started, 'Handled event')).toEqual([
      expect.objectContaining({ eventType: RESYNC_EVENT_TYPE, outcome: 'Done', status: 204, objects: 25, failed: 0 }),
    ]);
  });

  it('answers 500 when any key is Transient, after trying every key', async () => {
    const keys = keysOf(6);
    const handled: string[] = [];
    const started = await host(
      aDefinition([
        aRoute({
          listKeys: async () => keys,
          handle: async (event): Promise<Outcome> => {
            handled.push(event.key.name);
            if (event.key.name === 'dgd-2') return { kind: 'Transient', cause: new Error('503'), throttled: true };
            if (event.key.name === 'dgd-4') throw new Error('bug');
            return { kind: 'Permanent', reason: 'InvalidSpec', message: 'reported' };
          },
        }),
      ]),
    );

    const answer = await sendEvent(started.url, aResyncEvent(), 'structured');

    expect(answer).toMatchObject({ status: 500, body: '' });
    expect(handled.sort()).toEqual(keys.map((key) => key.name));
    expect(logLines(started, 'Handled event')).toEqual([
      expect.objectContaining({ outcome: 'Transient', status: 500, objects: 6, failed: 2 }),
    ]);
    expect(logLines(started, 'Reconciled object').map((line) => [line['name'], line['outcome']]).sort()).toEqual([
      ['dgd-0', 'Permanent'],
      ['dgd-1', 'Permanent'],
      ['dgd-2', 'Transient'],
      ['dgd-3', 'Permanent'],
      ['dgd-4', 'Error'],
      ['dgd-5', 'Permanent'],
    ]);
  });

  it('narrows to the routes of the kind extension, and skips routes without listKeys', async () => {
    const listed: string[] = [];
    const route = (kind: string, apiVersion: string, withListKeys: boolean): Route =>
      aRoute({
        kind,
        apiVersion,
        ...(withListKeys
          ? {
              listKeys: async () => {
                listed.push(kind);
                return [];
              },
            }
          : {}),
      });
    const started = await host(
      aDefinition([
        route('DynamoGraphDeployment', 'nvidia.com/v1beta1', true),
        route('DynamoGraphDeploymentScalingAdapter', 'nvidia.com/v1beta1', true),
        route('Service', 'v1', false),
      ]),
    );

    expect((await sendEvent(started.url, aResyncEvent({ kind: 'DynamoGraphDeploymentScalingAdapter' }), 'binary')).status).toBe(204);
    expect(listed).toEqual(['DynamoGraphDeploymentScalingAdapter']);

    listed.length = 0;
    expect((await sendEvent(started.url, aResyncEvent(), 'binary')).status).toBe(204);
    expect(listed.sort()).toEqual(['DynamoGraphDeployment', 'DynamoGraphDeploymentScalingAdapter']);

    const skipped = await sendEvent(started.url, aResyncEvent({ kind: 'Service' }), 'binary');
    expect(skipped).toMatchObject({ status: 204, body: '' });
    expect(logLines(started, 'Skipped event')).toEqual([
      expect.objectContaining({ eventType: RESYNC_EVENT_TYPE, kind: 'Service', reason: 'NoResyncRoute' }),
    ]);
  });

  it('answers 500 when listKeys fails', async () => {
    const started = await host(
      aDefinition([
        aRoute({
          listKeys: async () => {
            throw new TransientError('cannot list DynamoGraphDeployment: 503');
          },
        }),
      ]),
    );
    expect((await sendEvent(started.url, aResyncEvent(), 'binary')).status).toBe(500);
    expect(logLines(started, 'Listing objects failed')).toEqual([
      expect.objectContaining({ level: 50, listedKind: DGD_KEY.kind }),
    ]);
  });
});

describe('health, readiness and metrics', () => {
  it('serves /healthz and /readyz once initialised', async () => {
    const started = await host(aDefinition([aRoute()]));
    expect(await get(started.url, '/healthz')).toMatchObject({ status: 200, body: 'ok\n' });
    expect(await get(started.url, '/readyz')).toMatchObject({ status: 200, body: 'ready\n' });
  });

  it('counts events by function, kind and outcome, with latency and errors', async () => {
    const started = await host(
      aDefinition([
        aRoute({
          handle: async (event): Promise<Outcome> => {
            if (event.key.name === 'broken') throw new Error('bug');
            return { kind: 'Done' };
          },
        }),
      ]),
    );
    const before = (await get(started.url, '/metrics')).body;
    const done = { function: 'reconcile', kind: DGD_KEY.kind, outcome: 'Done' };
    expect(sampleValue(before, 'dynamo_fn_events_total', done)).toBe(0);

    await sendEvent(started.url, anApiServerEvent(), 'binary');
    await sendEvent(started.url, anApiServerEvent({ mode: 'Reference' }), 'structured');
    await sendEvent(started.url, anApiServerEvent({ key: { name: 'broken' } }), 'binary');
    await post(started.url, { 'content-type': 'application/json' }, '{}');

    const metrics = await get(started.url, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).toContain('text/plain');
    const text = metrics.body;
    expect(sampleValue(text, 'dynamo_fn_events_total', done)).toBe(2);
    expect(sampleValue(text, 'dynamo_fn_events_total', { ...done, outcome: 'Error' })).toBe(1);
    expect(sampleValue(text, 'dynamo_fn_events_total', { function: 'reconcile', kind: '', outcome: 'Malformed' })).toBe(1);
    expect(
      sampleValue(text, 'dynamo_fn_event_errors_total', { function: 'reconcile', kind: DGD_KEY.kind, error: 'HandlerThrew' }),
    ).toBe(1);
    expect(
      sampleValue(text, 'dynamo_fn_event_errors_total', { function: 'reconcile', kind: '', error: 'MalformedEvent' }),
    ).toBe(1);
    expect(sampleValue(text, 'dynamo_fn_event_duration_seconds_count', done)).toBe(2);
    expect(sampleValue(text, 'dynamo_fn_event_duration_seconds_bucket', { ...done, le: '+Inf' })).toBe(2);
    expect(sampleValue(text, 'dynamo_fn_events_in_flight', { function: 'reconcile' })).toBe(0);
    expect(text).toContain('# TYPE dynamo_fn_event_duration_seconds histogram');
  });

  it('answers /readyz 503 and events 503 until init resolves, while /healthz is 200', async () => {
    const init = deferred();
    const { log } = captureLogs();
    // startFunctionServer resolves only after init, so pick the port up front.
    const port = await freePort();
    const starting = startFunctionServer(
      aDefinition([aRoute()], {
        init: async (base) => {
          await init.promise;
          return base;
        },
      }),
      { config: defaultConfig({ port }), log, host: '127.0.0.1' },
    );
    const url = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await get(url, '/healthz')).status === 200);

    expect(await get(url, '/readyz')).toMatchObject({ status: 503, body: 'not ready: initialising\n' });
    expect((await sendEvent(url, anApiServerEvent(), 'binary')).status).toBe(503);

    init.resolve();
    const server = await starting;
    expect((await get(url, '/readyz')).status).toBe(200);
    await server.close();
  });

  it('rejects and stops listening when init fails', async () => {
    const { log } = captureLogs();
    const port = await freePort();
    const failure = new Error('kubeconfig not found');
    const starting = startFunctionServer(
      aDefinition([aRoute()], {
        init: async () => {
          throw failure;
        },
      }),
      { config: defaultConfig({ port }), log, host: '127.0.0.1' },
    );
    await expect(starting).rejects.toThrow(expect.objectContaining({ message: 'cannot initialise function reconcile', cause: failure }));
    await expect(get(`http://127.0.0.1:${port}`, '/healthz')).rejects.toThrow();
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const scratch = createNetServer();
    scratch.once('error', reject);
    scratch.listen(0, '127.0.0.1', () => {
      const address = scratch.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      scratch.close(() => resolve(port));
    });
  });
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await condition()) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('drain', () => {
  it('finishes a slow in-flight handler before close() resolves; meanwhile refuses new events, then connections', async () => {
    const release = deferred();
    const entered = deferred();
    const shutdownCalls: string[] = [];
    const started = await startTestHost(
      aDefinition(
        [
          aRoute({
            handle: async () => {
              entered.resolve();
              await release.promise;
              return { kind: 'Done' };
            },
          }),
        ],
        {
          shutdown: async () => {
            shutdownCalls.push('shutdown');
          },
        },
      ),
    );
    const inFlight = sendEvent(started.url, anApiServerEvent(), 'binary');
    await entered.promise;

    let isClosed = false;
    const closing = started.server.close().then(() => {
      isClosed = true;
    });

    expect(await get(started.url, '/readyz')).toMatchObject({ status: 503, body: 'not ready: draining\n' });
    expect((await get(started.url, '/healthz')).status).toBe(200);
    const refused = await sendEvent(started.url, anApiServerEvent({ id: 'late' }), 'binary');
    expect(refused.status).toBe(503);
    expect(refused.headers['connection']).toBe('close');
    expect(isClosed).toBe(false);

    release.resolve();
    expect(await inFlight).toMatchObject({ status: 204, body: '' });
    await closing;
    expect(shutdownCalls).toEqual(['shutdown']);
    await expect(get(started.url, '/healthz')).rejects.toThrow();
    expect(logLines(started, 'Stopped function server')).toEqual([expect.objectContaining({ isDrained: true })]);
  });

  it('stops waiting at the drain timeout and cuts the handler off', async () => {
    const entered = deferred();
    const started = await startTestHost(
      aDefinition([
        aRoute({
          handle: async () => {
            entered.resolve();
            return new Promise<Outcome>(() => undefined);
          },
        }),
      ]),
      { drainTimeoutSeconds: 0.2 },
    );
    const inFlight = sendEvent(started.url, anApiServerEvent(), 'binary');
    await entered.promise;
    const startedAt = Date.now();

    await started.server.close();

    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(150);
    expect(Date.now() - startedAt).toBeLessThan(2000);
    await expect(inFlight).rejects.toThrow();
    expect(logLines(started, 'Drain timed out')).toEqual([expect.objectContaining({ level: 40, inFlight: 1 })]);
  });

  it('close() is idempotent', async () => {
    const started = await startTestHost(aDefinition([aRoute()]));
    const first = started.server.close();
    expect(started.server.close()).toBe(first);
    await first;
    expect(logLines(started, 'Stopped function server')).toHaveLength(1);
  });
});
