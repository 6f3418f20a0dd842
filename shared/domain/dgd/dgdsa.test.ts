/**
 * DGDSA decisions, as upstream's adapter reconcilers behave
 * (internal/controller/dgd_scaling_adapters_reconciler.go,
 * internal/controller/dynamographdeploymentscalingadapter_controller.go) and as the ModelExpress
 * HPA demo needs ("HPA can then drive dgdsa.spec.replicas, and the DGDSA controller propagates
 * the value to the DGD's spec.services.<name>.replicas").
 */
import { describe, expect, it } from 'vitest';
import type { Dgdsa } from '../../api/index.js';
import { aComponent, aDgd, deepFreeze } from '../../../test/support/builders.js';
import { decideScalingAdapter, decideScalingAdapters, scalingAdapterName, scalingAdapterSelector, type ObservedAdapter } from './dgdsa.js';

const UID = '0b6c1e5e-1111-2222-3333-444455556666';
const NOW = new Date('2026-12-01T09:00:00.123Z');

const anAdapter = (overrides: { name?: string; component?: string; replicas?: number; lastScaleTime?: string } = {}): Dgdsa => ({
  apiVersion: 'nvidia.com/v1beta1',
  kind: 'DynamoGraphDeploymentScalingAdapter',
  metadata: { name: overrides.name ?? 'my-graph-decode', namespace: 'inference' },
  spec: { dgdRef: { name: 'my-graph', serviceName: overrides.component ?? 'Decode' }, replicas: overrides.replicas ?? 1 },
  ...(overrides.lastScaleTime === undefined ? {} : { status: { replicas: 1, lastScaleTime: overrides.lastScaleTime } }),
});

const graph = (decode: Parameters<typeof aComponent>[2] = {}) =>
  aDgd({ spec: { components: [aComponent('frontend', 'frontend'), aComponent('Decode', 'decode', { scalingAdapter: {}, replicas: 2, ...decode })] } });

describe('scaling adapter names and selector', () => {
  it('names the adapter <dgd>-<lower(component)> (upstream generateAdapterName)', () => {
    expect(scalingAdapterName('kimi-agg-autoscale', 'Source')).toBe('kimi-agg-autoscale-source');
  });
  it('selects the component pods by DGD and component labels, keys sorted as labels.SelectorFromSet prints them (upstream buildPodSelector)', () => {
    expect(scalingAdapterSelector('kimi-agg-autoscale', 'source')).toBe('nvidia.com/dynamo-component=source,nvidia.com/dynamo-graph-deployment-name=kimi-agg-autoscale');
  });
});

describe('decideScalingAdapters (the DGD side)', () => {
  const owned = (name: string, component: string): ObservedAdapter => ({ name, controllerUid: UID, componentName: component });
  const rows = [
    {
      name: 'creates one adapter per component that enables scalingAdapter, replicas seeded from the component',
      reason: 'upstream dgd_scaling_adapters_reconciler.go: "Seed replicas only when creating the adapter"',
      dgd: graph(),
      adapters: [] as ObservedAdapter[],
      want: {
        create: [
          {
            apiVersion: 'nvidia.com/v1beta1',
            kind: 'DynamoGraphDeploymentScalingAdapter',
            metadata: {
              name: 'my-graph-decode',
              namespace: 'inference',
              labels: { 'nvidia.com/dynamo-graph-deployment-name': 'my-graph', 'nvidia.com/dynamo-component': 'Decode' },
              ownerReferences: [{ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'my-graph', uid: UID, controller: true, blockOwnerDeletion: true }],
            },
            spec: { dgdRef: { name: 'my-graph', serviceName: 'Decode' }, replicas: 2 },
          },
        ],
        delete: [],
        events: [{ type: 'Normal', reason: 'AdapterCreated', note: 'Created scaling adapter my-graph-decode for component Decode', regarding: { kind: 'DynamoGraphDeployment', name: 'my-graph' } }],
      },
    },
    {
      name: 'an existing adapter is never rewritten, so its replicas (the autoscaler intent) survive',
      reason: 'issue 8 part 4: the DGD reconcile never overwrites the adapter intent',
      dgd: graph({ replicas: 5 }),
      adapters: [owned('my-graph-decode', 'Decode')],
      want: { create: [], delete: [], events: [] },
    },
    {
      name: 'seeds 1 when the component omits replicas',
      reason: 'upstream ptr.Deref(component.Replicas, 1)',
      dgd: aDgd({ spec: { components: [{ name: 'Decode', type: 'decode', scalingAdapter: {} }] } }),
      adapters: [],
      want: { createdReplicas: [1] },
    },
    {
      name: 'deletes the adapter it controls when the component opts out',
      reason: 'upstream: "Remove static adapters after opt-out"',
      dgd: graph({ scalingAdapter: undefined }),
      adapters: [owned('my-graph-decode', 'Decode')],
      want: { create: [], delete: ['my-graph-decode'], events: [{ type: 'Normal', reason: 'AdapterDeleted', note: 'Deleted scaling adapter my-graph-decode for component Decode', regarding: { kind: 'DynamoGraphDeployment', name: 'my-graph' } }] },
    },
    {
      name: 'leaves alone an adapter it does not control, even with the generated name (never adopted)',
      reason: 'house rule: an object we did not create is not adopted, changed or deleted',
      dgd: graph({ scalingAdapter: undefined }),
      adapters: [{ name: 'my-graph-decode', controllerUid: undefined, componentName: 'Decode' }, { name: 'other', controllerUid: 'another-uid', componentName: 'frontend' }],
      want: { create: [], delete: [], events: [] },
    },
  ];

  it.each(rows)('$name', ({ dgd, adapters, want }) => {
    const desired = decideScalingAdapters(deepFreeze(dgd), deepFreeze(adapters));
    if ('createdReplicas' in want) expect(desired.create.map((a) => a.spec.replicas)).toEqual(want.createdReplicas);
    else expect(desired).toEqual(want);
  });

  it('decides nothing new after its creations are observed', () => {
    const dgd = graph();
    const first = decideScalingAdapters(dgd, []);
    const observed = first.create.map((a) => ({ name: a.metadata.name ?? '', controllerUid: UID, componentName: a.spec.dgdRef.serviceName }));
    expect(decideScalingAdapters(dgd, observed)).toEqual({ create: [], delete: [], events: [] });
  });
});

describe('decideScalingAdapter (adapter -> DGD component)', () => {
  const rows = [
    {
      name: 'a /scale write to 3 becomes the component replicas, with a Scaled event and lastScaleTime',
      reason: 'upstream dynamographdeploymentscalingadapter_controller.go: "Update DGD if replicas changed (DGDSA is the source of truth)"',
      adapter: anAdapter({ replicas: 3 }),
      dgd: graph(),
      want: {
        componentReplicas: { index: 1, componentName: 'Decode', from: 2, to: 3 },
        status: { replicas: 3, selector: 'nvidia.com/dynamo-component=Decode,nvidia.com/dynamo-graph-deployment-name=my-graph', lastScaleTime: '2026-12-01T09:00:00Z' },
        events: [{ type: 'Normal', reason: 'Scaled', note: 'Scaled component Decode from 2 to 3 replicas', regarding: { kind: 'DynamoGraphDeploymentScalingAdapter', name: 'my-graph-decode' } }],
      },
    },
    {
      name: 'equal replicas write nothing to the DGD and keep lastScaleTime',
      reason: 'upstream: status.replicas = spec.replicas; lastScaleTime set only on a scale',
      adapter: anAdapter({ replicas: 2, lastScaleTime: '2026-11-30T00:00:00Z' }),
      dgd: graph(),
      want: { status: { replicas: 2, selector: 'nvidia.com/dynamo-component=Decode,nvidia.com/dynamo-graph-deployment-name=my-graph', lastScaleTime: '2026-11-30T00:00:00Z' }, events: [] },
    },
    {
      name: 'an omitted component replicas counts as 1',
      reason: 'upstream: "Get current replicas from DGD (default to 1 if not set)"',
      adapter: anAdapter({ replicas: 1 }),
      dgd: graph({ replicas: undefined }),
      want: { status: { replicas: 1, selector: 'nvidia.com/dynamo-component=Decode,nvidia.com/dynamo-graph-deployment-name=my-graph' }, events: [] },
    },
    {
      name: 'a user-created adapter drives a component without scalingAdapter (the ModelExpress HPA demo)',
      reason: 'modelexpress-checkpoint-loader: the DGDSA + HPA wrapper targets service "source", which does not set scalingAdapter',
      adapter: anAdapter({ replicas: 2 }),
      dgd: graph({ scalingAdapter: undefined, replicas: 1 }),
      want: { componentReplicas: { index: 1, componentName: 'Decode', from: 1, to: 2 } },
    },
    {
      name: 'a missing DGD is a problem, with no write',
      reason: 'upstream: "Referenced DGD not found"',
      adapter: anAdapter(),
      dgd: undefined,
      want: { status: undefined, events: [], problem: { reason: 'DGDNotFound', message: 'DynamoGraphDeployment my-graph referenced by scaling adapter my-graph-decode not found' } },
    },
    {
      name: 'a missing component is a problem naming the components there are',
      reason: 'upstream: "Component referenced by adapter not found in DGD"',
      adapter: anAdapter({ component: 'prefill' }),
      dgd: graph(),
      want: { status: undefined, events: [], problem: { reason: 'ComponentNotFound', message: 'component prefill referenced by scaling adapter my-graph-decode not found in DynamoGraphDeployment my-graph (components: frontend, Decode)' } },
    },
  ];

  it.each(rows)('$name', ({ adapter, dgd, want }) => {
    const desired = decideScalingAdapter(deepFreeze(adapter), dgd === undefined ? undefined : deepFreeze(dgd), NOW);
    if ('componentReplicas' in want && !('status' in want)) expect(desired.componentReplicas).toEqual(want.componentReplicas);
    else expect(desired).toEqual(want);
  });

  it('deciding again after the component replicas are written gives no new write', () => {
    const dgd = graph();
    const first = decideScalingAdapter(anAdapter({ replicas: 4 }), dgd, NOW);
    const scaled = graph({ replicas: first.componentReplicas?.to ?? 0 });
    const again = decideScalingAdapter({ ...anAdapter({ replicas: 4 }), ...(first.status === undefined ? {} : { status: first.status }) }, scaled, new Date('2026-12-01T10:00:00Z'));
    expect(again).toEqual({ status: first.status, events: [] });
  });
});
