/**
 * The status rows computed from Knative Service / Revision and Deployment status (schemas:
 * ../shared/crds/knative/serving.knative.dev_service.yaml, _revision.yaml).
 */
import { describe, expect, it } from 'vitest';
import { CONTROL_PLANE_FUNCTIONS, knativeServiceStatus, progressLine, type KnativeService } from './index.js';

const reconcile = CONTROL_PLANE_FUNCTIONS[1] ?? CONTROL_PLANE_FUNCTIONS[0];
if (reconcile === undefined) throw new Error('no functions');

const aService = (overrides: Partial<KnativeService> = {}): KnativeService => ({
  metadata: { name: 'dynamo-reconcile', namespace: 'dynamo-system', generation: 2 },
  status: { observedGeneration: 2, conditions: [{ type: 'Ready', status: 'True' }], latestCreatedRevisionName: 'r-2', latestReadyRevisionName: 'r-1' },
  ...overrides,
});

describe('knativeServiceStatus', () => {
  const rows = [
    {
      name: 'scale comes from the latest ready Revision, the one serving (Revision status desiredReplicas/actualReplicas)',
      service: aService(),
      revisions: [
        { metadata: { name: 'r-1' }, status: { desiredReplicas: 2, actualReplicas: 2 } },
        { metadata: { name: 'r-2' }, status: { desiredReplicas: 1, actualReplicas: 0 } },
      ],
      want: { ready: 'True', reason: '', desiredScale: 2, actualScale: 2 },
    },
    {
      name: 'a status Knative computed for an older generation is not Ready yet (observedGeneration < generation)',
      service: aService({ metadata: { name: 'dynamo-reconcile', generation: 3 } }),
      revisions: [],
      want: { ready: 'Unknown', reason: 'OutdatedGeneration', desiredScale: undefined, actualScale: undefined },
    },
    {
      name: 'a Service Knative has not written status for yet reads Ready=Unknown',
      service: { metadata: { name: 'dynamo-reconcile' } },
      revisions: [],
      want: { ready: 'Unknown', reason: '', desiredScale: undefined, actualScale: undefined },
    },
  ];
  it.each(rows)('$name', ({ service, revisions, want }) => {
    const row = knativeServiceStatus(reconcile, service, revisions);
    expect({ ready: row.ready, reason: row.reason, desiredScale: row.desiredScale, actualScale: row.actualScale }).toEqual(want);
  });
});

describe('progressLine', () => {
  it('names the function, Ready, the reason with its message, and actual/desired scale', () => {
    const row = knativeServiceStatus(
      reconcile,
      aService({ status: { conditions: [{ type: 'Ready', status: 'False', reason: 'RevisionMissing', message: 'no ready Revision' }], latestCreatedRevisionName: 'r-1' } }),
      [{ metadata: { name: 'r-1' }, status: { desiredReplicas: 1, actualReplicas: 0 } }],
    );
    expect(progressLine(row)).toBe('reconcile: Ready=False (RevisionMissing: no ready Revision) scale 0/1');
  });
});
