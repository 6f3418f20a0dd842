/**
 * The admission HTTP(S) server: routes webhook paths to ./review.ts and serves health and
 * metrics. Always-on, never behind the CloudEvents host: the API server calls it synchronously.
 *
 * | Path | Method | Answer |
 * | --- | --- | --- |
 * | `/mutate/nvidia.com/{v1beta1,v1alpha1}/dynamographdeployments` | POST | AdmissionReview (200), 400, 408, 413, 415, 429 |
 * | `/validate/nvidia.com/{v1beta1,v1alpha1}/dynamographdeployments` | POST | AdmissionReview (200), 400, 408, 413, 415, 429 |
 * | `/convert` | POST | ConversionReview (200), 400, 408, 413, 415, 429 (./convert.ts) |
 * | same paths | other | 405, `Allow: POST` |
 * | `/healthz`, `/readyz` | GET, HEAD | 200 (503 from `/readyz` once closing) |
 * | `/metrics` | GET | Prometheus text |
 * | anything else | any | 404 |
 *
 * Refusals: a Content-Type other than `application/json` (parameters such as charset allowed)
 * gets 415; a body over `maxBodyBytes` 413, without buffering it; a body not complete within
 * `bodyTimeoutMs` 408 (a short deadline: the API server sends a review at once); a review that
 * finds no room for the body bytes it has received (`maxBufferedBodyBytes`, counted as they
 * arrive: ./body-budget.ts) and the queue full, or waits longer than `queueTimeoutMs` for room,
 * 429 (see ./review-queue.ts for why it queues first). Each of
 * these leaves the body unread, so the answer carries `Connection: close` and the connection is
 * half-closed, letting the client read the answer instead of a reset. An unexpected failure
 * gets 500 and is logged; the process never crashes on a request.
 *
 * Shutdown (`close()`), in the order kubelet and the endpoints need: `/readyz` answers 503 at
 * once; for `shutdownDelaySeconds` the server still accepts and answers (the endpoints take that
 * long to drop the pod, and the API server keeps sending reviews until then; with
 * `failurePolicy: Fail` a refused connection fails a user's write); then it stops accepting,
 * lets in-flight reviews finish, closes idle kept-alive connections and resolves. Every answer
 * from the start of the shutdown carries `Connection: close`, so clients reconnect elsewhere.
 * `drainTimeoutSeconds` bounds the whole shutdown, the delay included; connections still busy
 * then are cut.
 *
 * Source: DESIGN.md "Admission" (always-on, TLS, `failurePolicy: Fail`); knative.md §4;
 * shared/runtime/server.ts (the same drain for the CloudEvents host).
 * @module
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createSecureContext } from 'node:tls';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { clusterTopologyNamesToRead, hasMetricsExporters, readMetricsGpuNodes, type AdmissionConfig, type ClusterTopologyObservation, type DcgmFacts, type NodeFacts } from '../../shared/domain/index.js';
import { DGDR_PLURAL } from '../../shared/api/index.js';
import { hardwareDiscoveryFilter, type V1Beta2Observed } from './dgdr-v1beta2.js';
import { UNREAD_BODY_GRACE_MS, closeAfterAnswer, declaredBodyBytes, registerBuildInfo } from '../../shared/runtime/index.js';
import { readBodyWithinBudget } from './body-budget.js';
import { CONVERT_PATH, answerConversionReview, createConverterRegistry, type ConverterRegistry } from './convert.js';
import { answerAdmissionReview, findWebhookRoute, type AdmissionAnswer, type AdmissionObserved, type WebhookRoute } from './review.js';
import { createReviewQueue } from './review-queue.js';

/**
 * Default request limit: an AdmissionReview carries the object and, on UPDATE, the stored one;
 * each is at most about 3 MiB (the API server's request limit), so 7 MiB covers both plus envelope.
 */
export const DEFAULT_ADMISSION_MAX_BODY_BYTES = 7 * 1024 * 1024;

/**
 * How long a closing server keeps accepting reviews, in seconds: the time for the endpoints
 * controller and the API server's service resolution to stop sending reviews to a terminating
 * pod (a few seconds on a healthy cluster).
 */
export const DEFAULT_SHUTDOWN_DELAY_SECONDS = 5;

/** The whole shutdown's bound, in seconds; the same default as `DRAIN_TIMEOUT_SECONDS`. */
export const DEFAULT_DRAIN_TIMEOUT_SECONDS = 25;

/** Reviews waiting for body bytes; a queued review holds a socket, not its body. */
export const DEFAULT_MAX_QUEUED_REVIEWS = 64;

/** How long a review waits for body bytes, in ms: half the webhooks' `timeoutSeconds` (10). */
export const DEFAULT_QUEUE_TIMEOUT_MS = 5000;

/**
 * How long a body may take to arrive once reading starts, in ms. The API server sends a review
 * at once (7 MiB is well under a second on a cluster network); a body still arriving after this
 * is a stuck or hostile client, and it holds its byte reservation until then.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 3000;

/**
 * Body bytes held at once (reading or being answered), counted as they arrive, not as declared
 * (./body-budget.ts): a body declaring 7 MiB and trickling holds only what it sent. 64 MiB holds
 * nine of the largest reviews whole, or thousands of ordinary ones.
 */
export const DEFAULT_MAX_BUFFERED_BODY_BYTES = 64 * 1024 * 1024;

/**
 * The share of the body budget one source address may hold, as a divisor: a quarter (16 MiB of
 * the default 64 MiB, two of the largest reviews whole). A source that sends large bodies and
 * stalls holds at most this, so the API server's reviews from another address always find room
 * (issue 20 item 2). Its own further bodies wait for its own bytes, as for the whole budget.
 */
export const DEFAULT_SOURCE_SHARE_DIVISOR = 4;

/**
 * The TLS versions and ciphers the webhook accepts: TLS 1.2 and 1.3, and for TLS 1.2 only
 * ECDHE key exchange with AEAD ciphers (forward secrecy; TLS 1.3 suites all have it). The same
 * set as the Kubernetes API server's secure defaults (Mozilla "intermediate").
 */
export const TLS_MIN_VERSION = 'TLSv1.2';
export const TLS12_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

/**
 * The serving context's trust store: none. Without a `ca` option Node's createSecureContext
 * loads its root certificates into every context (Node 24,
 * lib/internal/tls/secure-context.js: `if (ca) addCACerts(...) else context.addRootCerts()`),
 * parsing them on the first one: its ~120 bundled ones (about 0.5 ms) and those of any
 * NODE_EXTRA_CA_CERTS file (a system bundle of 144: 10-25 ms of a cold start's CPU). A server uses a
 * trust store only to verify client certificates, which the webhook never requests (the API
 * server authenticates by the serving certificate alone); its own chain is what the certificate
 * file holds. An empty list is truthy, so no root is loaded.
 */
export const SERVER_TLS_CA: readonly string[] = [];

/** The TLS options of every serving context: {@link TLS_MIN_VERSION}, {@link TLS12_CIPHERS}, {@link SERVER_TLS_CA}. */
const SERVING_TLS = { minVersion: TLS_MIN_VERSION, ciphers: TLS12_CIPHERS, ca: SERVER_TLS_CA as string[] } as const;

export interface AdmissionServerOptions {
  /** TCP port; 0 picks a free one. */
  readonly port: number;
  /** Interface to listen on; default all interfaces. Tests and the bench pass `127.0.0.1`. */
  readonly host?: string;
  /**
   * Serving certificate (chain) and key: PEM contents, or file paths that are re-read when they
   * change (cert-manager rotates the mounted Secret in place); absent means plain HTTP (local
   * tools only).
   */
  readonly tls?: { readonly cert: string | Buffer; readonly key: string | Buffer } | TlsFiles;
  /** How often certificate files are checked for a change, in ms. Default {@link DEFAULT_TLS_RELOAD_INTERVAL_MS}. */
  readonly tlsReloadIntervalMs?: number;
  /** Body bytes held at once. Default {@link DEFAULT_MAX_BUFFERED_BODY_BYTES}. */
  readonly maxBufferedBodyBytes?: number;
  /**
   * Body bytes one source address holds at once. Default `maxBufferedBodyBytes` /
   * {@link DEFAULT_SOURCE_SHARE_DIVISOR}, but never less than `maxBodyBytes` (one whole body).
   */
  readonly maxBufferedBodyBytesPerSource?: number;
  readonly config: AdmissionConfig;
  /** Larger request bodies get 413, in bytes. Default {@link DEFAULT_ADMISSION_MAX_BODY_BYTES}. */
  readonly maxBodyBytes?: number;
  /** A body not complete this long after reading starts gets 408, in ms. Default {@link DEFAULT_BODY_TIMEOUT_MS}. */
  readonly bodyTimeoutMs?: number;
  /** Reviews waiting for body bytes. Default {@link DEFAULT_MAX_QUEUED_REVIEWS}. */
  readonly maxQueuedReviews?: number;
  /** How long a review waits for body bytes before 429, in ms. Default {@link DEFAULT_QUEUE_TIMEOUT_MS}. */
  readonly queueTimeoutMs?: number;
  /** How long `close()` keeps accepting, in seconds. Default {@link DEFAULT_SHUTDOWN_DELAY_SECONDS}; tests pass 0. */
  readonly shutdownDelaySeconds?: number;
  /** Bound on the whole of `close()`, in seconds. Default {@link DEFAULT_DRAIN_TIMEOUT_SECONDS}. */
  readonly drainTimeoutSeconds?: number;
  readonly log: Logger;
  /**
   * Lists every Node (name, labels) for v1beta2 hardware discovery (`dgdrV1Beta2.enabled`); called
   * once per v1beta2 DGDR mutation. Absent: such a mutation that needs discovery is denied, naming
   * the hardware fields to set.
   */
  readonly listNodes?: () => Promise<readonly NodeFacts[]>;
  /**
   * Reads the DCGM and Intel XPU exporters for v1beta2 hardware discovery (shared/discovery
   * `loadMetricsFacts`, with its 60 s cache and the webhook's time budget), given the request's
   * sku filter; called beside `listNodes`. Absent: discovery reads the Nodes' labels only.
   */
  readonly loadExporters?: (gpuSku: string | undefined) => Promise<DcgmFacts>;
  /**
   * Reads one Grove ClusterTopologyBinding by name (its level domains in order, or not found), for
   * the typed topology rules of DGD creation (shared/domain/admission/topology.ts); called once per
   * name a DGD CREATE review names. Absent: those live checks are skipped.
   */
  readonly readClusterTopology?: (name: string) => Promise<ClusterTopologyObservation>;
  /** Converters behind `POST /convert`; default every registered kind (./convert.ts `CONVERTERS`). */
  readonly converters?: ConverterRegistry;
  /** Registry for `/metrics`; default a fresh one. */
  readonly registry?: Registry;
}

/** Certificate and key files, as mounted from a Secret. */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
}

/** How often mounted certificate files are checked, in ms (kubelet refreshes Secret volumes within about a minute). */
export const DEFAULT_TLS_RELOAD_INTERVAL_MS = 10_000;

export interface AdmissionServer {
  /** `https://host:port` or `http://host:port` of the bound address (`[::]` or `0.0.0.0` for all interfaces). */
  readonly url: string;
  readonly port: number;
  readonly registry: Registry;
  /**
   * Drains and stops (see the module docs): `/readyz` 503 at once, accepts for
   * `shutdownDelaySeconds`, then waits for in-flight reviews and closes every connection.
   * Idempotent; never rejects.
   */
  close(): Promise<void>;
}

type ServerState = 'serving' | 'draining' | 'stopping' | 'closed';

const TEXT_PLAIN = 'text/plain; charset=utf-8';

/** `application/json`, with or without parameters (`; charset=utf-8`), in any case. */
function isJsonContentType(value: string | undefined): boolean {
  // The API server's exact value first (no string built); any other spelling is parsed.
  return value === 'application/json' || value?.split(';', 1)[0]?.trim().toLowerCase() === 'application/json';
}

function urlFor(isTls: boolean, address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `${isTls ? 'https' : 'http'}://${host}:${address.port}`;
}

/** Resolves true when `condition` settles before `deadline` (a performance.now() time), else false. */
function waitUntil(condition: Promise<void>, deadline: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), Math.max(0, deadline - performance.now()));
    void condition.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Starts the admission server.
 * In: options (port, host, TLS material, config, limits, shutdown timing, logger). Out: a running
 * server; call close() to drain and stop it. Failures: rejects when the port cannot be bound, the
 * TLS material is invalid or a limit is out of range.
 */
export async function startAdmissionServer(options: AdmissionServerOptions): Promise<AdmissionServer> {
  const log = options.log.child({ function: 'admission' });
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_ADMISSION_MAX_BODY_BYTES;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  const shutdownDelaySeconds = options.shutdownDelaySeconds ?? DEFAULT_SHUTDOWN_DELAY_SECONDS;
  const drainTimeoutSeconds = options.drainTimeoutSeconds ?? DEFAULT_DRAIN_TIMEOUT_SECONDS;
  /** Reviews holding body bytes (reading, or being answered). */
  let active = 0;
  const maxBufferedBodyBytes = options.maxBufferedBodyBytes ?? DEFAULT_MAX_BUFFERED_BODY_BYTES;
  const bodyBudget = createReviewQueue({
    maxConcurrent: maxBufferedBodyBytes,
    maxQueued: options.maxQueuedReviews ?? DEFAULT_MAX_QUEUED_REVIEWS,
    queueTimeoutMs: options.queueTimeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS,
  });
  const maxBufferedBodyBytesPerSource = Math.min(maxBufferedBodyBytes, options.maxBufferedBodyBytesPerSource ?? Math.max(maxBodyBytes, Math.floor(maxBufferedBodyBytes / DEFAULT_SOURCE_SHARE_DIVISOR)));
  /** Each source address's byte budget, while it has a body being read or answered. */
  const sourceBudgets = new Map<string, { readonly budget: ReturnType<typeof createReviewQueue>; users: number }>();
  /**
   * One idle source budget kept for the next address that needs one: a budget holding nothing
   * with nobody waiting is as good as a new one, and one review at a time from one address (the
   * API server's usual pace) otherwise made a new budget per review.
   */
  let spareSourceBudget: ReturnType<typeof createReviewQueue> | undefined;
  const takeSourceBudget = (address: string): { readonly budget: ReturnType<typeof createReviewQueue>; readonly budgetBytes: number; readonly done: () => void } => {
    let entry = sourceBudgets.get(address);
    if (entry === undefined) {
      entry = {
        budget: spareSourceBudget ?? createReviewQueue({ maxConcurrent: maxBufferedBodyBytesPerSource, maxQueued: options.maxQueuedReviews ?? DEFAULT_MAX_QUEUED_REVIEWS, queueTimeoutMs: options.queueTimeoutMs ?? DEFAULT_QUEUE_TIMEOUT_MS }),
        users: 0,
      };
      spareSourceBudget = undefined;
      sourceBudgets.set(address, entry);
    }
    const taken = entry;
    taken.users += 1;
    return {
      budget: taken.budget,
      budgetBytes: maxBufferedBodyBytesPerSource,
      done: () => {
        taken.users -= 1;
        if (taken.users !== 0 || sourceBudgets.get(address) !== taken) return;
        sourceBudgets.delete(address);
        if (taken.budget.active === 0 && taken.budget.queued === 0) spareSourceBudget = taken.budget;
      },
    };
  };
  const tlsMaterial = options.tls === undefined ? undefined : await readTlsMaterial(options.tls);
  const registry = options.registry ?? new Registry();
  /**
   * Answered reviews not yet added to `reviews`, by label set: counting one is a number's
   * increment, and the counter gets the sums whenever it is read (its `collect`), so a scrape
   * sees every review answered before it, as with an increment per review (which hashed the
   * three labels each time).
   */
  const reviewCounts = new Map<string, { readonly labels: { readonly webhook: string; readonly version: string; readonly allowed: string }; count: number }>();
  const countReview = (webhook: string, version: string, allowed: boolean): void => {
    const key = `${webhook} ${version} ${allowed}`;
    const entry = reviewCounts.get(key);
    if (entry === undefined) reviewCounts.set(key, { labels: { webhook, version, allowed: String(allowed) }, count: 1 });
    else entry.count += 1;
  };
  const reviews = new Counter({
    name: 'dynamo_fn_admission_reviews_total',
    help: 'AdmissionReviews answered, by webhook, served version and verdict',
    labelNames: ['webhook', 'version', 'allowed'],
    registers: [registry],
    collect() {
      for (const entry of reviewCounts.values()) {
        if (entry.count === 0) continue;
        this.inc(entry.labels, entry.count);
        entry.count = 0;
      }
    },
  });
  const rejected = new Counter({ name: 'dynamo_fn_admission_rejected_requests_total', help: 'Requests refused before review (bad body, too large, too slow, queue full, unknown path)', labelNames: ['code'], registers: [registry] });
  const duration = new Histogram({
    name: 'dynamo_fn_admission_review_duration_seconds',
    help: 'Time from request start to answer (queue wait included), by webhook',
    labelNames: ['webhook'],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5],
    registers: [registry],
  });
  /** The histogram's child per webhook, bound once (its labels are not looked up per review). */
  const durationOf = new Map<string, { observe(value: number): void }>();
  const observeDuration = (webhook: string, seconds: number): void => {
    let child = durationOf.get(webhook);
    if (child === undefined) {
      child = duration.labels({ webhook });
      durationOf.set(webhook, child);
    }
    child.observe(seconds);
  };
  new Gauge({ name: 'dynamo_fn_admission_reviews_active', help: 'Reviews holding body bytes (reading or answering)', registers: [registry], collect() { this.set(active); } });
  new Gauge({ name: 'dynamo_fn_admission_reviews_queued', help: 'Reviews waiting for body bytes', registers: [registry], collect() { this.set(bodyBudget.queued); } });
  new Gauge({ name: 'dynamo_fn_admission_body_bytes_buffered', help: 'Request body bytes reserved (reading, queued or being answered)', registers: [registry], collect() { this.set(bodyBudget.active); } });
  registerBuildInfo(registry, 'admission');

  let state: ServerState = 'serving';
  /** Webhook requests between arrival and answer (for the drain's log lines). */
  let inFlight = 0;
  /** Sockets whose request is in our handler: a client error there must not write a second answer. */
  const busy = new Set<Socket>();
  /** Half-closed connections whose body was left unread (see closeAfterAnswer). */
  const lingering = new Set<Socket>();

  function send(response: ServerResponse, status: number, body: string, headers: Readonly<Record<string, string>> = {}): void {
    if (response.headersSent || response.writableEnded) return;
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    // A kept-alive connection must not carry more reviews into a closing server.
    if (state !== 'serving') response.setHeader('connection', 'close');
    if (!response.hasHeader('content-type')) response.setHeader('content-type', TEXT_PLAIN);
    response.setHeader('content-length', Buffer.byteLength(body));
    response.writeHead(status);
    response.end(body);
  }

  /**
   * {@link send} of a 200 JSON answer (every answered review), its headers handed to `writeHead`
   * as one list instead of set one by one: the same three headers in the same order.
   */
  function sendJson(response: ServerResponse, body: string): void {
    if (response.headersSent || response.writableEnded) return;
    const length = String(Buffer.byteLength(body));
    response.writeHead(200, state === 'serving' ? ['content-type', 'application/json', 'content-length', length] : ['content-type', 'application/json', 'connection', 'close', 'content-length', length]);
    response.end(body);
  }

  /** Answers a request whose body stays unread, and closes its connection without a reset. */
  function refuse(request: IncomingMessage, response: ServerResponse, status: number, text: string, headers: Readonly<Record<string, string>> = {}): void {
    rejected.inc({ code: String(status) });
    closeAfterAnswer(request, response, { lingering });
    send(response, status, text, headers);
  }

  const converters = options.converters ?? createConverterRegistry();

  /**
   * What a v1beta2 DGDR mutation that discovers hardware reads ({@link hardwareDiscoveryFilter}):
   * the Nodes and, when a loader is given, the metrics exporters (filtered by the request's sku).
   * Nothing for any other review. A failed read is reported in the observation, never thrown: a
   * failed Node list denies the request naming it; a failed exporter read is discovery's
   * `listing DCGM exporter pods failed`, and the Nodes' labels are tried next.
   */
  async function observeV1Beta2(filter: { readonly gpuSku: string | undefined }, listNodes: () => Promise<readonly NodeFacts[]>): Promise<V1Beta2Observed> {
    const loadExporters = options.loadExporters;
    const [nodes, exporters] = await Promise.all([
      listNodes().catch((error: unknown) => {
        log.warn({ err: error }, 'Failed to list Nodes for hardware discovery');
        return { error: `cannot list Nodes: ${error instanceof Error ? error.message : String(error)}` };
      }),
      loadExporters?.(filter.gpuSku).catch((error: unknown): DcgmFacts => {
        log.warn({ err: error }, 'Failed to read metrics exporters for hardware discovery');
        return { listError: error instanceof Error ? error.message : String(error), exporterPods: [], isGpuOperatorRunning: false };
      }),
    ]);
    const metrics = exporters === undefined ? undefined : readMetricsGpuNodes(exporters, filter.gpuSku, []);
    // Exporters present but unreadable: the node labels decide; say why, as v1beta1 discovery logs it.
    if (exporters !== undefined && metrics?.ok === false && hasMetricsExporters(exporters)) log.warn({ error: metrics.error }, 'DCGM discovery failed, falling back to node-label discovery');
    return { nodes, ...(exporters === undefined ? {} : { exporters }) };
  }

  /**
   * One child logger per webhook, its fields (webhook, version, kind) serialised once: the line
   * every answered review logs at info then serialises only what differs per review.
   */
  const reviewLogs = new Map<WebhookRoute, Logger>();
  function reviewLog(route: WebhookRoute): Logger {
    let child = reviewLogs.get(route);
    if (child === undefined) {
      child = log.child({ webhook: route.kind, version: route.version, kind: route.resource === undefined ? 'DynamoGraphDeployment' : route.resource === DGDR_PLURAL ? 'DynamoGraphDeploymentRequest' : 'DynamoGraphDeploymentRun' });
      reviewLogs.set(route, child);
    }
    return child;
  }

  /**
   * Whether a review is a DGD validation that may name a ClusterTopologyBinding to read (the body
   * mentions a clusterTopologyName at all, and a reader is configured); {@link observeDgd} decides.
   */
  function mayNameClusterTopologies(route: WebhookRoute, text: string): boolean {
    // A route without a resource admits DynamoGraphDeployments.
    return options.readClusterTopology !== undefined && route.kind === 'validate' && route.version !== 'v1beta2' && route.resource === undefined && text.includes('clusterTopologyName');
  }

  /**
   * The ClusterTopologyBindings a DGD CREATE validation names (upstream reads them on create only).
   * A read failure is recorded, never thrown: the rule reports "failed to read
   * ClusterTopologyBinding: <error>" as upstream does. Called only when
   * {@link mayNameClusterTopologies}, so the body is parsed again only when it names a
   * clusterTopologyName at all.
   */
  async function observeDgd(text: string): Promise<AdmissionObserved> {
    const read = options.readClusterTopology;
    if (read === undefined) return {};
    let review: unknown;
    try {
      review = JSON.parse(text);
    } catch {
      return {};
    }
    const request = typeof review === 'object' && review !== null ? (review as { request?: { operation?: unknown; object?: unknown } }).request : undefined;
    if (request?.operation !== 'CREATE') return {};
    const names = clusterTopologyNamesToRead(request.object);
    if (names.length === 0) return {};
    const observations = await Promise.all(
      names.map(async (name): Promise<[string, ClusterTopologyObservation]> => {
        try {
          return [name, await read(name)];
        } catch (error) {
          log.warn({ err: error, name }, 'Failed to read ClusterTopologyBinding');
          return [name, { error: error instanceof Error ? error.message : String(error) }];
        }
      }),
    );
    return { clusterTopologies: new Map(observations) };
  }

  /** Answers an AdmissionReview: at once, unless it must first observe the cluster (v1beta2 hardware discovery, a DGD's ClusterTopologyBindings). */
  function finishAdmissionReview(route: WebhookRoute, request: IncomingMessage, response: ServerResponse, started: number, body: Buffer): void | Promise<void> {
    const text = body.toString('utf8');
    const filter = options.listNodes === undefined ? undefined : hardwareDiscoveryFilter(route, text);
    const isTopologyRead = mayNameClusterTopologies(route, text);
    if (filter === undefined && !isTopologyRead) return writeAdmissionAnswer(route, request, response, started, answerAdmissionReview(route, text, options.config, {}, body.length));
    const listNodes = options.listNodes;
    return Promise.all([filter === undefined || listNodes === undefined ? {} : observeV1Beta2(filter, listNodes), isTopologyRead ? observeDgd(text) : {}]).then(([v1beta2, dgd]) =>
      writeAdmissionAnswer(route, request, response, started, answerAdmissionReview(route, text, options.config, { ...v1beta2, ...dgd }, body.length)),
    );
  }

  function writeAdmissionAnswer(route: WebhookRoute, request: IncomingMessage, response: ServerResponse, started: number, answer: AdmissionAnswer): void {
    const durationMs = performance.now() - started;
    if (answer.status === 400) {
      rejected.inc({ code: '400' });
      log.warn({ path: request.url ?? '/', reason: answer.message, durationMs }, 'Refused malformed admission request');
      send(response, 400, `${answer.message}\n`);
      return;
    }
    sendJson(response, JSON.stringify(answer.review));
    countReview(route.kind, route.version, answer.summary.allowed);
    observeDuration(route.kind, durationMs / 1000);
    const { uid, operation, namespace, name, allowed, issues, warnings, patchOperations } = answer.summary;
    reviewLog(route).info({ uid, operation, namespace, name, allowed, issues, warnings, patchOperations, durationMs }, 'Answered AdmissionReview');
  }

  /** Answers a ConversionReview from its body. */
  function finishConversionReview(request: IncomingMessage, response: ServerResponse, started: number, body: Buffer): void {
    const url = request.url ?? '/';
    const answer = answerConversionReview(body.toString('utf8'), converters);
    const durationMs = performance.now() - started;
    if (answer.status === 400) {
      rejected.inc({ code: '400' });
      log.warn({ path: url, reason: answer.message, durationMs }, 'Refused malformed conversion request');
      send(response, 400, `${answer.message}\n`);
      return;
    }
    sendJson(response, JSON.stringify(answer.review));
    countReview('convert', answer.summary.desiredAPIVersion, answer.summary.isSuccess);
    observeDuration('convert', durationMs / 1000);
    if (answer.summary.isSuccess) log.debug({ webhook: 'convert', ...answer.summary, durationMs }, 'Answered ConversionReview');
    else log.warn({ webhook: 'convert', ...answer.summary, durationMs }, 'Refused ConversionReview');
  }

  async function answerPost(request: IncomingMessage, response: ServerResponse, started: number, finish: (body: Buffer) => void | Promise<void>): Promise<void> {
    const url = request.url ?? '/';
    const contentType = request.headers['content-type'];
    if (!isJsonContentType(contentType)) {
      log.warn({ path: url, contentType }, 'Refused admission request with unsupported content type');
      refuse(request, response, 415, `content type must be application/json, got ${JSON.stringify(contentType ?? '')}\n`);
      return;
    }
    const declaredBytes = declaredBodyBytes(request);
    if (declaredBytes !== undefined && declaredBytes > maxBodyBytes) {
      log.warn({ path: url, maxBodyBytes, declaredBytes }, 'Refused oversized admission request');
      refuse(request, response, 413, `request body exceeds ${maxBodyBytes} bytes\n`);
      return;
    }
    // The body's bytes are taken from the budget as they arrive (./body-budget.ts), then the
    // (synchronous) answer: a slow body holds only what it sent, for at most the deadline.
    active += 1;
    let release: (() => void) | undefined;
    // A socket whose peer already left has no address; it gets the whole budget's rules only.
    const sourceBudget = takeSourceBudget(request.socket.remoteAddress ?? '');
    try {
      const body = await readBodyWithinBudget(request, { maxBodyBytes, timeoutMs: bodyTimeoutMs, budget: bodyBudget, budgetBytes: maxBufferedBodyBytes, sourceBudget });
      if (!body.ok) {
        switch (body.reason) {
          case 'Aborted':
            log.debug({ path: url }, 'Lost client connection');
            return;
          case 'TooLarge':
            log.warn({ path: url, maxBodyBytes }, 'Refused oversized admission request');
            refuse(request, response, 413, `request body exceeds ${maxBodyBytes} bytes\n`);
            return;
          case 'TimedOut':
            log.warn({ path: url, bodyTimeoutMs, receivedBytes: body.receivedBytes }, 'Refused admission request with a slow body');
            refuse(request, response, 408, `request body not received within ${bodyTimeoutMs} ms\n`);
            return;
          case 'QueueFull':
          case 'QueueTimedOut':
            log.warn({ path: url, reason: body.reason, bufferedBytes: bodyBudget.active, queued: bodyBudget.queued, durationMs: performance.now() - started }, 'Refused admission request with no body budget free');
            refuse(request, response, 429, body.reason === 'QueueFull' ? 'too many admission reviews waiting\n' : 'timed out waiting for room for the admission review body\n', { 'retry-after': '1' });
            return;
          default: {
            const unreachable: never = body;
            throw new Error(`unknown body result ${JSON.stringify(unreachable)}`);
          }
        }
      }
      release = body.release;
      // Answering is synchronous (a v1beta2 mutation that discovers hardware first awaits the Node
      // list and the exporter scrapes, bounded by the discovery budget, holding only its body's
      // bytes meanwhile): one review at a time holds the CPU, so only bytes need a bound.
      await finish(body.body);
    } finally {
      active -= 1;
      release?.();
      sourceBudget.done();
    }
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const started = performance.now();
    const url = request.url ?? '/';
    const route = findWebhookRoute(url);
    const isConvert = route === undefined && url.split('?')[0] === CONVERT_PATH;
    if (route === undefined && !isConvert) {
      const path = url.split('?')[0];
      if ((path === '/healthz' || path === '/readyz') && (request.method === 'GET' || request.method === 'HEAD')) {
        const isReady = path === '/healthz' || state === 'serving';
        send(response, isReady ? 200 : 503, isReady ? 'ok\n' : 'closing\n');
        return;
      }
      if (path === '/metrics' && request.method === 'GET') {
        const text = await registry.metrics();
        send(response, 200, text, { 'content-type': registry.contentType });
        return;
      }
      rejected.inc({ code: '404' });
      send(response, 404, 'not found\n');
      return;
    }
    if (request.method !== 'POST') {
      rejected.inc({ code: '405' });
      send(response, 405, 'method not allowed\n', { allow: 'POST' });
      return;
    }
    inFlight += 1;
    try {
      await answerPost(request, response, started, (body) => (route === undefined ? finishConversionReview(request, response, started, body) : finishAdmissionReview(route, request, response, started, body)));
    } finally {
      inFlight -= 1;
    }
  }

  const listener = (request: IncomingMessage, response: ServerResponse): void => {
    const socket = request.socket;
    busy.add(socket);
    response.once('close', () => busy.delete(socket));
    handle(request, response).catch((error: unknown) => {
      log.error({ err: error, path: request.url }, 'Failed to answer admission request');
      if (!response.headersSent) send(response, 500, 'internal error\n');
      else response.destroy();
    });
  };
  const server: Server =
    tlsMaterial === undefined
      ? createHttpServer(listener)
      : createHttpsServer({ ...tlsMaterial.pem, ...SERVING_TLS, honorCipherOrder: true }, listener);
  const stopTlsReload =
    tlsMaterial?.files === undefined
      ? () => undefined
      : watchTlsFiles(server as HttpsServer, tlsMaterial.files, tlsMaterial.digest, options.tlsReloadIntervalMs ?? DEFAULT_TLS_RELOAD_INTERVAL_MS, log);
  // The API server reuses connections; keep them longer than its idle timeout so it never
  // writes into a connection we are closing.
  server.keepAliveTimeout = 120_000;
  server.headersTimeout = 125_000;
  server.requestTimeout = 30_000;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // Our handler owns the answer on a busy socket; elsewhere answer, half-close and destroy
    // after a grace period (a bare end() would leave a half-open socket as long as the client
    // keeps sending).
    if (!socket.writable || busy.has(socket)) {
      socket.destroy();
      return;
    }
    const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : error.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
    socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
    setTimeout(() => socket.destroy(), UNREAD_BODY_GRACE_MS).unref();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const url = urlFor(options.tls !== undefined, address);
  log.info(
    {
      url,
      address: address.address,
      port: address.port,
      tls: options.tls !== undefined,
      lpxEnabled: options.config.lpxEnabled,
      maxBodyBytes,
      bodyTimeoutMs,
      maxBufferedBodyBytes: options.maxBufferedBodyBytes ?? DEFAULT_MAX_BUFFERED_BODY_BYTES,
      shutdownDelaySeconds,
      drainTimeoutSeconds,
    },
    'Started admission server',
  );

  async function drainAndStop(): Promise<void> {
    const startedAt = performance.now();
    const deadline = startedAt + drainTimeoutSeconds * 1000;
    state = 'draining';
    log.info({ inFlight, shutdownDelaySeconds, drainTimeoutSeconds }, 'Started draining');
    // Until the endpoints drop this pod, reviews still arrive: keep answering them.
    const delayMs = Math.min(shutdownDelaySeconds * 1000, deadline - performance.now());
    if (delayMs > 0) await sleep(delayMs);
    state = 'stopping';
    log.info({ inFlight }, 'Stopped accepting connections');
    const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    for (const socket of lingering) socket.destroy();
    const isDrained = await waitUntil(serverClosed, deadline);
    if (!isDrained) {
      log.warn({ inFlight }, 'Drain timed out');
      server.closeAllConnections();
      await serverClosed;
    }
    state = 'closed';
    stopTlsReload();
    log.info({ url, isDrained, durationMs: performance.now() - startedAt }, 'Stopped admission server');
  }

  let closing: Promise<void> | undefined;
  return {
    url,
    port: address.port,
    registry,
    close: () => {
      closing ??= drainAndStop();
      return closing;
    },
  };
}

interface TlsMaterial {
  readonly pem: { readonly cert: string | Buffer; readonly key: string | Buffer };
  /** Set when the material came from files, which are then watched. */
  readonly files: TlsFiles | undefined;
  readonly digest: string;
}

function digestOf(pem: { readonly cert: string | Buffer; readonly key: string | Buffer }): string {
  return createHash('sha256').update(pem.cert).update('\0').update(pem.key).digest('hex');
}

async function readTlsFiles(files: TlsFiles): Promise<{ cert: Buffer; key: Buffer }> {
  return { cert: await readFile(files.certFile), key: await readFile(files.keyFile) };
}

/** The serving material, read from files when given paths. Rejects when a file cannot be read or the pair does not load. */
async function readTlsMaterial(tls: NonNullable<AdmissionServerOptions['tls']>): Promise<TlsMaterial> {
  const files = 'certFile' in tls ? tls : undefined;
  const pem = files === undefined ? (tls as { cert: string | Buffer; key: string | Buffer }) : await readTlsFiles(files);
  // Fails here, at start, for a key that does not match or PEM that does not parse.
  createSecureContext({ ...pem, ...SERVING_TLS });
  return { pem, files, digest: digestOf(pem) };
}

/**
 * Re-reads the certificate and key every `intervalMs` and, when they changed and load as a pair,
 * installs them with `setSecureContext`: new handshakes use them, open connections keep theirs
 * (nothing is dropped). A half-written rotation (cert and key not matching yet) is skipped with a
 * warning and retried on the next tick. Returns a function that stops watching.
 */
function watchTlsFiles(server: HttpsServer, files: TlsFiles, initialDigest: string, intervalMs: number, log: Logger): () => void {
  let digest = initialDigest;
  let isChecking = false;
  const timer = setInterval(() => {
    if (isChecking) return;
    isChecking = true;
    void (async () => {
      try {
        const pem = await readTlsFiles(files);
        const next = digestOf(pem);
        if (next === digest) return;
        try {
          const options = { ...pem, ...SERVING_TLS };
          createSecureContext(options);
          server.setSecureContext(options);
          digest = next;
          log.info({ certFile: files.certFile }, 'Reloaded TLS certificate');
        } catch (error) {
          log.warn({ err: error, certFile: files.certFile }, 'Kept the previous TLS certificate: the new one does not load');
        }
      } catch (error) {
        log.warn({ err: error, certFile: files.certFile }, 'Kept the previous TLS certificate: cannot read the files');
      } finally {
        isChecking = false;
      }
    })();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
