/**
 * The quiet-DGD wrapper (./quiet.ts) around a stand-in DGD pass, with this process's records as
 * `init` gives them, over the in-memory store replay uses, every read and write counted. Issue
 * 17 item 3: "an event for a quiet DGD should cost about one read": after a full pass that
 * wrote nothing, an event for the same stored DGD reads the DGD once and nothing else; any
 * changed input (the DGD's resourceVersion, a child's event, an adapter's event, a resync tick,
 * the record's age) is the full pass; a pass that wrote or did not end Done leaves no record.
 * The real pass on the real API server (a hand edit put back through the child's event):
 * test/integration/reconcile-quiet-resync.test.ts.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { DGD_KIND, DGD_V1BETA1, DGDSA_KIND, DGDSA_V1BETA1, GROVE_API_VERSION, PODCLIQUESET_KIND } from '../../shared/api/index.js';
import { QUIET_PASS_MAX_AGE_MS, createQuietPassRecords } from '../../shared/domain/index.js';
import { createMemoryKube, type MemoryKube } from '../../shared/dev/memory-kube.js';
import type { Kube, KubeObject } from '../../shared/kube/index.js';
import { DONE, defaultConfig, type KubeEvent, type Outcome, type Route } from '../../shared/runtime/index.js';
import { aDgd } from '../../test/support/builders.js';
import { childRoutes, type ReconcileDeps } from './dgd.js';
import { route as dgdsaRoute } from './dgdsa.js';
import { depsWithKube } from './index.js';
import { withQuietPasses } from './quiet.js';
import { resyncDeps } from './resync.js';

const T0 = Date.parse('2026-12-02T12:00:00Z');
const PCS_NAME = 'my-graph';

/** `kube` with every call it took, as `verb kind`. */
function counting(kube: Kube): { kube: Kube; calls: string[] } {
  const calls: string[] = [];
  const note = (verb: string, kind: string) => calls.push(`${verb} ${kind}`);
  return {
    calls,
    kube: {
      fieldManager: kube.fieldManager,
      get: (ref) => (note('get', ref.kind), kube.get(ref)),
      list: (apiVersion, kind, namespace, options) => (note('list', kind), kube.list(apiVersion, kind, namespace, options)),
      apply: (obj, options) => (note('apply', obj.kind), kube.apply(obj, options)),
      applyStatus: (obj, options) => (note('applyStatus', obj.kind), kube.applyStatus(obj, options)),
      create: (obj, options) => (note('create', obj.kind), kube.create(obj, options)),
      replace: (obj) => (note('replace', obj.kind), kube.replace(obj)),
      delete: (ref, options) => (note('delete', ref.kind), kube.delete(ref, options)),
      createEvent: (intent) => (note('createEvent', 'Event'), kube.createEvent(intent)),
      scale: (ref, replicas) => (note('scale', ref.kind), kube.scale(ref, replicas)),
    },
  };
}

function anEvent(apiVersion: string, kind: string, name: string, object?: KubeObject): KubeEvent {
  return { id: 'e', type: 'dev.knative.apiserver.ref.update', source: 'test', key: { apiVersion, kind, namespace: 'inference', name }, ...(object === undefined ? {} : { object }) } as unknown as KubeEvent;
}

/**
 * One process. The stand-in DGD pass reads the DGD and its PodCliqueSet, applies the
 * PodCliqueSet while `pass.isWriting`, and answers `pass.outcome`.
 */
function aProcess() {
  const dgd = aDgd() as unknown as KubeObject;
  const pcs = { apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND, metadata: { name: PCS_NAME, namespace: 'inference', ownerReferences: [{ apiVersion: DGD_V1BETA1, kind: DGD_KIND, name: 'my-graph', uid: dgd.metadata.uid, controller: true }] }, spec: { replicas: 1 } } as KubeObject;
  const store: MemoryKube = createMemoryKube([dgd, pcs], 'dynamo-reconcile');
  const counted = counting(store);
  let nowMs = T0;
  const pass = { isWriting: false, outcome: DONE as Outcome, runs: 0 };
  const standIn: Route<ReconcileDeps> = {
    apiVersion: DGD_V1BETA1,
    kind: DGD_KIND,
    handle: async (event, deps) => {
      pass.runs += 1;
      await deps.kube.get({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, namespace: event.key.namespace, name: event.key.name });
      await deps.kube.get({ apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND, namespace: event.key.namespace, name: PCS_NAME });
      if (pass.isWriting) await deps.kube.apply({ apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND, metadata: { name: PCS_NAME, namespace: 'inference' }, spec: { replicas: 1 } });
      return pass.outcome;
    },
  };
  const route = withQuietPasses(standIn);
  const deps: ReconcileDeps = {
    ...depsWithKube({ log: pino({ level: 'silent' }), now: () => new Date(nowMs), config: defaultConfig() }, counted.kube),
    quietPasses: createQuietPassRecords(),
  };
  /** One DGD event: its outcome and every call the pass made. */
  const dgdEvent = async () => {
    counted.calls.length = 0;
    const outcome = await route.handle(anEvent(DGD_V1BETA1, DGD_KIND, 'my-graph'), deps);
    return { outcome: outcome.kind, calls: [...counted.calls] };
  };
  const touchDgd = (change: (dgd: KubeObject) => void) => {
    const stored = store.objects().find((o) => o.kind === DGD_KIND);
    if (stored === undefined) throw new Error('no DGD');
    const next = structuredClone(stored);
    change(next);
    next.metadata.resourceVersion = String(Number(stored.metadata.resourceVersion) + 1000);
    store.observe(next);
  };
  return { store, pass, deps, dgdEvent, touchDgd, pcs, advance: (ms: number) => (nowMs += ms) };
}

const FULL_PASS = { outcome: 'Done', calls: [`get ${DGD_KIND}`, `get ${PODCLIQUESET_KIND}`] };
const ONE_READ = { outcome: 'Done', calls: [`get ${DGD_KIND}`] };

describe('quiet DGD events (issue 17 item 3: "an event for a quiet DGD should cost about one read")', () => {
  it('the first event is the full pass; after it wrote nothing, an event for the same stored DGD reads the DGD once: no child reads, no writes', async () => {
    const p = aProcess();
    expect(await p.dgdEvent()).toEqual(FULL_PASS);
    expect(await p.dgdEvent()).toEqual(ONE_READ);
    expect(await p.dgdEvent()).toEqual(ONE_READ);
    expect(p.pass.runs).toBe(1);
  });

  it('a pass that wrote leaves no record: the next event is the full pass again', async () => {
    const p = aProcess();
    p.pass.isWriting = true;
    expect((await p.dgdEvent()).calls).toEqual([...FULL_PASS.calls, `apply ${PODCLIQUESET_KIND}`]);
    p.pass.isWriting = false;
    expect(await p.dgdEvent()).toEqual(FULL_PASS);
    expect(await p.dgdEvent()).toEqual(ONE_READ);
  });

  it.each([
    { name: 'Permanent (an invalid spec, reported on status)', outcome: { kind: 'Permanent', reason: 'InvalidSpec', message: 'm' } as Outcome },
    { name: 'Transient', outcome: { kind: 'Transient', cause: new Error('e') } as Outcome },
  ])('a pass that ended $name leaves no record', async ({ outcome }) => {
    const p = aProcess();
    p.pass.outcome = outcome;
    await p.dgdEvent();
    p.pass.outcome = DONE;
    expect(await p.dgdEvent()).toEqual(FULL_PASS);
  });

  it('a new process (Knative scaled to zero and back: no records) does the full pass', async () => {
    const p = aProcess();
    await p.dgdEvent();
    const fresh = { ...p.deps, quietPasses: createQuietPassRecords() };
    await withQuietPasses({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, handle: async () => ((p.pass.runs += 1), DONE) }).handle(anEvent(DGD_V1BETA1, DGD_KIND, 'my-graph'), fresh);
    expect(p.pass.runs).toBe(2);
  });

  it('without records (a resync pass, replay) the pass runs as it is', async () => {
    const p = aProcess();
    const { quietPasses: _records, ...withoutRecords } = p.deps;
    const route = withQuietPasses({ apiVersion: DGD_V1BETA1, kind: DGD_KIND, handle: async () => ((p.pass.runs += 1), DONE) });
    await route.handle(anEvent(DGD_V1BETA1, DGD_KIND, 'my-graph'), withoutRecords);
    await route.handle(anEvent(DGD_V1BETA1, DGD_KIND, 'my-graph'), withoutRecords);
    expect(p.pass.runs).toBe(2);
  });

  it.each([
    { name: 'a spec change (new resourceVersion and generation)', change: (p: ReturnType<typeof aProcess>) => p.touchDgd((d) => ((d['spec'] as { components: { replicas?: number }[] }).components[1] = { ...(d['spec'] as { components: object[] }).components[1], replicas: 3 }, (d.metadata.generation = 2))) },
    { name: 'an annotation change (new resourceVersion)', change: (p: ReturnType<typeof aProcess>) => p.touchDgd((d) => (d.metadata.annotations = { 'example.com/touched': 'yes' })) },
    { name: 'a status change by someone else (new resourceVersion)', change: (p: ReturnType<typeof aProcess>) => p.touchDgd((d) => (d['status'] = { state: 'edited' })) },
    { name: 'deleted and created again under the same name (another uid)', change: (p: ReturnType<typeof aProcess>) => p.touchDgd((d) => (d.metadata.uid = 'another')) },
    { name: 'a deletionTimestamp', change: (p: ReturnType<typeof aProcess>) => p.touchDgd((d) => (d.metadata['deletionTimestamp'] = '2026-12-02T12:00:01Z')) },
    { name: "an event for one of its children (a hand edit of the PodCliqueSet, as the child's event carries it)", change: async (p: ReturnType<typeof aProcess>) => {
      const childRoute = childRoutes.find((r) => r.kind === PODCLIQUESET_KIND);
      // The real child route: it maps the PodCliqueSet to its DGD, drops the record, and runs the real DGD pass.
      await childRoute?.handle(anEvent(GROVE_API_VERSION, PODCLIQUESET_KIND, PCS_NAME, { ...p.pcs, spec: { replicas: 7 } }), p.deps);
    } },
    { name: "a scaling adapter's event in the DGD's namespace", change: async (p: ReturnType<typeof aProcess>) => void (await dgdsaRoute.handle(anEvent(DGDSA_V1BETA1, DGDSA_KIND, 'an-adapter'), p.deps)) },
    { name: 'a resync tick', change: (p: ReturnType<typeof aProcess>) => void resyncDeps(p.deps) },
    { name: `a record older than ${QUIET_PASS_MAX_AGE_MS} ms`, change: (p: ReturnType<typeof aProcess>) => void p.advance(QUIET_PASS_MAX_AGE_MS + 1) },
  ])('after $name the next DGD event is the full pass', async ({ change }) => {
    const p = aProcess();
    await p.dgdEvent();
    expect(await p.dgdEvent()).toEqual(ONE_READ);
    await change(p);
    expect((await p.dgdEvent()).calls).toEqual(FULL_PASS.calls);
    expect(p.pass.runs).toBe(2);
  });

  it('a pass that overlapped an event for one of its children leaves no record (it may have read the child before the change)', async () => {
    const p = aProcess();
    const childRoute = childRoutes.find((r) => r.kind === PODCLIQUESET_KIND);
    const slow: Route<ReconcileDeps> = {
      apiVersion: DGD_V1BETA1,
      kind: DGD_KIND,
      handle: async (event, deps) => {
        await deps.kube.get({ apiVersion: GROVE_API_VERSION, kind: PODCLIQUESET_KIND, namespace: 'inference', name: PCS_NAME });
        // The child's event arrives while this pass runs.
        await childRoute?.handle(anEvent(GROVE_API_VERSION, PODCLIQUESET_KIND, PCS_NAME, p.pcs), { ...deps, kube: p.store });
        return DONE;
      },
    };
    await withQuietPasses(slow).handle(anEvent(DGD_V1BETA1, DGD_KIND, 'my-graph'), p.deps);
    expect(await p.dgdEvent()).toEqual(FULL_PASS);
  });
});
