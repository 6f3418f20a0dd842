/**
 * The function host: one node:http server per function that takes CloudEvents from the
 * Broker, hands each to the route for its kind, and answers the broker (see ./outcome.ts).
 *
 * | Path | Method | Answer |
 * | --- | --- | --- |
 * | `/` | POST | a CloudEvent (binary or structured): 204, 400, 413, 429, 500, 503 |
 * | `/` | other | 405, `Allow: POST` |
 * | `/healthz` | GET, HEAD | 200 while the process runs (liveness) |
 * | `/readyz` | GET, HEAD | 200 once `init` resolved and not draining, else 503 |
 * | `/metrics` | GET | Prometheus text (see ./metrics.ts) |
 *
 * Event answers: Done, Permanent, a skipped event (no route for the kind, a type the host
 * does not take) -> 204 empty; Transient -> 500, or 429 when throttled; a handler that throws
 * -> 500; a malformed event -> 400 with a plain-text reason; a body over `maxBodyBytes` -> 413
 * (the connection is closed, the body never buffered); not ready or draining -> 503.
 *
 * Shutdown: `close()` turns `/readyz` to 503 and refuses new events with 503 (`Connection:
 * close`), waits for in-flight events up to `drainTimeoutSeconds`, then stops listening, closes
 * the connections left and calls `def.shutdown`.
 *
 * @module
 * @see ../../../shared/DESIGN.md "Events in, answers out"
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { closeAfterAnswer, readBodyWithLimit } from './body.js';
import { mapWithConcurrency } from './concurrency.js';
import type { RuntimeConfig } from './config.js';
import type { FunctionDefinition, HandlerDeps, KubeEvent, ObjectKey, Outcome, Route } from './contract.js';
import { decodeEvent, resyncEventFor, type DecodedEvent, type EventAttributes } from './events.js';
import { truncateForLog } from './log-fields.js';
import { createRuntimeMetrics, type EventResult, type RuntimeMetrics } from './metrics.js';
import { combineResyncOutcomes, outcomeForError, statusForOutcome } from './outcome.js';
import { findRoute, resyncRoutes } from './routing.js';

/** How to run the host. */
export interface FunctionServerOptions {
  /** Parsed configuration: port, limits, drain timeout, resync concurrency. */
  readonly config: RuntimeConfig;
  /** Base logger; the host binds `function` and then the per-event fields. */
  readonly log: Logger;
  /** Interface to listen on; default all interfaces. Tests pass `127.0.0.1`. */
  readonly host?: string;
  /** Clock handed to handlers as `deps.now`; default `() => new Date()`. */
  readonly now?: () => Date;
  /**
   * Registry for `/metrics`; default a fresh one. The CLI passes one that also carries the
   * process metrics (`collectDefaultMetrics`).
   */
  readonly registry?: Registry;
}

/** A running host. */
export interface FunctionServer {
  /** `http://<host>:<port>`, with `localhost` for a wildcard host. */
  readonly url: string;
  /** The bound port (useful with `port: 0`). */
  readonly port: number;
  /** The registry served on `/metrics`. */
  readonly registry: Registry;
  /**
   * Drains and stops: `/readyz` 503 and new events 503 at once, wait for in-flight events (at
   * most `drainTimeoutSeconds`), stop listening, close the connections left, call
   * `def.shutdown`. Idempotent; never rejects.
   */
  close(): Promise<void>;
}

type HostState = 'starting' | 'ready' | 'draining' | 'closed';
type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One handler call, classified. */
interface HandlerRun {
  readonly result: EventResult;
  readonly outcome: Outcome;
  /** The error when the handler threw (classified or not). */
  readonly thrown: unknown;
}

const OUTCOME_KINDS: ReadonlySet<string> = new Set(['Done', 'Permanent', 'Transient']);
const TEXT_PLAIN = 'text/plain; charset=utf-8';

function isOutcome(value: unknown): value is Outcome {
  return (
    typeof value === 'object' &&
    value !== null &&
    OUTCOME_KINDS.has(String((value as { readonly kind?: unknown }).kind))
  );
}

function toError(value: unknown): Error {
  return value instanceof Error ? value : new Error(`non-Error thrown: ${String(value)}`);
}

function mapValues(fields: Readonly<Record<string, string>>, map: (value: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).map(([key, value]) => [key, map(value)]));
}

function elapsedMs(startedAt: number): number {
  return Math.round((performance.now() - startedAt) * 1000) / 1000;
}

function levelFor(result: EventResult): LogLevel {
  switch (result) {
    case 'Done':
    case 'Skipped':
      return 'info';
    case 'Permanent':
    case 'Transient':
    case 'Malformed':
    case 'TooLarge':
    case 'TimedOut':
    case 'Throttled':
    case 'Unavailable':
      return 'warn';
    case 'Error':
      return 'error';
    default: {
      const unreachable: never = result;
      return unreachable;
    }
  }
}

function urlFor(host: string | undefined, port: number): string {
  if (host === undefined || host === '' || host === '::' || host === '0.0.0.0') return `http://localhost:${port}`;
  return host.includes(':') ? `http://[${host}]:${port}` : `http://${host}:${port}`;
}

function listen(server: Server, port: number, host: string | undefined): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error): void => reject(error);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      const address = server.address();
      if (address === null || typeof address === 'string') {
        reject(new Error(`cannot read the listening address: ${String(address)}`));
        return;
      }
      resolve(address);
    });
  });
}

/**
 * Starts the host for one function and resolves once it listens and `def.init` resolved.
 * In: the function definition (routes, init, shutdown) and {@link FunctionServerOptions}.
 * Out: {@link FunctionServer} with `url`, `port` and `close()`.
 * Failures: rejects when the port cannot be bound, or with `cannot initialise function
 * <name>` (cause: init's error) after closing the server again.
 * Source: DESIGN.md "Events in, answers out"; knative.md §1-2 (event shapes, retry rules).
 * @example
 * const server = await startFunctionServer(def, { config: parseConfig(process.env), log });
 * process.once('SIGTERM', () => void server.close());
 */
export async function startFunctionServer<D extends HandlerDeps>(
  def: FunctionDefinition<D>,
  options: FunctionServerOptions,
): Promise<FunctionServer> {
  const { config } = options;
  const now = options.now ?? (() => new Date());
  const registry = options.registry ?? new Registry();
  const metrics: RuntimeMetrics = createRuntimeMetrics(def.name, registry);
  const log = options.log.child({ function: def.name });

  let state: HostState = 'starting';
  let deps: D | undefined;
  let inFlight = 0;
  let idleWaiters: (() => void)[] = [];
  /** Half-closed connections whose oversized body was left unread (see closeAfterAnswer). */
  const lingering = new Set<Socket>();

  function enterEvent(): void {
    inFlight += 1;
    metrics.setInFlight(inFlight);
  }

  function leaveEvent(): void {
    inFlight -= 1;
    metrics.setInFlight(inFlight);
    if (inFlight === 0) {
      const waiters = idleWaiters;
      idleWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  function respond(
    res: ServerResponse,
    status: number,
    body?: string,
    headers: Readonly<Record<string, string>> = {},
  ): void {
    if (res.headersSent || res.writableEnded) return;
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    // A kept-alive connection must not carry new events into a draining host.
    if (state === 'draining' || state === 'closed') res.setHeader('connection', 'close');
    if (body === undefined) {
      res.writeHead(status);
      res.end();
      return;
    }
    res.writeHead(status, { 'content-type': TEXT_PLAIN, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }

  /** Calls one handler and classifies what came back; never rejects. */
  async function runHandler(route: Route<D>, event: KubeEvent, handlerDeps: D): Promise<HandlerRun> {
    try {
      const outcome: unknown = await route.handle(event, handlerDeps);
      if (!isOutcome(outcome)) {
        const error = new Error(`handler for ${route.kind} returned no Outcome`);
        return { result: 'Error', outcome: { kind: 'Transient', cause: error }, thrown: error };
      }
      return { result: outcome.kind, outcome, thrown: undefined };
    } catch (error) {
      const classified = outcomeForError(error);
      if (classified !== undefined) return { result: classified.kind, outcome: classified, thrown: error };
      return { result: 'Error', outcome: { kind: 'Transient', cause: toError(error) }, thrown: error };
    }
  }

  function keyBindings(event: { readonly id: string; readonly type: string }, key: ObjectKey): Record<string, string> {
    // Child bindings are serialised once, outside pino's per-line formatter: bound them here.
    return mapValues({ eventId: event.id, eventType: event.type, kind: key.kind, namespace: key.namespace, name: key.name }, truncateForLog);
  }

  /** Logs a handler run at the level its result calls for, with the fields that explain it. */
  function logRun(
    eventLog: Logger,
    run: HandlerRun,
    fields: Record<string, unknown>,
    message: 'Handled event' | 'Reconciled object',
  ): void {
    const details: Record<string, unknown> = { ...fields, outcome: run.result };
    const { outcome } = run;
    if (outcome.kind === 'Permanent') {
      details['reason'] = outcome.reason;
      details['detail'] = outcome.message;
    }
    if (run.thrown !== undefined) details['err'] = run.thrown;
    else if (outcome.kind === 'Transient') details['err'] = outcome.cause;
    // A PermanentError that escaped the handler was not reported on status: say so loudly.
    // One line per object of a resync is detail; the resync's own summary line is the record.
    const level =
      run.thrown instanceof Error && outcome.kind === 'Permanent'
        ? 'error'
        : message === 'Reconciled object' && run.result === 'Done'
          ? 'debug'
          : levelFor(run.result);
    eventLog[level](details, message);
  }

  async function handleApiServerEvent(
    decoded: Extract<DecodedEvent, { category: 'apiserver' }>,
    readyDeps: D,
    startedAt: number,
    res: ServerResponse,
  ): Promise<void> {
    const { event } = decoded;
    const eventLog = log.child(keyBindings(event, event.key));
    const route = findRoute(def.routes, event.key);
    if (route === undefined) {
      respond(res, 204);
      metrics.recordEvent({ kind: event.key.kind, outcome: 'Skipped' }, elapsedMs(startedAt) / 1000);
      eventLog.info(
        { outcome: 'Skipped', reason: 'NoRouteForKind', apiVersion: event.key.apiVersion, durationMs: elapsedMs(startedAt) },
        'Skipped event',
      );
      return;
    }
    const run = await runHandler(route, event, { ...readyDeps, log: eventLog });
    const status = run.result === 'Error' ? 500 : statusForOutcome(run.outcome);
    respond(res, status);
    const durationMs = elapsedMs(startedAt);
    metrics.recordEvent({ kind: event.key.kind, outcome: run.result }, durationMs / 1000);
    if (run.result === 'Error') metrics.recordError({ kind: event.key.kind, error: 'HandlerThrew' });
    logRun(eventLog, run, { status, mode: decoded.mode, durationMs }, 'Handled event');
  }

  /** True while a resync runs in this process (see handleResync: resyncs are coalesced). */
  let resyncRunning = false;

  /** Lists the keys of every matching route and reconciles them, `resyncConcurrency` at once. */
  async function runResync(
    routes: readonly Route<D>[],
    attributes: EventAttributes,
    eventLog: Logger,
    currentDeps: D,
  ): Promise<{ readonly outcome: Outcome; readonly objects: number; readonly failed: number }> {
    const listFailures: Outcome[] = [];
    const tasks: { readonly route: Route<D>; readonly key: ObjectKey }[] = [];
    for (const route of routes) {
      const listKeys = route.listKeys;
      if (listKeys === undefined) continue;
      try {
        const keys = await listKeys({ ...currentDeps, log: eventLog });
        for (const key of keys) tasks.push({ route, key });
      } catch (error) {
        metrics.recordError({ kind: route.kind, error: 'ListKeysFailed' });
        eventLog.error({ err: error, listedKind: route.kind }, 'Listing objects failed');
        listFailures.push(outcomeForError(error) ?? { kind: 'Transient', cause: toError(error) });
      }
    }
    const outcomes = await mapWithConcurrency(tasks, config.resyncConcurrency, async ({ route, key }) => {
      const startedAt = performance.now();
      const event = resyncEventFor(attributes, key);
      const objectLog = log.child(keyBindings(event, key));
      const run = await runHandler(route, event, { ...currentDeps, log: objectLog });
      metrics.recordResyncObject({ kind: key.kind, outcome: run.result });
      if (run.result === 'Error') metrics.recordError({ kind: key.kind, error: 'HandlerThrew' });
      logRun(objectLog, run, { durationMs: elapsedMs(startedAt) }, 'Reconciled object');
      return run.outcome;
    });
    // Each object is reconciled and reported on its own (on its status, and retried by the next
    // resync): one failing object never fails the resync, so the broker never re-runs the
    // whole list for it (issue 8 part 7). Only a failed listing asks the broker to retry.
    return {
      outcome: listFailures.length > 0 ? combineResyncOutcomes(listFailures) : { kind: 'Done' },
      objects: tasks.length,
      failed: listFailures.length + outcomes.filter((outcome) => outcome.kind === 'Transient').length,
    };
  }

  async function handleResync(
    decoded: Extract<DecodedEvent, { category: 'resync' }>,
    readyDeps: D,
    startedAt: number,
    res: ServerResponse,
  ): Promise<void> {
    const { attributes } = decoded;
    const kindLabel = decoded.kind ?? '';
    const eventLog = log.child(
      mapValues({ eventId: attributes.id, eventType: attributes.type, ...(decoded.kind === undefined ? {} : { kind: decoded.kind }) }, truncateForLog),
    );
    const routes = resyncRoutes(def.routes, { kind: decoded.kind, apiVersion: decoded.apiVersion });
    if (routes.length === 0) {
      respond(res, 204);
      metrics.recordEvent({ kind: kindLabel, outcome: 'Skipped' }, elapsedMs(startedAt) / 1000);
      eventLog.info({ outcome: 'Skipped', reason: 'NoResyncRoute', durationMs: elapsedMs(startedAt) }, 'Skipped event');
      return;
    }
    // Resyncs never overlap: one that arrives while another runs is coalesced into it (the
    // running one reads every object now anyway), answered 2xx at once.
    if (resyncRunning) {
      respond(res, 204);
      metrics.recordEvent({ kind: kindLabel, outcome: 'Skipped' }, elapsedMs(startedAt) / 1000);
      eventLog.info({ outcome: 'Skipped', reason: 'ResyncInProgress', durationMs: elapsedMs(startedAt) }, 'Coalesced resync');
      return;
    }
    resyncRunning = true;
    let resync: Awaited<ReturnType<typeof runResync>>;
    try {
      resync = await runResync(routes, attributes, eventLog, def.resyncDeps?.(readyDeps) ?? readyDeps);
    } finally {
      resyncRunning = false;
    }
    const status = statusForOutcome(resync.outcome);
    respond(res, status);
    const durationMs = elapsedMs(startedAt);
    metrics.recordEvent({ kind: kindLabel, outcome: resync.outcome.kind }, durationMs / 1000);
    logRun(
      eventLog,
      { result: resync.outcome.kind, outcome: resync.outcome, thrown: undefined },
      { status, objects: resync.objects, failed: resync.failed, durationMs },
      'Handled event',
    );
  }

  async function handleEvent(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const startedAt = performance.now();
    enterEvent();
    try {
      const readyDeps = deps;
      if (state !== 'ready' || readyDeps === undefined) {
        respond(res, 503, state === 'starting' ? 'not ready\n' : 'draining\n');
        metrics.recordEvent({ kind: '', outcome: 'Unavailable' }, elapsedMs(startedAt) / 1000);
        log.warn({ outcome: 'Unavailable', state, durationMs: elapsedMs(startedAt) }, 'Refused event');
        return;
      }
      // The limit counts this event (enterEvent ran): refuse before reading anything, so a
      // flood holds sockets, not bodies. Knative's containerConcurrency normally keeps the
      // broker below it; the Broker retries a 429 with backoff.
      if (inFlight > config.maxInFlightEvents) {
        closeAfterAnswer(req, res, { lingering });
        respond(res, 429, `more than ${config.maxInFlightEvents} events in flight\n`, { 'retry-after': '1' });
        metrics.recordEvent({ kind: '', outcome: 'Throttled' }, elapsedMs(startedAt) / 1000);
        log.warn({ outcome: 'Throttled', inFlight, maxInFlightEvents: config.maxInFlightEvents, durationMs: elapsedMs(startedAt) }, 'Refused event');
        return;
      }
      const bodyTimeoutMs = config.bodyTimeoutSeconds * 1000;
      const body = await readBodyWithLimit(req, config.maxBodyBytes, { timeoutMs: bodyTimeoutMs });
      if (!body.ok) {
        if (body.reason === 'Aborted') {
          log.debug({ durationMs: elapsedMs(startedAt) }, 'Lost client connection');
          return;
        }
        // Before the answer is written: it marks it `Connection: close` and keeps the socket
        // half-open so a client still uploading sees the answer, not a reset.
        closeAfterAnswer(req, res, { lingering });
        if (body.reason === 'TimedOut') {
          respond(res, 408, `request body not received within ${bodyTimeoutMs} ms\n`);
          metrics.recordEvent({ kind: '', outcome: 'TimedOut' }, elapsedMs(startedAt) / 1000);
          metrics.recordError({ kind: '', error: 'BodyTimedOut' });
          log.warn({ outcome: 'TimedOut', bodyTimeoutMs, receivedBytes: body.receivedBytes, durationMs: elapsedMs(startedAt) }, 'Rejected event');
          return;
        }
        respond(res, 413, `request body exceeds ${config.maxBodyBytes} bytes\n`);
        metrics.recordEvent({ kind: '', outcome: 'TooLarge' }, elapsedMs(startedAt) / 1000);
        metrics.recordError({ kind: '', error: 'BodyTooLarge' });
        log.warn(
          {
            outcome: 'TooLarge',
            maxBodyBytes: config.maxBodyBytes,
            declaredBytes: body.declaredBytes,
            ceId: truncateForLog(req.headers['ce-id']),
            durationMs: elapsedMs(startedAt),
          },
          'Rejected event',
        );
        return;
      }
      const decoded = decodeEvent({ headers: req.headers, body: body.body });
      if (!decoded.ok) {
        respond(res, 400, `${decoded.reason}\n`);
        metrics.recordEvent({ kind: '', outcome: 'Malformed' }, elapsedMs(startedAt) / 1000);
        metrics.recordError({ kind: '', error: 'MalformedEvent' });
        log.warn(
          { outcome: 'Malformed', reason: truncateForLog(decoded.reason), ceId: truncateForLog(req.headers['ce-id']), durationMs: elapsedMs(startedAt) },
          'Rejected event',
        );
        return;
      }
      switch (decoded.decoded.category) {
        case 'apiserver':
          await handleApiServerEvent(decoded.decoded, readyDeps, startedAt, res);
          return;
        case 'resync':
          await handleResync(decoded.decoded, readyDeps, startedAt, res);
          return;
        case 'other': {
          const { attributes } = decoded.decoded;
          respond(res, 204);
          metrics.recordEvent({ kind: '', outcome: 'Skipped' }, elapsedMs(startedAt) / 1000);
          log
            .child(mapValues({ eventId: attributes.id, eventType: attributes.type }, truncateForLog))
            .info({ outcome: 'Skipped', reason: 'UnsupportedType', durationMs: elapsedMs(startedAt) }, 'Skipped event');
          return;
        }
        default: {
          const unreachable: never = decoded.decoded;
          throw new Error(`unknown event category ${JSON.stringify(unreachable)}`);
        }
      }
    } finally {
      leaveEvent();
    }
  }

  async function handleRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0] ?? '/';
    const method = req.method ?? 'GET';
    const isRead = method === 'GET' || method === 'HEAD';
    switch (path) {
      case '/':
        if (method !== 'POST') {
          respond(res, 405, 'method not allowed: events are POSTed to /\n', { allow: 'POST' });
          return;
        }
        await handleEvent(req, res);
        return;
      case '/healthz':
        if (!isRead) return respond(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
        respond(res, 200, 'ok\n');
        return;
      case '/readyz':
        if (!isRead) return respond(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
        if (state === 'ready') respond(res, 200, 'ready\n');
        else respond(res, 503, state === 'starting' ? 'not ready: initialising\n' : 'not ready: draining\n');
        return;
      case '/metrics': {
        if (!isRead) return respond(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
        const text = await registry.metrics();
        res.setHeader('content-type', registry.contentType);
        res.setHeader('content-length', Buffer.byteLength(text));
        if (state === 'draining' || state === 'closed') res.setHeader('connection', 'close');
        res.writeHead(200);
        res.end(text);
        return;
      }
      default:
        respond(res, 404, 'not found\n');
    }
  }

  const server = createServer((req, res) => {
    handleRequest(req, res).catch((error: unknown) => {
      log.error({ err: error, method: req.method, url: req.url }, 'Request failed');
      respond(res, 500);
    });
  });

  const address = await listen(server, config.port, options.host);
  const url = urlFor(options.host, address.port);

  function closeNow(): Promise<void> {
    return new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  try {
    deps = await def.init({ log, now, config });
  } catch (error) {
    await closeNow();
    throw new Error(`cannot initialise function ${def.name}`, { cause: error });
  }
  if (state === 'starting') state = 'ready';
  log.info({ url, port: address.port }, 'Started function server');

  function waitUntil(condition: Promise<void>, deadline: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), Math.max(0, deadline - performance.now()));
      condition.then(
        () => {
          clearTimeout(timer);
          resolve(true);
        },
        () => {
          clearTimeout(timer);
          resolve(false);
        },
      );
    });
  }

  async function drainAndStop(): Promise<void> {
    const startedAt = performance.now();
    const deadline = startedAt + config.drainTimeoutSeconds * 1000;
    state = 'draining';
    log.info({ inFlight, drainTimeoutSeconds: config.drainTimeoutSeconds }, 'Started draining');
    // The listener stays open while in-flight events finish, so probes see /readyz 503 and a
    // new event gets 503 (the broker retries it, on another instance if there is one).
    const idle =
      inFlight === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            idleWaiters.push(resolve);
          });
    const isDrained = await waitUntil(idle, deadline);
    if (!isDrained) log.warn({ inFlight }, 'Drain timed out');
    // Stops accepting connections and closes the idle kept-alive ones.
    const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    for (const socket of lingering) socket.destroy();
    // Connections still busy now (a slow /metrics, a handler past the deadline) are cut at the
    // deadline rather than holding the process past its grace period.
    if (!(await waitUntil(serverClosed, deadline))) server.closeAllConnections();
    await serverClosed;
    state = 'closed';
    if (def.shutdown !== undefined && deps !== undefined) {
      try {
        await def.shutdown(deps);
      } catch (error) {
        log.error({ err: error }, 'Shutdown hook failed');
      }
    }
    log.info({ durationMs: elapsedMs(startedAt), isDrained }, 'Stopped function server');
  }

  let closing: Promise<void> | undefined;
  return {
    url,
    port: address.port,
    registry,
    close(): Promise<void> {
      closing ??= drainAndStop();
      return closing;
    },
  };
}
