/**
 * The contract between the function host (`shared/runtime`) and each function
 * (`functions/*`). A function is a list of routes; each route names the Kubernetes kind it
 * takes and the handler that reconciles one object of that kind.
 *
 * Source: ../shared/DESIGN.md "Events in, answers out"; ../shared/STYLE.md §1-3.
 * @module
 */
import type { Logger } from 'pino';
import type { RuntimeConfig } from './config.js';

/** The object an event names: ApiServerSource's `kind`, `apiversion`, `namespace`, `name`. */
export interface ObjectKey {
  readonly apiVersion: string;
  readonly kind: string;
  /** Empty string for cluster-scoped objects. */
  readonly namespace: string;
  readonly name: string;
}

/** What the host hands a handler for one CloudEvent. */
export interface KubeEvent {
  /** CloudEvents `id`. */
  readonly id: string;
  /** CloudEvents `type`, e.g. `dev.knative.apiserver.resource.update` or `dev.dynamo-fn.resync`. */
  readonly type: string;
  /** CloudEvents `source`. */
  readonly source: string;
  /** The object the event names. */
  readonly key: ObjectKey;
  /**
   * The object as the event carried it (Resource mode) or undefined (Reference mode). It may
   * be stale: handlers load the object from the API server and treat this as a hint only.
   */
  readonly object: Readonly<Record<string, unknown>> | undefined;
}

/** The result of handling one event; the host maps it to the HTTP answer in one place. */
export type Outcome =
  /** Done: empty 2xx. */
  | { readonly kind: 'Done' }
  /** A permanent failure already reported on the object's status: empty 2xx, no retry. */
  | { readonly kind: 'Permanent'; readonly reason: string; readonly message: string }
  /** A transient failure: 5xx (or 429 when `throttled`) so the broker retries with backoff. */
  | { readonly kind: 'Transient'; readonly cause: Error; readonly throttled?: boolean };

export const DONE: Outcome = Object.freeze({ kind: 'Done' });

/** Dependencies passed into every handler (never module globals). */
export interface HandlerDeps {
  readonly log: Logger;
  /** Returns the current time; tests pass a fixed clock. */
  readonly now: () => Date;
  /** The host configuration parsed at start (feature gates such as `lpxEnabled` included). */
  readonly config: RuntimeConfig;
}

/** One binding in a function's route table: which kind, and what to do with it. */
export interface Route<D extends HandlerDeps = HandlerDeps> {
  /** API group/version of the kind, e.g. `nvidia.com/v1beta1`; matched on group only. */
  readonly apiVersion: string;
  readonly kind: string;
  /** Reconcile the one object named by the event. Must not branch on add/update/delete. */
  readonly handle: (event: KubeEvent, deps: D) => Promise<Outcome>;
  /**
   * Lists the keys of every primary object of this kind, for the periodic resync that covers
   * the events the lossy ApiServerSource never delivers. Absent: the route has no resync.
   */
  readonly listKeys?: (deps: D) => Promise<readonly ObjectKey[]>;
}

/** A deployable function: `dynamo-fn serve <name>` runs it. */
export interface FunctionDefinition<D extends HandlerDeps = HandlerDeps> {
  readonly name: 'admission' | 'reconcile' | 'profile' | 'cleanup';
  readonly routes: readonly Route<D>[];
  /**
   * Builds the handler dependencies once at start (kube client, ...). The host answers 503
   * on `/readyz` until it resolves; a rejection stops the process. For each event the host
   * passes `{ ...deps, log: <per-event child logger> }`.
   */
  readonly init: (base: HandlerDeps) => Promise<D>;
  /**
   * The dependencies every pass of one resync gets (its `listKeys` included), built once per
   * resync from the function's: where the function answers a resync's reads from one LIST per
   * kind (shared/kube `createListSnapshot`). Absent: each pass reads the API server itself.
   */
  readonly resyncDeps?: (deps: D) => D;
  /** Releases what `init` built (connections, timers), after the last in-flight event. */
  readonly shutdown?: (deps: D) => Promise<void>;
}
