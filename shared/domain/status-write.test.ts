/**
 * The no-write decision of a status (issue 17 item 3: "A pass that finds nothing to change writes
 * nothing"; unchanged: no write; a changed field: a write naming exactly what changed).
 */
import { describe, expect, it } from 'vitest';
import { decideStatusWrite, type StatusOwnership, type StatusWrite } from './status-write.js';

const T1 = '2026-12-01T08:00:00Z';
const T2 = '2026-12-01T09:00:00Z';
const completed = (reason: string, lastTransitionTime = T1) => ({ type: 'Completed', status: 'False', reason, message: `m ${reason}`, observedGeneration: 1, lastTransitionTime });
const published = (lastTransitionTime = T1) => ({ type: 'Published', status: 'True', reason: 'PublicationSucceeded', message: 'published 2 Candidates', lastTransitionTime });
const RUN: StatusOwnership = { fields: ['observedGeneration', 'phase', 'conditions', 'startTime', 'completionTime', 'jobRef'], conditionTypes: ['Completed'] };

interface Row {
  readonly name: string;
  readonly reason: string;
  readonly input: { readonly stored: unknown; readonly computed: Record<string, unknown>; readonly owned?: StatusOwnership };
  readonly want: StatusWrite;
}

const rows: readonly Row[] = [
  {
    name: 'the same status: no write',
    reason: 'a pass that finds nothing to change writes nothing',
    input: { stored: { phase: 'Running', observedGeneration: 1, conditions: [completed('EvaluatingCandidates')] }, computed: { phase: 'Running', observedGeneration: 1, conditions: [completed('EvaluatingCandidates')] } },
    want: { kind: 'Unchanged' },
  },
  {
    name: 'only lastTransitionTime differs: no write',
    reason: 'meta.SetStatusCondition moves lastTransitionTime only with the condition status: alone it is churn, not a change',
    input: { stored: { conditions: [completed('EvaluatingCandidates', T1)] }, computed: { conditions: [completed('EvaluatingCandidates', T2)] } },
    want: { kind: 'Unchanged' },
  },
  {
    name: 'conditions in another order: no write',
    reason: 'conditions are a list keyed by type (DESIGN.md "Writes")',
    input: { stored: { conditions: [published(), completed('JobPending')] }, computed: { conditions: [completed('JobPending'), published()] } },
    want: { kind: 'Unchanged' },
  },
  {
    name: 'an undefined field is an absent one: no write',
    reason: 'JSON drops undefined: the API server never stores it',
    input: { stored: { phase: 'Running' }, computed: { phase: 'Running', completionTime: undefined } },
    want: { kind: 'Unchanged' },
  },
  {
    name: 'no stored status and an empty computed one: no write',
    reason: 'nothing to change',
    input: { stored: undefined, computed: {} },
    want: { kind: 'Unchanged' },
  },
  {
    name: 'one changed field: a write naming exactly that field',
    reason: 'a changed field: a write of exactly what changed',
    input: { stored: { phase: 'Profiling', observedGeneration: 1, deploymentInfo: { replicas: 2, availableReplicas: 1 } }, computed: { phase: 'Profiling', observedGeneration: 1, deploymentInfo: { replicas: 2, availableReplicas: 2 } } },
    want: { kind: 'Changed', changed: ['status.deploymentInfo'] },
  },
  {
    name: 'a changed condition reason: a write naming that condition',
    reason: 'a changed field: a write of exactly what changed (conditions by type)',
    input: { stored: { phase: 'Running', conditions: [completed('JobPending')] }, computed: { phase: 'Running', conditions: [completed('EvaluatingCandidates')] } },
    want: { kind: 'Changed', changed: ['status.conditions[Completed]'] },
  },
  {
    name: 'a field the whole-status writer no longer sets: a write (server-side apply removes it)',
    reason: 'the profile function owns the whole v1beta1 status; draft.clear(profilingPhase) must reach the API server',
    input: { stored: { phase: 'Deploying', profilingPhase: 'Done' }, computed: { phase: 'Deploying' } },
    want: { kind: 'Changed', changed: ['status.profilingPhase'] },
  },
  {
    name: 'another writer\'s fields and conditions are not compared',
    reason: 'the Run logic owns phase and Completed; the publisher owns candidateRefs, progress and Published',
    input: { stored: { phase: 'Running', candidateRefs: [{ name: 'c1' }], conditions: [completed('JobPending'), published()] }, computed: { phase: 'Running', conditions: [completed('JobPending')] }, owned: RUN },
    want: { kind: 'Unchanged' },
  },
  {
    name: 'an owned field absent from the computed status but stored: a write',
    reason: 'server-side apply removes an owned field left out; the decision must send that',
    input: { stored: { phase: 'Running', jobRef: { name: 'r-aisimulate' }, conditions: [completed('JobPending')] }, computed: { phase: 'Running', conditions: [completed('JobPending')] }, owned: RUN },
    want: { kind: 'Changed', changed: ['status.jobRef'] },
  },
  {
    name: 'several changes: all named, sorted',
    reason: 'a write of exactly what changed',
    input: { stored: { phase: 'Running', conditions: [completed('JobPending')] }, computed: { phase: 'Failed', completionTime: T2, conditions: [{ ...completed('JobFailed'), status: 'True' }] }, owned: RUN },
    want: { kind: 'Changed', changed: ['status.completionTime', 'status.conditions[Completed]', 'status.phase'] },
  },
];

describe('decideStatusWrite', () => {
  it.each(rows)('$name', ({ input, want }) => {
    expect(decideStatusWrite(input.stored, input.computed, input.owned)).toEqual(want);
  });

  it('is pure: frozen inputs, the same answer twice', () => {
    const row = rows[6];
    if (row === undefined) throw new Error('missing row');
    const stored = Object.freeze(structuredClone(row.input.stored));
    const computed = Object.freeze(structuredClone(row.input.computed));
    expect(decideStatusWrite(stored, computed)).toEqual(decideStatusWrite(stored, computed));
  });
});
