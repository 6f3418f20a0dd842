/**
 * The local event bridge: watches the API server and delivers CloudEvents to the functions
 * exactly as Knative's ApiServerSource -> Broker -> Trigger path would. Dev and test tooling
 * only; production uses Knative itself (DESIGN.md "Real parts").
 *
 * Like ApiServerSource (upstream-notes/knative.md §1.2-§1.5): binary-mode CloudEvents of type
 * `dev.knative.apiserver.{resource,ref}.{add,update,delete}`, `source` the API server URL,
 * `subject` `/apis/<apiVersion>/namespaces/<ns>/<plural>/<name>`, extensions `kind`,
 * `apiversion`, `name`, `namespace`; Resource-mode data the whole object, Reference-mode data
 * `{apiVersion, kind, name, namespace}`; nothing for objects that existed before it started,
 * nothing for changes during a relist gap; one watch's events sent one at a time, in order.
 * Like a Trigger: each subscriber gets only the kinds it subscribes to. Like a Broker
 * (§2.2-§2.3): retries on a transport error, 5xx, 404, 408, 409 and 429 with exponential
 * backoff (`backoffDelay` x 2^n), at most `retries` times, then logs and drops the event; other
 * answers are final. Every `resyncIntervalSeconds` it also sends each subscriber a
 * `dev.dynamo-fn.resync` event, as the PingSource does in production.
 * @module
 */
import { randomUUID } from 'node:crypto';
import { KubernetesObjectApi, Watch, type KubeConfig, type V1APIResource } from '@kubernetes/client-node';
import { CloudEvent, HTTP } from 'cloudevents';
import type { Logger } from 'pino';
import { request } from 'undici';
import {
  chartFunctions,
  labelSelectorText,
  type ChartFunction,
  type ChartGates,
  DGDSA_KIND,
  DGDSA_V1BETA1,
  DGD_KIND,
  DGD_V1BETA1,
  GROVE_API_VERSION,
  LABEL_LPX_DEPLOYMENT_UID,
  LPR_API_VERSION,
  LPR_KIND,
  LPXGD_API_VERSION,
  LPXGD_KIND,
  PODCLIQUESCALINGGROUP_KIND,
  PODCLIQUESET_KIND,
  PODCLIQUE_KIND,
} from '../api/index.js';
import { RESYNC_EVENT_TYPE } from '../runtime/index.js';

export interface WatchedKind {
  /** `group/version`, or `v1` for the core group. */
  readonly apiVersion: string;
  readonly kind: string;
  /** Only objects matching this label selector, as an ApiServerSource resource's `selector` (e.g. `lpx.nvidia.com/deployment-uid`); default every object. */
  readonly labelSelector?: string;
}

/** One subscriber: a function's URL and the kinds its Triggers select. */
export interface BridgeSubscription {
  readonly name: string;
  readonly url: string;
  readonly kinds: readonly WatchedKind[];
  /** ApiServerSource `mode`: `Resource` (whole object) or `Reference` (default). */
  readonly mode?: 'Resource' | 'Reference';
  /**
   * The PingSources of this subscriber (resyncs of a kind and ticks), each sent every
   * `resyncIntervalSeconds` as a resync event with its `kind` (and `apiversion`) extension, one
   * at a time; [] sends none. Absent: one resync event without a kind (every route resyncs).
   */
  readonly pings?: readonly { readonly kind: string; readonly apiVersion?: string }[];
}

export interface EventBridgeOptions {
  readonly kubeConfig: KubeConfig;
  readonly subscriptions: readonly BridgeSubscription[];
  readonly log: Logger;
  /** Seconds between resync events; 0 disables them. Default 60. */
  readonly resyncIntervalSeconds?: number;
  /** Broker delivery: retries after the first attempt (default 10) and the first backoff delay (default 200 ms). */
  readonly retry?: { readonly retries?: number; readonly backoffDelayMs?: number };
  /** Per-attempt delivery timeout in milliseconds (default 30 000). */
  readonly timeoutMs?: number;
  /** Called once per event emitted to a subscriber, before delivery (capture for replay). */
  readonly onEmit?: (event: CloudEvent<unknown>, subscriber: string) => void;
  /**
   * Backoff of a watch restart after an error: the first delay (default 500 ms), doubled per
   * consecutive failure up to the cap (default 30 000 ms). A watch is restarted until it runs.
   */
  readonly watchBackoff?: { readonly initialMs?: number; readonly maxMs?: number };
}

export interface EventBridge {
  /** Sends one resync event to every subscriber now; resolves when all were answered. */
  resync(): Promise<void>;
  /** Stops the watches and timers; waits for deliveries in flight (one waiting out a retry backoff makes its last attempt now). */
  stop(): Promise<void>;
  /** Resolves when every queued delivery has been answered (or dropped). */
  idle(): Promise<void>;
}

/**
 * The reconcile function's Triggers, as infra/reconcile/events.yaml wires them: DGD and DGDSA
 * events in Reference mode (the function reads the object itself), and the DGD's children's events
 * (PodCliqueSet, PodClique, PodCliqueScalingGroup, Service) in Resource mode, so a deleted
 * child still carries the owner references the function maps it to its DGD with.
 */
export function reconcileSubscriptions(url: string): BridgeSubscription[] {
  return [
    { name: 'reconcile', url, kinds: [{ apiVersion: DGD_V1BETA1, kind: DGD_KIND }, { apiVersion: DGDSA_V1BETA1, kind: DGDSA_KIND }], mode: 'Reference' },
    {
      name: 'reconcile-children',
      url,
      kinds: [
        { apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND },
        { apiVersion: GROVE_API_VERSION, kind: PODCLIQUE_KIND },
        { apiVersion: GROVE_API_VERSION, kind: PODCLIQUESCALINGGROUP_KIND },
        { apiVersion: 'v1', kind: 'Service' },
      ],
      mode: 'Resource',
    },
  ];
}

/**
 * The reconcile function's LPX Triggers with lpx.enabled (infra/chart/templates/reconcile/):
 * LPXGraphDeployments and the scheduler's pipeline requests in Reference mode, and the LPX
 * runtime ConfigMaps (only those labelled `lpx.nvidia.com/deployment-uid`, as the children
 * source selects them) in Resource mode, so a deleted one still carries its owner reference.
 */
export function reconcileLpxSubscriptions(url: string): BridgeSubscription[] {
  return [
    { name: 'reconcile-lpx', url, kinds: [{ apiVersion: LPXGD_API_VERSION, kind: LPXGD_KIND }, { apiVersion: LPR_API_VERSION, kind: LPR_KIND }], mode: 'Reference' },
    { name: 'reconcile-lpx-configmaps', url, kinds: [{ apiVersion: 'v1', kind: 'ConfigMap', labelSelector: LABEL_LPX_DEPLOYMENT_UID }], mode: 'Resource' },
  ];
}

/**
 * The subscriptions of the functions the chart deploys under `gates` (shared/api chart-wiring,
 * the one source the chart is checked against): one per ApiServerSource, with its mode, kinds and
 * label selectors, and the function's PingSources (resyncs and ticks) on its first source.
 * In: the gates, and the URL of each running function (a function the chart deploys but `urls`
 * lacks is an error). Pure.
 */
export function chartSubscriptions(gates: ChartGates, urls: Readonly<Partial<Record<ChartFunction['name'], string>>>): BridgeSubscription[] {
  return chartFunctions(gates).flatMap((fn) => {
    const url = urls[fn.name];
    if (url === undefined) throw new Error(`cannot subscribe function ${fn.name}: it does not run`);
    return fn.sources.map((source, index) => ({
      name: source.name.replace(/^dynamo-/, ''),
      url,
      mode: source.mode,
      kinds: source.resources.map((r) => ({ apiVersion: r.apiVersion, kind: r.kind, ...(r.selector === undefined ? {} : { labelSelector: labelSelectorText(r.selector) }) })),
      pings: index === 0 ? fn.pings.map((p) => ({ kind: p.kind, ...(p.apiVersion === undefined ? {} : { apiVersion: p.apiVersion }) })) : [],
    }));
  });
}

/** One watch per kind and label selector. */
function watchKey(kind: WatchedKind): string {
  return `${kind.apiVersion}/${kind.kind}?${kind.labelSelector ?? ''}`;
}

/** HTTP answers a Broker retries (knative.md §2.3 `SelectiveRetry`). */
export function isRetriableStatus(status: number): boolean {
  return status >= 500 || status === 404 || status === 408 || status === 409 || status === 429;
}

/** ApiServerSource's `subject`: `/apis/<apiVersion>/namespaces/<ns>/<plural>/<name>` (core kinds too). */
export function apiServerSubject(apiVersion: string, namespace: string, plural: string, name: string): string {
  return `/apis/${apiVersion}/namespaces/${namespace}/${plural}/${name}`;
}

/** A normal end of a watch: closed by the server, or timed out by the client while idle. */
function isQuietClose(error: unknown): boolean {
  if (error === null || error === undefined) return true;
  const name = (error as { name?: unknown }).name;
  return name === 'AbortError' || name === 'TimeoutError';
}

/** One line for a watch failure (a DOMException logs as dozens of fields otherwise). */
function describeWatchError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  if (typeof error === 'object' && error !== null) return `${String((error as { name?: unknown }).name)}: ${String((error as { message?: unknown }).message)}`;
  return String(error);
}

/** How many times the bridge's start tries a watched kind's discovery and first LIST (with the default backoff, about 15 s in all). */
const START_ATTEMPTS = 6;

class ResourceResolver extends KubernetesObjectApi {
  lookup(apiVersion: string, kind: string): Promise<V1APIResource | undefined> {
    return this.resource(apiVersion, kind);
  }
}

type Phase = 'add' | 'update' | 'delete';
const PHASES: Readonly<Record<string, Phase>> = { ADDED: 'add', MODIFIED: 'update', DELETED: 'delete' };

/**
 * Starts watching every subscribed kind (cluster-wide) and delivering events.
 * Failures: rejects when a subscribed kind is not served by the API server.
 */
export async function startEventBridge(options: EventBridgeOptions): Promise<EventBridge> {
  const { kubeConfig, log } = options;
  const retries = options.retry?.retries ?? 10;
  const backoffDelayMs = options.retry?.backoffDelayMs ?? 200;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const initialBackoffMs = options.watchBackoff?.initialMs ?? 500;
  const maxBackoffMs = options.watchBackoff?.maxMs ?? 30_000;
  const source = kubeConfig.getCurrentCluster()?.server ?? 'https://kubernetes.default.svc';
  const resolver = kubeConfig.makeApiClient(ResourceResolver);
  const watch = new Watch(kubeConfig);
  const controllers = new Set<AbortController>();
  let stopped = false;
  let pending: Promise<void> = Promise.resolve();
  const queues = new Map<string, Promise<void>>();
  /** Wakes each delivery waiting out its retry backoff (stop() does, so it never waits out a backoff). */
  const backoffWakers = new Set<() => void>();

  /** Waits `delayMs`, or less if the bridge stops meanwhile. */
  function backoff(delayMs: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        backoffWakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, delayMs);
      backoffWakers.add(wake);
    });
  }

  async function deliver(subscription: BridgeSubscription, event: CloudEvent<unknown>): Promise<void> {
    const message = HTTP.binary(event);
    for (let attempt = 0; ; attempt += 1) {
      let status: number | undefined;
      let failure: unknown;
      try {
        const response = await request(subscription.url, {
          method: 'POST',
          headers: message.headers as Record<string, string>,
          body: typeof message.body === 'string' ? message.body : JSON.stringify(message.body),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        });
        status = response.statusCode;
        await response.body.dump();
      } catch (error) {
        failure = error;
      }
      const fields = { subscriber: subscription.name, eventId: event.id, eventType: event.type, subject: event.subject, attempt, status };
      if (status !== undefined && status < 300) return;
      const retriable = status === undefined || isRetriableStatus(status);
      if (!retriable || attempt >= retries || stopped) {
        log.warn({ ...fields, err: failure }, retriable ? 'Dropped event after retries' : 'Dropped event rejected by subscriber');
        return;
      }
      log.debug({ ...fields, err: failure }, 'Retrying event delivery');
      // Cut short by stop(): the next attempt is the last (a failure then drops the event).
      await backoff(backoffDelayMs * 2 ** attempt);
    }
  }

  /** Delivery is ordered per watch (and per subscriber), as the adapter sends synchronously. */
  function enqueue(queueKey: string, work: () => Promise<void>): void {
    const next = (queues.get(queueKey) ?? Promise.resolve()).then(work, work);
    queues.set(queueKey, next);
    pending = Promise.all([pending, next]).then(() => undefined);
  }

  function emit(kind: WatchedKind, plural: string, phase: Phase, object: Record<string, unknown>): void {
    const metadata = (object['metadata'] ?? {}) as { name?: string; namespace?: string };
    const name = metadata.name ?? '';
    const namespace = metadata.namespace ?? '';
    for (const subscription of options.subscriptions) {
      if (!subscription.kinds.some((k) => watchKey(k) === watchKey(kind))) continue;
      const mode = subscription.mode ?? 'Reference';
      const data =
        mode === 'Resource' ? object : { apiVersion: kind.apiVersion, kind: kind.kind, name, ...(namespace === '' ? {} : { namespace }) };
      const event = new CloudEvent<unknown>({
        id: randomUUID(),
        type: `dev.knative.apiserver.${mode === 'Resource' ? 'resource' : 'ref'}.${phase}`,
        source,
        subject: apiServerSubject(kind.apiVersion, namespace, plural, name),
        time: new Date().toISOString(),
        datacontenttype: 'application/json',
        data,
        kind: kind.kind,
        apiversion: kind.apiVersion,
        name,
        namespace,
      });
      options.onEmit?.(event, subscription.name);
      enqueue(`${subscription.name}/${watchKey(kind)}`, () => deliver(subscription, event));
    }
  }

  /**
   * `call` at the bridge's start, tried again while the API server answers 429 or 5xx (just after
   * a CRD install it answers 429 "storage is (re)initializing", Retry-After 1) or does not answer,
   * as a reflector keeps relisting: after the watch backoff, doubling, at most
   * {@link START_ATTEMPTS} times. Any other answer (403, 404) fails the start at once.
   */
  async function atStart<T>(kind: WatchedKind, call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await call();
      } catch (error) {
        const code = (error as { code?: unknown } | null)?.code;
        const isRetryable = typeof code !== 'number' || code === 429 || code >= 500;
        if (!isRetryable || attempt >= START_ATTEMPTS || stopped) throw error;
        const delayMs = Math.min(initialBackoffMs * 2 ** (attempt - 1), maxBackoffMs);
        log.info({ kind: kind.kind, err: describeWatchError(error), retryInMs: delayMs }, 'Listing again at start');
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
  }

  async function watchKind(kind: WatchedKind): Promise<void> {
    const resource = await atStart(kind, () => resolver.lookup(kind.apiVersion, kind.kind));
    if (resource === undefined) throw new Error(`cannot watch ${kind.kind}: the API server does not serve it in ${kind.apiVersion}`);
    const base = kind.apiVersion.includes('/') ? `/apis/${kind.apiVersion}` : `/api/${kind.apiVersion}`;
    const path = `${base}/${resource.name}`;

    /** A LIST only for its resourceVersion: like the real source, existing objects get no event. */
    const currentVersion = async (): Promise<string> => {
      const response = await resolver.list(kind.apiVersion, kind.kind, undefined, undefined, undefined, undefined, undefined, kind.labelSelector, 1);
      return response.metadata?.resourceVersion ?? '';
    };
    let resourceVersion = await atStart(kind, currentVersion);

    // Set when the server reports an expired version (a watch ERROR event, 410 Gone): the next
    // restart relists instead of resuming.
    let expired = false;
    // Consecutive failed starts; reset once a watch has delivered an event or stayed up a while.
    let failures = 0;
    const start = async (): Promise<void> => {
      if (stopped) return;
      const startedAt = Date.now();
      // Set once watch() returns: a watch that fails at once calls `done` before that.
      let controller: AbortController | undefined;
      let isDone = false;
      controller = await watch.watch(
        path,
        { resourceVersion, allowWatchBookmarks: true, ...(kind.labelSelector === undefined ? {} : { labelSelector: kind.labelSelector }) },
        (type, object: Record<string, unknown>) => {
          failures = 0;
          if (type === 'ERROR') {
            expired = true;
            return;
          }
          const version = (object['metadata'] as { resourceVersion?: string } | undefined)?.resourceVersion;
          if (version !== undefined) resourceVersion = version;
          const phase = PHASES[type];
          if (phase !== undefined) emit(kind, resource.name, phase, object);
        },
        (error: unknown) => {
          isDone = true;
          if (controller !== undefined) controllers.delete(controller);
          if (Date.now() - startedAt > 10_000) failures = 0;
          restart(error);
        },
      );
      if (isDone) return;
      if (stopped) {
        controller.abort();
        return;
      }
      controllers.add(controller);
    };

    /**
     * Restarts the watch until it runs (or the bridge stops). A closed watch, or one the client
     * timed out for inactivity, resumes from the last version seen, as a reflector does. Any other
     * error (e.g. 410 Gone, a refused connection) relists after a backoff that doubles per
     * consecutive failure, and what changed in between is lost, as with the real source; the
     * resync covers it.
     */
    const restart = (error: unknown): void => {
      if (stopped) return;
      let isRelist = expired || !isQuietClose(error);
      void (async () => {
        for (;;) {
          if (stopped) return;
          if (isRelist) {
            const delayMs = Math.min(initialBackoffMs * 2 ** failures, maxBackoffMs);
            failures += 1;
            log.info({ kind: kind.kind, err: expired ? 'resourceVersion expired' : describeWatchError(error), retryInMs: delayMs }, 'Relisting after watch error');
            await new Promise((resolve) => setTimeout(resolve, delayMs));
          } else {
            log.debug({ kind: kind.kind }, 'Resumed watch');
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
          if (stopped) return;
          try {
            if (isRelist) {
              expired = false;
              resourceVersion = await currentVersion();
            }
            await start();
            return;
          } catch (err) {
            // Never given up: the next attempt relists after a longer backoff.
            error = err;
            isRelist = true;
            log.warn({ kind: kind.kind, err: describeWatchError(err) }, 'Failed to restart watch');
          }
        }
      })();
    };
    await start();
  }

  const kinds = new Map<string, WatchedKind>();
  for (const subscription of options.subscriptions) for (const kind of subscription.kinds) kinds.set(watchKey(kind), kind);
  await Promise.all([...kinds.values()].map(watchKind));
  log.info({ kinds: [...kinds.keys()], subscribers: options.subscriptions.map((s) => s.name) }, 'Started event bridge');

  /** One resync event, as a PingSource sends it (`kind`/`apiversion` extensions when given). */
  const resyncEvent = (ping?: { readonly kind: string; readonly apiVersion?: string }) =>
    new CloudEvent<unknown>({
      id: randomUUID(),
      type: RESYNC_EVENT_TYPE,
      source: 'dynamo-fn/bridge',
      datacontenttype: 'application/json',
      data: {},
      ...(ping === undefined ? {} : { kind: ping.kind, ...(ping.apiVersion === undefined ? {} : { apiversion: ping.apiVersion }) }),
    });

  async function resync(): Promise<void> {
    await Promise.all(
      options.subscriptions.map(async (subscription) => {
        if (subscription.pings === undefined) return deliver(subscription, resyncEvent());
        // One at a time: a function coalesces a resync that arrives while one runs.
        for (const ping of subscription.pings) await deliver(subscription, resyncEvent(ping));
      }),
    );
  }
  const intervalSeconds = options.resyncIntervalSeconds ?? 60;
  const timer = intervalSeconds > 0 ? setInterval(() => void resync(), intervalSeconds * 1000) : undefined;
  timer?.unref();

  return {
    resync,
    idle: async () => {
      let seen: Promise<void> | undefined;
      while (seen !== pending) {
        seen = pending;
        await seen;
      }
    },
    stop: async () => {
      stopped = true;
      if (timer !== undefined) clearInterval(timer);
      for (const controller of controllers) controller.abort();
      controllers.clear();
      // A delivery in its retry backoff (with the defaults, up to 200 ms x 2^9, 102 s) is not in
      // flight: wake it, so stopping waits only for requests under way.
      for (const wake of [...backoffWakers]) wake();
      await pending;
    },
  };
}
