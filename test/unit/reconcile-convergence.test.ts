/**
 * Convergence property of the reconcile function (issue 8 "Tests"): random event streams over
 * several DGDs, with 30% of the events dropped, duplicated or reordered, plus resyncs, end in
 * exactly the state the same actions give when every event is delivered once, in order.
 *
 * The world is the in-memory kube of shared/dev/memory-kube.ts (so a thousand streams run in
 * seconds); every write that changes an object emits the event ApiServerSource would (DGD in
 * Reference mode, children in Resource mode), routed through the reconcile function's own
 * route table. Grove is played by dev's Grove simulation (shared/dev/grove-simulation.ts): it
 * creates PodCliques from the PodCliqueSet template (replicas seed them), reports them ready at
 * their `spec.replicas` and acknowledges the PodCliqueSet generation; the test starts or ends a
 * rollout when a stream says so, and finishes any rollout still active once the stream is over.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import fc from 'fast-check';
import { parse } from 'yaml';
import { sharedDir } from '../support/paths.js';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { DGD_KIND, DGD_V1BETA1, FIELD_MANAGER_RECONCILE } from '../../shared/api/index.js';
import { DEFAULT_RENDER_CONFIG } from '../../shared/domain/index.js';
import { createMemoryKube, type MemoryKube } from '../../shared/dev/memory-kube.js';
import { groveSyncPodCliqueSet } from '../../shared/dev/grove-simulation.js';
import type { Kube, KubeObject, ObjectRef } from '../../shared/kube/index.js';
import { defaultConfig, findRoute, type KubeEvent, type ObjectKey } from '../../shared/runtime/index.js';
import reconcile from '../../functions/reconcile/index.js';
import type { ReconcileDeps } from '../../functions/reconcile/dgd.js';

const NAMESPACE = 'inference';
const DGD_COUNT = 3;
const GROVE = 'grove.io/v1alpha1';
const NOW = new Date('2026-11-29T12:00:00Z');
/** A drain that needs more deliveries than this is a storm: the test fails rather than loops. */
const MAX_DELIVERIES_PER_DRAIN = 400;

type Action =
  | { readonly type: 'scale'; readonly dgd: number; readonly replicas: number }
  | { readonly type: 'image'; readonly dgd: number; readonly tag: number }
  | { readonly type: 'strategy'; readonly dgd: number; readonly coherent: boolean }
  | { readonly type: 'grove'; readonly dgd: number }
  | { readonly type: 'rollout'; readonly dgd: number; readonly active: boolean }
  | { readonly type: 'deleteService'; readonly dgd: number };

/** What happens to one emitted event: delivered, dropped, duplicated, or held back and delivered later (reordered). */
type Fault = 'deliver' | 'drop' | 'duplicate' | 'reorder';

interface Dgd {
  replicas: number;
  tag: number;
  coherent: boolean;
}

const dgdName = (index: number): string => `g${index}`;

function dgdObject(index: number, spec: Dgd): KubeObject {
  return {
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    metadata: { name: dgdName(index), namespace: NAMESPACE, ...(spec.coherent ? { annotations: { 'nvidia.com/grove-update-strategy': 'Coherent' } } : { annotations: {} }) },
    spec: {
      backendFramework: 'vllm',
      components: [
        { name: 'frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ name: 'main', image: 'nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.0' }] } } },
        { name: 'worker', type: 'worker', replicas: spec.replicas, podTemplate: { spec: { containers: [{ name: 'main', image: `nvcr.io/nvidia/ai-dynamo/vllm-runtime:1.4.${spec.tag}` }] } } },
      ],
    },
  };
}

/** A kube that emits an API event for every write that changed something (the memory kube records which did). */
function emitting(inner: MemoryKube, emit: (phase: 'add' | 'update' | 'delete', object: KubeObject) => void): Kube {
  const emitChanges = (created: boolean): void => {
    for (const write of inner.takeWrites()) {
      if (write.verb !== 'delete' && write.verb !== 'createEvent' && write.changed) emit(created ? 'add' : 'update', write.object);
    }
  };
  const exists = async (o: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }): Promise<boolean> =>
    (await inner.get({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, ...(o.metadata.namespace === undefined ? {} : { namespace: o.metadata.namespace }) })) !== undefined;
  return {
    fieldManager: inner.fieldManager,
    get: (ref) => inner.get(ref),
    list: (...args) => inner.list(...args),
    apply: async (obj, options) => {
      const existed = await exists(obj);
      const stored = await inner.apply(obj, options);
      emitChanges(!existed);
      return stored;
    },
    create: async (obj) => {
      const stored = await inner.create(obj);
      emitChanges(true);
      return stored;
    },
    applyStatus: async (obj, options) => {
      const stored = await inner.applyStatus(obj, options);
      emitChanges(false);
      return stored;
    },
    replace: async (obj) => {
      const stored = await inner.replace(obj);
      emitChanges(false);
      return stored;
    },
    scale: async (ref, replicas) => {
      const scale = await inner.scale(ref, replicas);
      emitChanges(false);
      return scale;
    },
    delete: async (ref, options) => {
      const before = await inner.get(ref);
      await inner.delete(ref, options);
      inner.takeWrites();
      if (before !== undefined) emit('delete', before);
    },
    createEvent: async (event) => {
      const created = await inner.createEvent(event);
      inner.takeWrites();
      return created;
    },
  };
}

interface World {
  readonly kube: Kube;
  /** The user's writes to the DGDs: their own field manager, as kubectl's, beside reconcile's (server-side apply keeps each manager's fields apart). */
  readonly userKube: Kube;
  readonly memory: MemoryKube;
  readonly queue: KubeEvent[];
  readonly dgds: Dgd[];
  /** Events emitted so far: a settle round that emits none changed nothing. */
  emitted(): number;
}

/** Grove is installed with the Coherent strategy (PR #649's PodCliqueSet CRD), so "strategy" actions exercise the Coherent gate. */
const GROVE_COHERENT_CRD = parse(readFileSync(resolve(sharedDir, 'crds', 'grove', 'grove.io_podcliquesets.coherent.yaml'), 'utf8')) as KubeObject;

function createWorld(initial: readonly KubeObject[] = []): World {
  const memory = createMemoryKube([GROVE_COHERENT_CRD, ...initial], FIELD_MANAGER_RECONCILE);
  const queue: KubeEvent[] = [];
  let id = 0;
  const emit = (phase: 'add' | 'update' | 'delete', object: KubeObject): void => {
    const isDgd = object.kind === DGD_KIND;
    id += 1;
    queue.push({
      id: `e${id}`,
      type: `dev.knative.apiserver.${isDgd ? 'ref' : 'resource'}.${phase}`,
      source: 'memory',
      key: { apiVersion: object.apiVersion, kind: object.kind, namespace: object.metadata.namespace ?? '', name: object.metadata.name },
      object: isDgd ? undefined : object,
    });
  };
  const kube = emitting(memory, emit);
  const userKube = emitting(memory.as('kubectl'), emit);
  return { kube, userKube, memory, queue, dgds: Array.from({ length: DGD_COUNT }, () => ({ replicas: 2, tag: 0, coherent: false })), emitted: () => id };
}

function depsFor(world: World): ReconcileDeps {
  return { log: pino({ level: 'silent' }), now: () => NOW, config: defaultConfig(), kube: world.kube, render: DEFAULT_RENDER_CONFIG, instance: 'property' };
}

async function deliver(world: World, deps: ReconcileDeps, event: KubeEvent): Promise<void> {
  const route = findRoute(reconcile.routes, event.key);
  if (route === undefined) return;
  // A Transient outcome is retried by the broker; in this model the later events and the
  // resyncs stand in for the retry.
  await route.handle(event, deps);
}

/** Delivers queued events in order until none is left; `faults` (consumed) decide each event's fate. */
async function drain(world: World, deps: ReconcileDeps, faults: Fault[] | undefined, heldBack: KubeEvent[]): Promise<void> {
  let deliveries = 0;
  while (world.queue.length > 0) {
    const event = world.queue.shift() as KubeEvent;
    const fault = faults?.shift() ?? 'deliver';
    if (fault === 'drop') continue;
    if (fault === 'reorder') {
      heldBack.push(event);
      continue;
    }
    await deliver(world, deps, event);
    if (fault === 'duplicate') await deliver(world, deps, event);
    deliveries += 1;
    if (deliveries > MAX_DELIVERIES_PER_DRAIN) throw new Error(`more than ${MAX_DELIVERIES_PER_DRAIN} deliveries in one drain: the events do not settle`);
  }
}

/**
 * Grove, played by dev's Grove simulation (shared/dev/grove-simulation.ts, the one implementation
 * dev runs): PodCliques from the template (seeded once), ready at spec.replicas, generation acknowledged.
 */
async function groveSync(world: World, index: number): Promise<void> {
  const pcs = await world.kube.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace: NAMESPACE, name: dgdName(index) });
  if (pcs === undefined) return;
  await groveSyncPodCliqueSet(world.kube, pcs, NOW.toISOString());
}

async function groveRollout(world: World, index: number, active: boolean): Promise<void> {
  const pcs = await world.kube.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace: NAMESPACE, name: dgdName(index) });
  if (pcs === undefined) return;
  const status = (pcs['status'] as Record<string, unknown> | undefined) ?? {};
  const updateProgress = active ? { updateStartedAt: '2026-11-29T11:00:00Z' } : { updateStartedAt: '2026-11-29T11:00:00Z', updateEndedAt: '2026-11-29T11:30:00Z' };
  await world.kube.applyStatus({ apiVersion: GROVE, kind: 'PodCliqueSet', metadata: { name: pcs.metadata.name, namespace: NAMESPACE }, status: { ...status, updateProgress } });
}

async function perform(world: World, action: Action): Promise<void> {
  const dgd = world.dgds[action.dgd] as Dgd;
  switch (action.type) {
    case 'scale':
      dgd.replicas = action.replicas;
      await world.userKube.apply(dgdObject(action.dgd, dgd));
      return;
    case 'image':
      dgd.tag = action.tag;
      await world.userKube.apply(dgdObject(action.dgd, dgd));
      return;
    case 'strategy':
      dgd.coherent = action.coherent;
      await world.userKube.apply(dgdObject(action.dgd, dgd));
      return;
    case 'grove':
      await groveSync(world, action.dgd);
      return;
    case 'rollout':
      await groveRollout(world, action.dgd, action.active);
      return;
    case 'deleteService':
      await world.kube.delete({ apiVersion: 'v1', kind: 'Service', namespace: NAMESPACE, name: `${dgdName(action.dgd)}-worker` });
      return;
    default: {
      const unreachable: never = action;
      throw new Error(`unknown action ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Grove finishes what it started: an active rollout ends (as every Grove rollout eventually does). */
async function groveFinishesRollout(world: World, index: number): Promise<void> {
  const pcs = await world.kube.get({ apiVersion: GROVE, kind: 'PodCliqueSet', namespace: NAMESPACE, name: dgdName(index) });
  const progress = (pcs?.['status'] as { updateProgress?: { updateEndedAt?: string } } | undefined)?.updateProgress;
  if (progress !== undefined && progress.updateEndedAt === undefined) await groveRollout(world, index, false);
}

/**
 * Resyncs (every DGD reconciled), Grove catching up and finishing its rollouts, events
 * delivered in order, until nothing changes. Without the rollouts ending, the end state would
 * depend on timing the reference makes meaningful: a replica change that arrives after a
 * Coherent rollout started is rightly deferred until it completes.
 */
async function settle(world: World, deps: ReconcileDeps): Promise<void> {
  const route = reconcile.routes[0];
  if (route?.listKeys === undefined) throw new Error('the DGD route has no resync');
  for (let round = 0; round < 8; round += 1) {
    const before = world.emitted();
    for (const key of await route.listKeys(deps)) await route.handle({ id: `resync-${round}`, type: 'dev.dynamo-fn.resync', source: 'ping', key: key as ObjectKey, object: undefined }, deps);
    for (let index = 0; index < DGD_COUNT; index += 1) {
      await groveSync(world, index);
      await groveFinishesRollout(world, index);
    }
    await drain(world, deps, undefined, []);
    if (world.emitted() === before) return;
  }
  throw new Error('the world did not settle in 8 resync rounds');
}

/** The state that matters: specs, ownership, DGD status, PodClique status; not versions or generations, which count writes. */
function snapshot(world: World): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const object of world.memory.objects()) {
    if (object.kind === 'CustomResourceDefinition') continue; // installed, never written
    const key = `${object.kind}/${object.metadata.name}`;
    const status = object['status'] as Record<string, unknown> | undefined;
    out[key] = {
      spec: object['spec'],
      labels: object.metadata.labels,
      annotations: object.metadata.annotations,
      ownerReferences: object.metadata['ownerReferences'],
      ...(object.kind === DGD_KIND ? { status } : {}),
      ...(object.kind === 'PodClique' && status !== undefined ? { status: { ...status, observedGeneration: undefined } } : {}),
      ...(object.kind === 'PodCliqueSet' && status !== undefined ? { updateProgress: status['updateProgress'] } : {}),
    };
  }
  return out;
}

/** Creates the DGDs and lets them settle in order: the running deployments every stream starts from. */
async function startWorld(): Promise<readonly KubeObject[]> {
  const world = createWorld();
  const deps = depsFor(world);
  for (let index = 0; index < DGD_COUNT; index += 1) await world.userKube.apply(dgdObject(index, world.dgds[index] as Dgd));
  await drain(world, deps, undefined, []);
  await settle(world, deps);
  return world.memory.objects();
}

let started: Promise<readonly KubeObject[]> | undefined;

async function run(actions: readonly Action[], faults: Fault[] | undefined): Promise<Record<string, unknown>> {
  started ??= startWorld();
  const world = createWorld(await started);
  const deps = depsFor(world);
  const heldBack: KubeEvent[] = [];
  for (const action of actions) {
    await perform(world, action);
    await drain(world, deps, faults, heldBack);
    // Held-back events arrive after the next action's: reordered.
    world.queue.push(...heldBack.splice(0));
  }
  await drain(world, deps, faults, heldBack);
  world.queue.push(...heldBack.splice(0));
  await settle(world, deps);
  return snapshot(world);
}

const dgdIndex = fc.integer({ min: 0, max: DGD_COUNT - 1 });
const action: fc.Arbitrary<Action> = fc.oneof(
  fc.record({ type: fc.constant('scale' as const), dgd: dgdIndex, replicas: fc.integer({ min: 0, max: 4 }) }),
  fc.record({ type: fc.constant('image' as const), dgd: dgdIndex, tag: fc.integer({ min: 0, max: 2 }) }),
  fc.record({ type: fc.constant('strategy' as const), dgd: dgdIndex, coherent: fc.boolean() }),
  fc.record({ type: fc.constant('grove' as const), dgd: dgdIndex }),
  fc.record({ type: fc.constant('rollout' as const), dgd: dgdIndex, active: fc.boolean() }),
  fc.record({ type: fc.constant('deleteService' as const), dgd: dgdIndex }),
);
/** 70% delivered once, in order; 10% each dropped, duplicated, reordered. */
const fault: fc.Arbitrary<Fault> = fc.constantFrom<Fault>('deliver', 'deliver', 'deliver', 'deliver', 'deliver', 'deliver', 'deliver', 'drop', 'duplicate', 'reorder');

describe('convergence (issue 8: "at least 1,000 random event streams over several DGDs with 30% of events dropped, duplicated or reordered, plus resyncs, end in exactly the state an in-order stream gives")', () => {
  it('1,000 streams over 3 DGDs end in the in-order state', async () => {
    let streams = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(action, { minLength: 1, maxLength: 8 }), fc.array(fault, { minLength: 200, maxLength: 200 }), async (actions, faults) => {
        streams += 1;
        const inOrder = await run(actions, undefined);
        const faulty = await run(actions, [...faults]);
        expect(faulty).toEqual(inOrder);
      }),
      { numRuns: 1000 },
    );
    expect(streams).toBeGreaterThanOrEqual(1000);
  }, 600_000);

  it('the model is not trivial: an in-order stream scales the clique through /scale and restores a deleted Service', async () => {
    const state = await run([{ type: 'scale', dgd: 1, replicas: 4 }, { type: 'deleteService', dgd: 2 }], undefined);
    expect((state['PodClique/g1-0-worker'] as { spec: { replicas: number } }).spec.replicas).toBe(4);
    expect((state['PodCliqueSet/g1'] as { spec: { template: { cliques: { name: string; spec: { replicas: number } }[] } } }).spec.template.cliques.find((c) => c.name === 'worker')?.spec.replicas).toBe(2);
    expect(state['Service/g2-worker']).toBeDefined();
    const dropped = await run([{ type: 'scale', dgd: 1, replicas: 4 }], ['drop', 'drop', 'drop', 'drop', 'drop', 'drop', 'drop', 'drop']);
    expect(dropped).toEqual(await run([{ type: 'scale', dgd: 1, replicas: 4 }], undefined));
  });
});
