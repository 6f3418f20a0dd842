/**
 * The host's Prometheus metrics, registered on a registry the caller passes in (no global
 * registry: two hosts in one test process do not share counters). Served as text on
 * `/metrics`.
 *
 * | Metric | Type | Labels |
 * | --- | --- | --- |
 * | `dynamo_fn_events_total` | counter | function, kind, outcome |
 * | `dynamo_fn_event_errors_total` | counter | function, kind, error |
 * | `dynamo_fn_event_duration_seconds` | histogram | function, kind, outcome |
 * | `dynamo_fn_resync_objects_total` | counter | function, kind, outcome |
 * | `dynamo_fn_events_in_flight` | gauge | function |
 * | `dynamo_fn_build_info` | gauge (1) | function, version, nodejs_version |
 *
 * `outcome` is an {@link EventResult}; `error` is an {@link EventErrorType}.
 * @module
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { registerBuildInfo } from './build-info.js';

/**
 * How the host finished with one request, as logged (`outcome`) and counted:
 * the three handler outcomes, `Error` (the handler threw: a bug), `Skipped` (no route takes
 * the kind, or a type the host does not take), `Malformed` (400), `TooLarge` (413),
 * `TimedOut` (408: the body did not arrive in time), `Throttled` (429: too many events in
 * flight) and `Unavailable` (503: not ready yet, or draining).
 */
export type EventResult =
  | 'Done'
  | 'Permanent'
  | 'Transient'
  | 'Error'
  | 'Skipped'
  | 'Malformed'
  | 'TooLarge'
  | 'TimedOut'
  | 'Throttled'
  | 'Unavailable';

/** What `dynamo_fn_event_errors_total` counts. */
export type EventErrorType = 'HandlerThrew' | 'ListKeysFailed' | 'MalformedEvent' | 'BodyTooLarge' | 'BodyTimedOut';

/** Latency buckets in seconds: from a cached no-op to a slow multi-object resync. */
export const DURATION_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export interface RuntimeMetrics {
  readonly registry: Registry;
  /** Counts one finished request and observes its latency (seconds). */
  recordEvent(labels: { readonly kind: string; readonly outcome: EventResult }, durationSeconds: number): void;
  recordError(labels: { readonly kind: string; readonly error: EventErrorType }): void;
  recordResyncObject(labels: { readonly kind: string; readonly outcome: EventResult }): void;
  setInFlight(count: number): void;
}

/**
 * Registers the host's metrics for one function on `registry`.
 * In: the function name (a constant label) and a prom-client Registry.
 * Out: recorders for the server. Failures: prom-client throws if the registry already holds
 * these metric names (one host per registry).
 */
export function createRuntimeMetrics(functionName: string, registry: Registry): RuntimeMetrics {
  const registers = [registry];
  registerBuildInfo(registry, functionName);
  const events = new Counter({
    name: 'dynamo_fn_events_total',
    help: 'Events handled, by function, object kind and outcome',
    labelNames: ['function', 'kind', 'outcome'] as const,
    registers,
  });
  const errors = new Counter({
    name: 'dynamo_fn_event_errors_total',
    help: 'Errors while handling events: thrown handlers, failed listKeys, malformed and oversized requests',
    labelNames: ['function', 'kind', 'error'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'dynamo_fn_event_duration_seconds',
    help: 'Time from request start to answer, in seconds',
    labelNames: ['function', 'kind', 'outcome'] as const,
    buckets: DURATION_BUCKETS_SECONDS,
    registers,
  });
  const resyncObjects = new Counter({
    name: 'dynamo_fn_resync_objects_total',
    help: 'Objects reconciled by resync events, by function, kind and outcome',
    labelNames: ['function', 'kind', 'outcome'] as const,
    registers,
  });
  const inFlight = new Gauge({
    name: 'dynamo_fn_events_in_flight',
    help: 'Event requests being handled now',
    labelNames: ['function'] as const,
    registers,
  });
  const fn = functionName;
  return {
    registry,
    recordEvent({ kind, outcome }, durationSeconds) {
      events.inc({ function: fn, kind, outcome });
      duration.observe({ function: fn, kind, outcome }, durationSeconds);
    },
    recordError({ kind, error }) {
      errors.inc({ function: fn, kind, error });
    },
    recordResyncObject({ kind, outcome }) {
      resyncObjects.inc({ function: fn, kind, outcome });
    },
    setInFlight(count) {
      inFlight.set({ function: fn }, count);
    },
  };
}
