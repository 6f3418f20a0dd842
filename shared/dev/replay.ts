/**
 * Replay: runs the functions' handlers over captured CloudEvents (structured-mode JSON, one per
 * line, as `dynamo-fn dev --capture` writes them) against a starting state held in memory, and
 * reports the writes each event caused. No cluster, no network. DESIGN.md "Capture and replay".
 *
 * Each event goes to every function with a route for its kind, as the broker's triggers deliver
 * it, all over one in-memory API server (shared/dev/memory-kube.ts), each function writing under
 * its own field manager. The state follows the capture: a delete event drops the object it
 * names, a Resource-mode event stores the object it carries, and every write a handler makes is
 * kept, so later events see what earlier ones did.
 *
 * A handler pass is a function of what it reads, the event and the (fixed) clock. So when a pass
 * changed nothing, and nothing it read has changed since, the same event for the same object
 * would give the same quiet pass again: replay reports it as such without running it (the steady
 * state of a resync costs about what decoding its events does; issue 17 item 4).
 * @module
 */
import type { Logger } from 'pino';
import type { KubeObject } from '../kube/index.js';
import { decodeEvent, findRoute, outcomeForError, resyncEventFor, resyncRoutes, type HandlerDeps, type KubeEvent, type ObjectKey, type Outcome, type Route, type RuntimeConfig } from '../runtime/index.js';
import { createMemoryKube, type MemoryKube, type ReadSet, type RecordedWrite } from './memory-kube.js';

/** What replay needs from a function module: its name, routes and a way to build deps around a client. */
export interface ReplayableFunction<D extends HandlerDeps> {
  /** The function's name (`reconcile`, `profile`, `cleanup`); printed beside what it did. */
  readonly name?: string;
  readonly routes: readonly Route<D>[];
  /** Deps around the shared in-memory client; `kube.as(fieldManager)` gives a client under another field manager. */
  readonly depsWithKube: (base: HandlerDeps, kube: MemoryKube) => D;
  readonly fieldManager: string;
}

export interface ReplayStep {
  /** 1-based line of the events file. */
  readonly line: number;
  readonly eventId: string | undefined;
  readonly eventType: string | undefined;
  /** `namespace/name` of the object the event named (resync: every object listed). */
  readonly objects: readonly string[];
  /** The functions that took the event, in order. */
  readonly functions: readonly string[];
  /** `Done`, `Permanent`, `Transient`, `Skipped` or `Rejected` (malformed line). */
  readonly outcome: string;
  readonly detail?: string;
  /** What replay did to its state for the event, or found missing in it. */
  readonly notes: readonly string[];
  /** Writes that changed something, in order; no-op applies are left out. */
  readonly writes: readonly RecordedWrite[];
}

export interface ReplayOptions {
  readonly config: RuntimeConfig;
  readonly log: Logger;
  /** The clock; replay expects it fixed (a quiet pass is reused only while it reads the same time). */
  readonly now: () => Date;
  /** Whether a quiet pass is reused instead of run again (default true; false runs every pass, as tests compare). */
  readonly isReusingQuietPasses?: boolean;
}

/** A quiet pass: at which store version, what it read, and the clock it saw. */
interface QuietPass {
  readonly version: number;
  readonly reads: ReadSet;
  readonly nowMs: number;
  /** The latest store version at which nothing it read had changed (saves the check while the store stands still). */
  checkedAt: number;
}

const DONE: Outcome = { kind: 'Done' };

// `any`-free erasure of each function's deps type: replay only hands the deps back to its own routes.
type AnyFunction = ReplayableFunction<HandlerDeps>;

/** One handler call an event makes. */
interface WorkItem {
  readonly name: string;
  readonly deps: HandlerDeps;
  readonly route: Route<HandlerDeps>;
  readonly routeIndex: number;
  readonly fnIndex: number;
  readonly event: KubeEvent;
}

/** `namespace/name` as steps print it. */
function nameOf(key: Pick<ObjectKey, 'namespace' | 'name'>): string {
  return `${key.namespace}/${key.name}`;
}

function isWrite(write: RecordedWrite): boolean {
  return !('changed' in write) || write.changed;
}

/**
 * Replays events in order. In: the functions (one, or several over one state), starting
 * objects, the event lines, config, a fixed clock. Out: one step per non-empty line. A malformed
 * line is reported as `Rejected` and replay goes on. Deterministic for the same inputs.
 */
export async function replayEvents<D extends HandlerDeps>(
  functions: ReplayableFunction<D> | readonly AnyFunction[],
  state: readonly KubeObject[],
  lines: readonly string[],
  options: ReplayOptions,
): Promise<ReplayStep[]> {
  const list = (Array.isArray(functions) ? functions : [functions]) as readonly AnyFunction[];
  const kube = createMemoryKube(state, list[0]?.fieldManager ?? 'dynamo-fn-replay');
  const base: HandlerDeps = { log: options.log, now: options.now, config: options.config };
  const installed = list.map((fn) => ({ fn, name: fn.name ?? fn.fieldManager, deps: fn.depsWithKube(base, kube.as(fn.fieldManager)) }));
  const quiet = new Map<string, QuietPass>();
  /** The functions and routes that take each apiVersion and kind (the routes never change). */
  const routing = new Map<string, readonly Omit<WorkItem, 'event'>[]>();
  const steps: ReplayStep[] = [];

  for (const [index, text] of lines.entries()) {
    if (text.trim() === '') continue;
    const line = index + 1;
    const decoded = decodeEvent({ headers: { 'content-type': 'application/cloudevents+json' }, body: Buffer.from(text) });
    if (!decoded.ok) {
      steps.push({ line, eventId: undefined, eventType: undefined, objects: [], functions: [], outcome: 'Rejected', detail: decoded.reason, notes: [], writes: [] });
      continue;
    }
    const event = decoded.decoded;
    if (event.category === 'other') {
      steps.push({ line, eventId: event.attributes.id, eventType: event.attributes.type, objects: [], functions: [], outcome: 'Skipped', detail: 'not an event the functions take', notes: [], writes: [] });
      continue;
    }

    const notes: string[] = [];
    const work: WorkItem[] = [];
    let objects: string[] = [];
    if (event.category === 'apiserver') {
      const key = event.event.key;
      objects = [nameOf(key)];
      notes.push(...followCapture(kube, event.event, event.mode));
      const routeKey = `${key.apiVersion}|${key.kind}`;
      let taking = routing.get(routeKey);
      if (taking === undefined) {
        taking = installed.flatMap(({ fn, name, deps }, fnIndex) => {
          const route = findRoute(fn.routes, key);
          return route === undefined ? [] : [{ name, deps, route, routeIndex: fn.routes.indexOf(route), fnIndex }];
        });
        routing.set(routeKey, taking);
      }
      for (const item of taking) work.push({ ...item, event: event.event });
    } else {
      for (const [fnIndex, { fn, name, deps }] of installed.entries()) {
        for (const route of resyncRoutes(fn.routes, { kind: event.kind, apiVersion: event.apiVersion })) {
          for (const key of (await route.listKeys?.(deps)) ?? []) {
            work.push({ name, deps, route, routeIndex: fn.routes.indexOf(route), fnIndex, event: resyncEventFor(event.attributes, key) });
            objects.push(nameOf(key));
          }
        }
      }
      kube.takeWrites(); // listing writes nothing; keep the log per event
    }
    const attributes = event.category === 'apiserver' ? { id: event.event.id, type: event.event.type } : { id: event.attributes.id, type: event.attributes.type };
    if (work.length === 0) {
      const detail = event.category === 'apiserver' ? `no function takes ${event.event.key.kind}` : 'no function resyncs this kind, or none of its objects are in the state';
      steps.push({ line, eventId: attributes.id, eventType: attributes.type, objects, functions: [], outcome: 'Skipped', detail, notes, writes: [] });
      continue;
    }

    const outcomes: Outcome[] = [];
    const writes: RecordedWrite[] = [];
    const nowMs = options.now().getTime();
    let lastEvent: KubeEvent | undefined;
    let eventKey = '';
    for (const item of work) {
      if (item.event !== lastEvent) {
        lastEvent = item.event;
        const { key, object } = item.event;
        eventKey = `${item.event.type}|${key.apiVersion}/${key.kind}/${key.namespace}/${key.name}|${object === undefined ? '' : JSON.stringify(object)}`;
      }
      const memoKey = `${item.fnIndex}|${item.routeIndex}|${eventKey}`;
      const previous = quiet.get(memoKey);
      if (previous !== undefined && options.isReusingQuietPasses !== false && previous.nowMs === nowMs && (previous.checkedAt === kube.version() || kube.isUnchangedSince(previous.reads, previous.version))) {
        previous.checkedAt = kube.version();
        outcomes.push(DONE);
        continue;
      }
      const versionBefore = kube.version();
      const { result: outcome, reads } = await kube.trace(async (): Promise<Outcome> => {
        try {
          return await item.route.handle(item.event, item.deps);
        } catch (error) {
          return outcomeForError(error) ?? { kind: 'Transient', cause: error instanceof Error ? error : new Error(String(error)) };
        }
      });
      outcomes.push(outcome);
      const taken = kube.takeWrites().filter(isWrite);
      writes.push(...taken);
      if (outcome.kind === 'Done' && taken.length === 0 && kube.version() === versionBefore) quiet.set(memoKey, { version: versionBefore, reads, nowMs, checkedAt: versionBefore });
      else quiet.delete(memoKey);
    }
    const worst = outcomes.find((o) => o.kind === 'Transient') ?? outcomes.find((o) => o.kind === 'Permanent') ?? outcomes[0];
    steps.push({
      line,
      eventId: attributes.id,
      eventType: attributes.type,
      objects: event.category === 'apiserver' ? objects : [...new Set(objects)],
      functions: work.length === 1 ? [work[0]?.name ?? ''] : [...new Set(work.map((w) => w.name))],
      outcome: worst?.kind ?? 'Done',
      ...(worst?.kind === 'Permanent' ? { detail: worst.message } : worst?.kind === 'Transient' ? { detail: worst.cause.message } : {}),
      notes,
      writes,
    });
  }
  return steps;
}

/**
 * Brings the state to what the captured event says the API server held: a delete event drops
 * the object, a Resource-mode add or update stores the object it carries. Out: notes for the
 * step (the object deleted, or named but not held).
 */
function followCapture(kube: MemoryKube, event: KubeEvent, mode: 'Resource' | 'Reference'): string[] {
  const { key } = event;
  const ref = { apiVersion: key.apiVersion, kind: key.kind, namespace: key.namespace, name: key.name };
  const what = `${key.kind} ${nameOf(key)}`;
  if (event.type.endsWith('.delete')) {
    return [kube.remove(ref) ? `deleted ${what} from the state, as the event says the API server did` : `${what} was deleted, and the state did not hold it`];
  }
  const object = event.object as KubeObject | undefined;
  if (mode === 'Resource' && object !== undefined && typeof object.apiVersion === 'string' && typeof object.metadata?.name === 'string') {
    kube.observe(object);
    return [];
  }
  return kube.has(ref) ? [] : [`${what} is not in the state, so the functions find it gone (give it with --state)`];
}
