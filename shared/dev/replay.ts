/**
 * Replay: runs a function's handlers over captured CloudEvents (structured-mode JSON, one per
 * line, as `dynamo-fn dev --capture` writes them) against a starting state held in memory, and
 * reports the writes each event caused. No cluster, no network. DESIGN.md "Capture and replay".
 * @module
 */
import type { Logger } from 'pino';
import type { KubeObject } from '../kube/index.js';
import { decodeEvent, findRoute, outcomeForError, resyncEventFor, resyncRoutes, type HandlerDeps, type KubeEvent, type Outcome, type Route, type RuntimeConfig } from '../runtime/index.js';
import { createMemoryKube, type MemoryKube, type RecordedWrite } from './memory-kube.js';

/** What replay needs from a function module: its routes and a way to build deps around a client. */
export interface ReplayableFunction<D extends HandlerDeps> {
  readonly routes: readonly Route<D>[];
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
  /** `Done`, `Permanent`, `Transient`, `Skipped` or `Rejected` (malformed line). */
  readonly outcome: string;
  readonly detail?: string;
  /** Writes that changed something, in order; no-op applies are left out. */
  readonly writes: readonly RecordedWrite[];
}

/**
 * Replays events in order. In: the function, starting objects, the event lines, config, a
 * fixed clock. Out: one step per non-empty line. A malformed line is reported as `Rejected`
 * and replay goes on. Deterministic for the same inputs.
 */
export async function replayEvents<D extends HandlerDeps>(
  fn: ReplayableFunction<D>,
  state: readonly KubeObject[],
  lines: readonly string[],
  options: { readonly config: RuntimeConfig; readonly log: Logger; readonly now: () => Date },
): Promise<ReplayStep[]> {
  const kube = createMemoryKube(state, fn.fieldManager);
  const deps = fn.depsWithKube({ log: options.log, now: options.now, config: options.config }, kube);
  const steps: ReplayStep[] = [];
  for (const [index, text] of lines.entries()) {
    if (text.trim() === '') continue;
    const line = index + 1;
    const decoded = decodeEvent({ headers: { 'content-type': 'application/cloudevents+json' }, body: Buffer.from(text) });
    if (!decoded.ok) {
      steps.push({ line, eventId: undefined, eventType: undefined, objects: [], outcome: 'Rejected', detail: decoded.reason, writes: [] });
      continue;
    }
    const event = decoded.decoded;
    if (event.category === 'other') {
      steps.push({ line, eventId: event.attributes.id, eventType: event.attributes.type, objects: [], outcome: 'Skipped', detail: 'not an event this function takes', writes: [] });
      continue;
    }
    const work: { route: Route<D>; event: KubeEvent }[] = [];
    if (event.category === 'apiserver') {
      const route = findRoute(fn.routes, event.event.key);
      if (route !== undefined) work.push({ route, event: event.event });
    } else {
      for (const route of resyncRoutes(fn.routes, { kind: event.kind, apiVersion: event.apiVersion })) {
        for (const key of (await route.listKeys?.(deps)) ?? []) work.push({ route, event: resyncEventFor(event.attributes, key) });
      }
    }
    const attributes = event.category === 'apiserver' ? { id: event.event.id, type: event.event.type } : { id: event.attributes.id, type: event.attributes.type };
    if (work.length === 0) {
      steps.push({ line, eventId: attributes.id, eventType: attributes.type, objects: [], outcome: 'Skipped', detail: 'no route for this kind', writes: [] });
      continue;
    }
    const outcomes: Outcome[] = [];
    for (const item of work) {
      try {
        outcomes.push(await item.route.handle(item.event, deps));
      } catch (error) {
        outcomes.push(outcomeForError(error) ?? { kind: 'Transient', cause: error instanceof Error ? error : new Error(String(error)) });
      }
    }
    const worst = outcomes.find((o) => o.kind === 'Transient') ?? outcomes.find((o) => o.kind === 'Permanent') ?? outcomes[0];
    steps.push({
      line,
      eventId: attributes.id,
      eventType: attributes.type,
      objects: work.map((w) => `${w.event.key.namespace}/${w.event.key.name}`),
      outcome: worst?.kind ?? 'Done',
      ...(worst?.kind === 'Permanent' ? { detail: worst.message } : worst?.kind === 'Transient' ? { detail: worst.cause.message } : {}),
      writes: kube.takeWrites().filter((w) => !('changed' in w) || w.changed),
    });
  }
  return steps;
}
