/**
 * Builders for the runtime's own tests: ApiServerSource-shaped CloudEvents, HTTP senders for
 * both encodings, a captured pino logger and a started host. Not part of the public entry.
 * @module
 */
import { CloudEvent, HTTP } from 'cloudevents';
import { Readable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { request } from 'undici';
import { defaultConfig, type RuntimeConfig } from './config.js';
import type { FunctionDefinition, HandlerDeps, ObjectKey, Outcome, Route } from './contract.js';
import { RESYNC_EVENT_TYPE } from './events.js';
import { startFunctionServer, type FunctionServer } from './server.js';

export const DGD_KEY: ObjectKey = Object.freeze({
  apiVersion: 'nvidia.com/v1beta1',
  kind: 'DynamoGraphDeployment',
  namespace: 'team-a',
  name: 'llama',
});

/** A DGD as a watch would deliver it (Resource mode data). */
export function aDgdObject(overrides: Partial<ObjectKey> = {}): Record<string, unknown> {
  const key = { ...DGD_KEY, ...overrides };
  return {
    apiVersion: key.apiVersion,
    kind: key.kind,
    metadata: { name: key.name, namespace: key.namespace, uid: 'uid-1', resourceVersion: '42', generation: 3 },
    spec: { services: { Frontend: { replicas: 1 } } },
  };
}

export type Mode = 'Resource' | 'Reference';
export type Action = 'add' | 'update' | 'delete';

export interface ApiServerEventOptions {
  readonly mode?: Mode;
  readonly action?: Action;
  readonly key?: Partial<ObjectKey>;
  /** Replaces `data` (default: the object, or its reference). */
  readonly data?: unknown;
  /** Replaces or removes (undefined) extension attributes. */
  readonly extensions?: Readonly<Record<string, string | undefined>>;
  readonly id?: string;
}

/**
 * A CloudEvent exactly as Knative's ApiServerSource emits it (knative.md §1.2-1.4):
 * source = API server URL, subject = selfLink-style path, extensions kind/apiversion/name/namespace.
 */
export function anApiServerEvent(options: ApiServerEventOptions = {}): CloudEvent<unknown> {
  const mode = options.mode ?? 'Resource';
  const key = { ...DGD_KEY, ...options.key };
  const type = `dev.knative.apiserver.${mode === 'Resource' ? 'resource' : 'ref'}.${options.action ?? 'update'}`;
  const data =
    'data' in options
      ? options.data
      : mode === 'Resource'
        ? aDgdObject(key)
        : { apiVersion: key.apiVersion, kind: key.kind, name: key.name, namespace: key.namespace };
  const extensions: Record<string, string> = {};
  const defaults = { kind: key.kind, apiversion: key.apiVersion, name: key.name, namespace: key.namespace };
  for (const [name, value] of Object.entries({ ...defaults, ...options.extensions })) {
    if (value !== undefined) extensions[name] = value;
  }
  return new CloudEvent<unknown>({
    id: options.id ?? 'e7d0b8a4-0000-4000-8000-000000000001',
    type,
    source: 'https://10.96.0.1:443',
    subject: `/apis/${key.apiVersion}/namespaces/${key.namespace}/dynamographdeployments/${key.name}`,
    datacontenttype: 'application/json',
    data,
    ...extensions,
  });
}

/** A resync request as a PingSource would send it through the Broker. */
export function aResyncEvent(extensions: Readonly<Record<string, string>> = {}): CloudEvent<unknown> {
  return new CloudEvent<unknown>({
    id: 'resync-1',
    type: RESYNC_EVENT_TYPE,
    source: '/apis/v1/namespaces/dynamo/pingsources/resync',
    ...extensions,
  });
}

export type Encoding = 'binary' | 'structured';

export interface HttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

/** POSTs raw headers and body to the host and reads the whole answer. */
export async function post(
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string | Buffer | AsyncIterable<Buffer>,
): Promise<HttpAnswer> {
  const payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : Readable.from(body);
  const response = await request(`${url}/`, { method: 'POST', headers: { ...headers }, body: payload });
  return { status: response.statusCode, headers: response.headers, body: await response.body.text() };
}

/** Sends a CloudEvent in binary (`ce-*` headers) or structured (`application/cloudevents+json`) mode. */
export function sendEvent(url: string, event: CloudEvent<unknown>, encoding: Encoding): Promise<HttpAnswer> {
  const message = encoding === 'binary' ? HTTP.binary(event) : HTTP.structured(event);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (typeof value === 'string') headers[name] = value;
  }
  return post(url, headers, String(message.body ?? ''));
}

export async function get(url: string, path: string): Promise<HttpAnswer> {
  const response = await request(`${url}${path}`, { method: 'GET' });
  return { status: response.statusCode, headers: response.headers, body: await response.body.text() };
}

/** A pino logger whose lines are kept as parsed objects. */
export function captureLogs(): { readonly log: Logger; readonly lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = pino(
    { level: 'debug' },
    {
      write(line: string) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  return { log, lines };
}

/** A DGD route answering Done; override `handle`, `listKeys`, `kind`, `apiVersion`. */
export function aRoute(overrides: Partial<Route> = {}): Route {
  return {
    apiVersion: DGD_KEY.apiVersion,
    kind: DGD_KEY.kind,
    handle: async (): Promise<Outcome> => ({ kind: 'Done' }),
    ...overrides,
  };
}

export function aDefinition(routes: readonly Route[], overrides: Partial<FunctionDefinition> = {}): FunctionDefinition {
  return {
    name: 'reconcile',
    routes,
    init: async (base: HandlerDeps) => base,
    ...overrides,
  };
}

export interface TestHost {
  readonly server: FunctionServer;
  readonly url: string;
  readonly lines: Record<string, unknown>[];
}

/** Starts a host on 127.0.0.1 with an ephemeral port; the caller closes it. */
export async function startTestHost(
  definition: FunctionDefinition,
  config: Partial<RuntimeConfig> = {},
): Promise<TestHost> {
  const { log, lines } = captureLogs();
  const server = await startFunctionServer(definition, {
    config: defaultConfig({ port: 0, drainTimeoutSeconds: 5, ...config }),
    log,
    host: '127.0.0.1',
  });
  return { server, url: server.url, lines };
}

/** A promise with its resolve exposed, for handlers the test releases. */
export function deferred<T = void>(): { readonly promise: Promise<T>; readonly resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

/** Reads one sample from Prometheus text, e.g. `dynamo_fn_events_total{...}`; 0 when absent. */
export function sampleValue(metricsText: string, name: string, labels: Readonly<Record<string, string>>): number {
  const wanted = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .sort();
  for (const line of metricsText.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\} (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const have = (match[2] ?? '').split(',').sort();
    if (have.length === wanted.length && have.every((pair, index) => pair === wanted[index])) {
      return Number(match[3]);
    }
  }
  return 0;
}
