import { describe, expect, it } from 'vitest';
import { deepFreeze } from '../../../test/support/builders.js';
import { RUN_UID } from '../../../test/support/v1beta2-builders.js';
import { readRunOutput, runOutputConfigMapName, type RunOutput } from './run-output.js';

const owned = { apiVersion: 'nvidia.com/v1beta2', kind: 'DynamoGraphDeploymentRun', name: 'qwen3-trace-replay-1', uid: RUN_UID, controller: true };

describe('the Run\'s results ConfigMap (run-output.ts; DESIGN.md "Writes": never adopt)', () => {
  const rows: { name: string; reason: string; input: Record<string, unknown> | undefined; want: RunOutput }[] = [
    { name: 'no ConfigMap yet: Missing', reason: 'the output step runs after AISimulate', input: undefined, want: { kind: 'Missing' } },
    {
      name: 'controlled by the Run: its recommendation.json',
      reason: 'the output step writes a controller reference to the Run',
      input: { metadata: { name: 'qwen3-trace-replay-1-aisimulate-output', ownerReferences: [owned] }, data: { 'recommendation.json': '{"candidates":[]}' } },
      want: { kind: 'Found', recommendationJson: '{"candidates":[]}' },
    },
    {
      name: 'a ConfigMap of that name the Run does not control: NotOurs, never read',
      reason: 'an object we did not create is not adopted',
      input: { metadata: { name: 'qwen3-trace-replay-1-aisimulate-output' }, data: { 'recommendation.json': '{"candidates":[]}' } },
      want: { kind: 'NotOurs' },
    },
    {
      name: 'controlled by another Run (another uid): NotOurs',
      reason: 'a Run of the same name recreated has a new uid',
      input: { metadata: { name: 'x', ownerReferences: [{ ...owned, uid: 'other' }] }, data: { 'recommendation.json': '{}' } },
      want: { kind: 'NotOurs' },
    },
    { name: 'ours without the key: Missing', reason: 'only recommendation.json is read', input: { metadata: { name: 'x', ownerReferences: [owned] }, data: {} }, want: { kind: 'Missing' } },
  ];
  it.each(rows)('$name', ({ input, want }) => {
    expect(readRunOutput(input === undefined ? undefined : deepFreeze(input), RUN_UID)).toEqual(want);
  });

  it('is named <run>-aisimulate-output, shortened with a hash to the 253-character name limit', () => {
    expect(runOutputConfigMapName('qwen3-trace-replay-1')).toBe('qwen3-trace-replay-1-aisimulate-output');
    const long = runOutputConfigMapName(`${'r'.repeat(250)}-1`);
    expect(long).toHaveLength(253);
    expect(long).toMatch(/^r+-[0-9a-f]{4}$/);
  });
});
