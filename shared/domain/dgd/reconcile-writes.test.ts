import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../../test/support/builders.js';
import { describeApplyDrift } from './apply-drift.js';
import { decideDgdWrites, type DgdWrites } from './reconcile-writes.js';
import type { DgdDesired, DgdObserved, DgdStatusIntent } from './reconcile-dgd.js';
import type { RenderedObject } from './render.js';

const UID = 'u-1';
const OWNER = { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name: 'g', uid: UID, controller: true, blockOwnerDeletion: true };
const OWNER_FIELDS = { [`k:{"uid":"${UID}"}`]: { '.': {}, 'f:apiVersion': {}, 'f:blockOwnerDeletion': {}, 'f:controller': {}, 'f:kind': {}, 'f:name': {}, 'f:uid': {} } };

/** The rendered Service of component `frontend`: only the fields we set. */
function aServiceIntent(overrides: { labels?: Record<string, string>; port?: number } = {}): RenderedObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'g-frontend', namespace: 'ns', labels: overrides.labels ?? { 'nvidia.com/dynamo-component': 'frontend' }, ownerReferences: [OWNER] },
    spec: { selector: { 'nvidia.com/dynamo-component': 'frontend' }, ports: [{ name: 'http', port: overrides.port ?? 8000, targetPort: 8000 }] },
  };
}

/** Our Apply entry for the Service intent above, as the API server records it (ports keyed by port and the defaulted protocol). */
const SERVICE_FIELDS = {
  'f:metadata': { 'f:labels': { 'f:nvidia.com/dynamo-component': {} }, 'f:ownerReferences': OWNER_FIELDS },
  'f:spec': {
    'f:selector': { 'f:nvidia.com/dynamo-component': {} },
    'f:ports': { 'k:{"port":8000,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {}, 'f:targetPort': {} } },
  },
};

/** The Service as stored after our apply: with the API server's defaults and other managers' entries. */
function aStoredService(overrides: { port?: number; extraManagers?: Record<string, unknown>[]; ours?: Record<string, unknown> | undefined; annotations?: Record<string, string> } = {}): Record<string, unknown> {
  const ours = 'ours' in overrides ? overrides.ours : SERVICE_FIELDS;
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: 'g-frontend',
      namespace: 'ns',
      uid: 's-1',
      resourceVersion: '7',
      labels: { 'nvidia.com/dynamo-component': 'frontend' },
      ...(overrides.annotations === undefined ? {} : { annotations: overrides.annotations }),
      ownerReferences: [OWNER],
      managedFields: [...(ours === undefined ? [] : [{ manager: 'dynamo-reconcile', operation: 'Apply', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: ours }]), ...(overrides.extraManagers ?? [])],
    },
    spec: {
      clusterIP: '10.0.0.12',
      clusterIPs: ['10.0.0.12'],
      type: 'ClusterIP',
      sessionAffinity: 'None',
      selector: { 'nvidia.com/dynamo-component': 'frontend' },
      ports: [{ name: 'http', port: overrides.port ?? 8000, targetPort: 8000, protocol: 'TCP' }],
    },
  };
}

const READY = { type: 'Ready', status: 'True' as const, reason: 'all_resources_are_ready', message: 'All resources are ready', lastTransitionTime: '2026-11-29T12:00:00Z', observedGeneration: 1 };
const STATUS: DgdStatusIntent = { observedGeneration: 1, state: 'successful', conditions: [READY], components: { frontend: { replicas: 1, readyReplicas: 1 } } };
const STATUS_FIELDS = {
  'f:status': {
    'f:observedGeneration': {},
    'f:state': {},
    'f:components': { 'f:frontend': { '.': {}, 'f:replicas': {}, 'f:readyReplicas': {} } },
    'f:conditions': { 'k:{"type":"Ready"}': { '.': {}, 'f:type': {}, 'f:status': {}, 'f:reason': {}, 'f:message': {}, 'f:lastTransitionTime': {}, 'f:observedGeneration': {} } },
  },
};

function aParent(status: DgdStatusIntent | null = STATUS): Record<string, unknown> {
  return {
    apiVersion: 'nvidia.com/v1beta1',
    kind: 'DynamoGraphDeployment',
    metadata: {
      name: 'g',
      namespace: 'ns',
      uid: UID,
      generation: 1,
      managedFields: [
        { manager: 'kubectl', operation: 'Apply', apiVersion: 'nvidia.com/v1beta1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:components': {} } } },
        ...(status === null ? [] : [{ manager: 'dynamo-reconcile', operation: 'Apply', apiVersion: 'nvidia.com/v1beta1', subresource: 'status', fieldsType: 'FieldsV1', fieldsV1: STATUS_FIELDS }]),
      ],
    },
    spec: { components: [] },
    ...(status === null ? {} : { status }),
  };
}

function anObserved(parent: Record<string, unknown>, services: Record<string, unknown>[]): DgdObserved {
  return deepFreeze({
    parent,
    children: {
      PodCliqueSet: new Map(),
      Service: new Map(services.map((s) => [(s['metadata'] as { name: string }).name, s])),
      PodClique: new Map(),
      PodCliqueScalingGroup: new Map(),
    },
  });
}

const FLIPPED_READY = { ...READY, status: 'False' as const, reason: 'some_resources_are_not_ready', message: 'frontend: pods_not_ready', lastTransitionTime: '2026-11-29T12:05:00Z' };
const AN_EVENT = { name: 'g.0123456789abcdef', type: 'Normal' as const, reason: 'some_resources_are_not_ready', note: 'frontend: pods_not_ready' };

interface Row {
  readonly name: string;
  readonly reason: string;
  readonly input: { readonly observed: DgdObserved; readonly desired: Pick<DgdDesired, 'apply' | 'status' | 'events'> };
  readonly want: DgdWrites;
}

const rows: Row[] = [
  {
    name: 'unchanged children and status: no write, no Event',
    reason: 'issue 17 item 3: a pass that finds nothing to change writes nothing (the API server defaulted clusterIP, type and the port protocol: not ours, ignored)',
    input: { observed: anObserved(aParent(), [aStoredService()]), desired: { apply: [aServiceIntent()], status: STATUS, events: [] } },
    want: { apply: [], status: undefined, events: [], reasons: [] },
  },
  {
    name: 'a field another manager added (an annotation by kubectl): no write',
    reason: 'server-side apply: fields others own are not ours to compare',
    input: {
      observed: anObserved(aParent(), [aStoredService({ annotations: { note: 'hi' }, extraManagers: [{ manager: 'kubectl', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:note': {} } } } }] })]),
      desired: { apply: [aServiceIntent()], status: STATUS, events: [] },
    },
    want: { apply: [], status: undefined, events: [], reasons: [] },
  },
  {
    name: 'a hand edit of a field we set (kubectl took the port): that Service is applied, whole, and the status is not written',
    reason: 'issue 17 item 3: a hand edit to one of the fields this function owns is still put back; the write is of exactly what changed',
    input: {
      observed: anObserved(aParent(), [
        aStoredService({
          port: 9000,
          ours: { ...SERVICE_FIELDS, 'f:spec': { 'f:selector': { 'f:nvidia.com/dynamo-component': {} } } },
          extraManagers: [{ manager: 'kubectl-edit', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': { 'f:ports': { 'k:{"port":9000,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {}, 'f:targetPort': {} } } } } }],
        }),
      ]),
      desired: { apply: [aServiceIntent()], status: STATUS, events: [] },
    },
    want: { apply: [aServiceIntent()], status: undefined, events: [], reasons: [{ kind: 'Service', name: 'g-frontend', drift: 'spec.ports: not owned' }] },
  },
  {
    name: 'a value changed under our ownership (another apply with force would show the same): the Service is applied',
    reason: 'issue 17 item 3: compare the rendered fields with the stored ones',
    input: { observed: anObserved(aParent(), [aStoredService()]), desired: { apply: [aServiceIntent({ labels: { 'nvidia.com/dynamo-component': 'frontend-2' } })], status: STATUS, events: [] } },
    want: { apply: [aServiceIntent({ labels: { 'nvidia.com/dynamo-component': 'frontend-2' } })], status: undefined, events: [], reasons: [{ kind: 'Service', name: 'g-frontend', drift: 'metadata.labels.nvidia.com/dynamo-component: changed' }] },
  },
  {
    name: 'a field we own that the render no longer sets: the Service is applied, so server-side apply removes it',
    reason: 'server-side apply removes fields a manager stops setting: skipping the apply would leave the old label',
    input: {
      observed: anObserved(aParent(), [aStoredService({ ours: { ...SERVICE_FIELDS, 'f:metadata': { ...SERVICE_FIELDS['f:metadata'], 'f:labels': { 'f:nvidia.com/dynamo-component': {}, 'f:old': {} } } } })]),
      desired: { apply: [aServiceIntent()], status: STATUS, events: [] },
    },
    want: { apply: [aServiceIntent()], status: undefined, events: [], reasons: [{ kind: 'Service', name: 'g-frontend', drift: 'metadata.labels.old: owned but no longer set' }] },
  },
  {
    name: 'a child that does not exist: it is applied',
    reason: 'issue 17 item 3: an absent child is a change',
    input: { observed: anObserved(aParent(), []), desired: { apply: [aServiceIntent()], status: STATUS, events: [] } },
    want: { apply: [aServiceIntent()], status: undefined, events: [], reasons: [{ kind: 'Service', name: 'g-frontend', drift: 'absent' }] },
  },
  {
    name: 'a child we never applied (no managedFields entry of ours): it is applied',
    reason: 'the fields are not ours until we apply them',
    input: { observed: anObserved(aParent(), [aStoredService({ ours: undefined })]), desired: { apply: [aServiceIntent()], status: STATUS, events: [] } },
    want: { apply: [aServiceIntent()], status: undefined, events: [], reasons: [{ kind: 'Service', name: 'g-frontend', drift: 'not applied by dynamo-reconcile' }] },
  },
  {
    name: 'a changed status (Ready flipped): only the status and its Event are written',
    reason: 'issue 17 item 3: status is written only when the computed status differs from the stored one',
    input: { observed: anObserved(aParent(), [aStoredService()]), desired: { apply: [aServiceIntent()], status: { ...STATUS, state: 'pending', conditions: [FLIPPED_READY] }, events: [AN_EVENT] } },
    want: { apply: [], status: { ...STATUS, state: 'pending', conditions: [FLIPPED_READY] }, events: [AN_EVENT], reasons: [{ kind: 'DynamoGraphDeployment', name: 'g', drift: 'status: status.state: changed' }] },
  },
  {
    name: 'a component count changed: the status is written',
    reason: 'status reports the observed children (upstream-notes/dgd.md §2.4)',
    input: { observed: anObserved(aParent(), [aStoredService()]), desired: { apply: [aServiceIntent()], status: { ...STATUS, components: { frontend: { replicas: 1, readyReplicas: 0 } } }, events: [] } },
    want: { apply: [], status: { ...STATUS, components: { frontend: { replicas: 1, readyReplicas: 0 } } }, events: [], reasons: [{ kind: 'DynamoGraphDeployment', name: 'g', drift: 'status: status.components.frontend.readyReplicas: changed' }] },
  },
  {
    name: 'a status field we wrote before and no longer report (components dropped): the status is written',
    reason: 'server-side apply removes a field its manager stops setting',
    input: { observed: anObserved(aParent(), [aStoredService()]), desired: { apply: [aServiceIntent()], status: { observedGeneration: 1, state: 'successful', conditions: [READY] }, events: [] } },
    want: { apply: [], status: { observedGeneration: 1, state: 'successful', conditions: [READY] }, events: [], reasons: [{ kind: 'DynamoGraphDeployment', name: 'g', drift: 'status: status.components: owned but no longer set' }] },
  },
  {
    name: 'a DGD never reported on: the status is written',
    reason: 'no status of ours yet',
    input: { observed: anObserved(aParent(null), [aStoredService()]), desired: { apply: [aServiceIntent()], status: STATUS, events: [AN_EVENT] } },
    want: { apply: [], status: STATUS, events: [AN_EVENT], reasons: [{ kind: 'DynamoGraphDeployment', name: 'g', drift: 'status: not applied by dynamo-reconcile' }] },
  },
];

describe('decideDgdWrites: a pass that finds nothing to change writes nothing (issue 17 item 3)', () => {
  it.each(rows)('$name', ({ input, want }) => {
    expect(decideDgdWrites(input.observed, input.desired)).toEqual(want);
  });

  it('the same input gives the same output, and a frozen input does not throw', () => {
    for (const row of rows) expect(decideDgdWrites(row.input.observed, row.input.desired)).toEqual(decideDgdWrites(row.input.observed, row.input.desired));
  });
});

describe('describeApplyDrift: lists keyed by merge key, sets and atomic lists', () => {
  const owned = (fieldsV1: Record<string, unknown>) => [{ manager: 'm', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1 }];
  const stored = (spec: Record<string, unknown>, fieldsV1: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x', managedFields: owned(fieldsV1) }, spec });
  const intent = (spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'X', metadata: { name: 'x' }, spec });
  const ENV_FIELDS = { 'f:spec': { 'f:env': { 'k:{"name":"A"}': { '.': {}, 'f:name': {}, 'f:value': {} }, 'k:{"name":"B"}': { '.': {}, 'f:name': {}, 'f:value': {} } } } };
  const env = [{ name: 'A', value: '1' }, { name: 'B', value: '2' }];

  it.each([
    { name: 'keyed list in the same order: no-op', spec: { env }, storedSpec: { env }, fields: ENV_FIELDS, want: undefined },
    { name: 'keyed list reordered: an apply reorders it', spec: { env: [...env].reverse() }, storedSpec: { env }, fields: ENV_FIELDS, want: 'spec.env[1]: order changed' },
    { name: 'an element someone else added to a keyed list: no-op', spec: { env }, storedSpec: { env: [...env, { name: 'C', value: '3' }] }, fields: ENV_FIELDS, want: undefined },
    { name: 'an atomic list (args) edited: changed', spec: { args: ['a', 'b'] }, storedSpec: { args: ['a', 'x', 'b'] }, fields: { 'f:spec': { 'f:args': {} } }, want: 'spec.args: changed' },
    { name: 'an atomic list unchanged: no-op', spec: { args: ['a', 'b'] }, storedSpec: { args: ['a', 'b'] }, fields: { 'f:spec': { 'f:args': {} } }, want: undefined },
    { name: 'a set (v:) missing our value: changed', spec: { finalizers: ['a'] }, storedSpec: { finalizers: ['b'] }, fields: { 'f:spec': { 'f:finalizers': { 'v:"a"': {} } } }, want: 'spec.finalizers[0]: not owned or absent' },
    { name: 'an empty map we set leaves no field of its own: no-op', spec: { resources: {} }, storedSpec: {}, fields: { 'f:spec': {} }, want: undefined },
  ])('$name', ({ spec, storedSpec, fields, want }) => {
    expect(describeApplyDrift(intent(spec), stored(storedSpec, fields), 'm')).toBe(want);
  });
});
