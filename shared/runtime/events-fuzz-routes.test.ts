/**
 * "Events never 500 on bad input: a malformed owner reference (or any field of wrong type) in an
 * event's object is a 400 or a skip, never an exception" (issue 20 item 4), for every route of
 * every CloudEvents function. The decode step refuses malformed metadata (events-malformed.test.ts);
 * here every other field (spec, status, data, ...) is fuzzed with fast-check and handed to each
 * route's real handler, in the two ways a handler meets it: as the event's object while the API
 * server has nothing (a handler that falls back to the event's copy reads it), and as what the API
 * server returns for every read. A handler may answer any Outcome or throw the shell's
 * TransientError/PermanentError (a classified retry or refusal); any other exception is the 500
 * this rule forbids. The kube client is a stub: no cluster, no network.
 */
import fc from 'fast-check';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import cleanup, { depsWithKube as cleanupDeps } from '../../functions/cleanup/index.js';
import profile, { depsWithKube as profileDeps } from '../../functions/profile/index.js';
import reconcile, { depsWithKube as reconcileDeps } from '../../functions/reconcile/index.js';
import type { Kube, KubeObject, ObjectRef } from '../kube/index.js';
import { defaultConfig } from './config.js';
import type { HandlerDeps, KubeEvent, Route } from './contract.js';
import { PermanentError, TransientError } from './errors.js';
import { malformedMetadataReason } from './events.js';

const base: HandlerDeps = { log: pino({ level: 'silent' }), now: () => new Date('2026-12-02T00:00:00Z'), config: defaultConfig({ lpxEnabled: true, dgdrV1Beta2Enabled: true }) };

/** A kube client whose reads answer `stored(ref)` (or nothing) and whose writes succeed. */
function stubKube(stored: (apiVersion: string, kind: string, namespace?: string, name?: string) => KubeObject | undefined): Kube {
  const echo = async (obj: unknown): Promise<KubeObject> => obj as KubeObject;
  return {
    fieldManager: 'fuzz',
    get: async (ref: ObjectRef) => stored(ref.apiVersion, ref.kind, ref.namespace, ref.name),
    list: async (apiVersion: string, kind: string, namespace?: string) => {
      const object = stored(apiVersion, kind, namespace);
      return object === undefined ? [] : [object];
    },
    apply: echo,
    applyStatus: echo,
    create: echo,
    replace: echo,
    delete: async () => undefined,
    createEvent: echo,
    scale: async () => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'x' } }) as KubeObject,
  } as unknown as Kube;
}

interface FunctionUnderTest {
  readonly name: string;
  readonly routes: readonly Route<never>[];
  readonly deps: (kube: Kube) => HandlerDeps;
}

const FUNCTIONS: readonly FunctionUnderTest[] = [
  { name: 'reconcile', routes: reconcile.routes as readonly Route<never>[], deps: (kube) => reconcileDeps(base, kube) },
  { name: 'profile', routes: profile.routes as readonly Route<never>[], deps: (kube) => ({ ...profileDeps(base, kube, {}), runKube: kube, publisherKube: kube, scrapeMetrics: async () => ({ ok: false, error: 'no network in this test' }) }) },
  { name: 'cleanup', routes: cleanup.routes as readonly Route<never>[], deps: (kube) => cleanupDeps(base, kube) },
];

const ROUTES = FUNCTIONS.flatMap((f) => f.routes.map((route) => ({ name: `${f.name} ${route.kind} (${route.apiVersion})`, route, deps: f.deps })));

const OWNER_KINDS = [
  ['nvidia.com/v1beta1', 'DynamoGraphDeployment'],
  ['nvidia.com/v1beta1', 'DynamoGraphDeploymentRequest'],
  ['nvidia.com/v1beta2', 'DynamoGraphDeploymentRun'],
  ['nvidia.com/v1beta2', 'DynamoGraphDeploymentRequest'],
  ['grove.io/v1alpha1', 'PodCliqueSet'],
  ['nvidia.com/v1alpha1', 'LPXGraphDeployment'],
  ['batch/v1', 'Job'],
] as const;

/** Metadata the decode step lets through (ObjectMeta-shaped), owners of every kind a route looks up. */
const metadata = fc.record(
  {
    name: fc.constantFrom('llama', 'llama-0-decode', 'dgdr-output-llama', 'llama-aisimulate'),
    namespace: fc.constant('team-a'),
    uid: fc.constantFrom('u-1', 'u-2'),
    generation: fc.integer({ min: 0, max: 3 }),
    resourceVersion: fc.constant('7'),
    labels: fc.dictionary(fc.constantFrom('nvidia.com/dgdr-run-uid', 'dgdr.nvidia.com/name', 'app.kubernetes.io/part-of', 'job-name', 'nvidia.com/dynamo-graph-deployment-name'), fc.constantFrom('u-1', 'llama', '')),
    annotations: fc.dictionary(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 })),
    ownerReferences: fc.array(
      fc.record({ kind: fc.constantFrom(...OWNER_KINDS), name: fc.constantFrom('llama', 'other'), uid: fc.constantFrom('u-1', 'u-2'), controller: fc.boolean() }).map(({ kind: [apiVersion, kind], ...rest }) => ({ apiVersion, kind, ...rest })),
      { maxLength: 2 },
    ),
    finalizers: fc.array(fc.constantFrom('nvidia.com/dgdr-run-u-1', 'foregroundDeletion'), { maxLength: 2 }),
    deletionTimestamp: fc.constant('2026-12-01T00:00:00Z'),
  },
  { requiredKeys: ['name', 'namespace'] },
);

/** Any JSON where the API types expect objects, lists, strings or numbers; sometimes a near-valid shape. */
const anyField = fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant(null), fc.constant([]), fc.constant({}), fc.constant('x'), fc.constant(7));
const objectOf = (apiVersion: string, kind: string) =>
  fc.record({ metadata, spec: anyField, status: anyField, data: anyField, extra: anyField }, { requiredKeys: ['metadata'] }).map((o) => ({ apiVersion, kind, ...o }));

/** Runs one handler and says how it ended: an Outcome or a classified error is fine; anything else is the 500. */
async function runs(route: Route<never>, event: KubeEvent, deps: HandlerDeps): Promise<string> {
  try {
    const outcome = await route.handle(event, deps as never);
    return typeof outcome === 'object' && outcome !== null && 'kind' in outcome ? 'ok' : `no Outcome: ${JSON.stringify(outcome)}`;
  } catch (error) {
    if (error instanceof TransientError || error instanceof PermanentError) return 'ok';
    return `threw ${error instanceof Error ? `${error.name}: ${error.message}\n${error.stack?.split('\n').slice(1, 4).join('\n')}` : String(error)}`;
  }
}

describe('"Events never 500 on bad input ... any field of wrong type in an event\'s object is a 400 or a skip, never an exception" (issue 20 item 4): every route of every function, fuzzed', () => {
  it('the routes under test are every CloudEvents route (reconcile, profile, cleanup)', () => {
    expect(ROUTES.length).toBeGreaterThanOrEqual(14);
  });

  it.each(ROUTES)('$name: the event\'s object with fields of any type, the API server holding nothing, or holding that object for every read', async ({ route, deps }) => {
    await fc.assert(
      fc.asyncProperty(objectOf(route.apiVersion, route.kind), fc.boolean(), fc.constantFrom('resource.update', 'resource.add', 'resource.delete', 'ref.update'), async (object, isStored, type) => {
        expect(malformedMetadataReason(object.metadata)).toBeUndefined();
        const key = { apiVersion: route.apiVersion, kind: route.kind, namespace: 'team-a', name: object.metadata.name };
        const event: KubeEvent = { id: 'e-1', type: `dev.knative.apiserver.${type}`, source: 'fuzz', key, object: type.startsWith('ref.') ? undefined : object };
        const kube = stubKube((apiVersion, kind) => (isStored ? ({ ...object, apiVersion, kind } as unknown as KubeObject) : undefined));
        expect(await runs(route, event, deps(kube))).toBe('ok');
      }),
      { seed: Number(process.env['FUZZ_SEED'] ?? 20_2004), numRuns: Number(process.env['FUZZ_RUNS'] ?? 150) },
    );
  }, 60_000);
});
