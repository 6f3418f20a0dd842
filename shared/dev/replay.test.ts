import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { parse } from 'yaml';
import { FIELD_MANAGER_RECONCILE, parseDgd } from '../api/index.js';
import type { KubeObject } from '../kube/index.js';
import { defaultConfig } from '../runtime/index.js';
import reconcile, { depsWithKube } from '../../functions/reconcile/index.js';
import { repoRoot } from '../../test/support/paths.js';
import { replayEvents } from './replay.js';

const NOW = new Date('2026-11-29T12:00:00Z');
// Captured with: dynamo-fn dev --apply examples/vllm-aggregated.yaml --wait --capture <file>
const captured = readFileSync(resolve(repoRoot, 'test/fixtures/replay/qwen3-agg.events.jsonl'), 'utf8').split('\n');
const parsed = parseDgd(parse(readFileSync(resolve(repoRoot, 'examples/vllm-aggregated.yaml'), 'utf8')));
if (!parsed.ok) throw new Error('example does not parse');
const state = [parsed.dgd as unknown as KubeObject];

function replay(lines: readonly string[]) {
  return replayEvents({ routes: reconcile.routes, depsWithKube, fieldManager: FIELD_MANAGER_RECONCILE }, state, lines, {
    config: defaultConfig(),
    log: pino({ level: 'silent' }),
    now: () => NOW,
  });
}

describe('replay of captured events (DESIGN.md "Capture and replay")', () => {
  it('prints the writes of the add event, and none for the status update it caused (level-triggered, idempotent)', async () => {
    const steps = await replay(captured);
    expect(steps.map((s) => [s.line, s.eventType, s.objects, s.outcome])).toEqual([
      [1, 'dev.knative.apiserver.ref.add', ['inference/qwen3-agg'], 'Done'],
      [2, 'dev.knative.apiserver.ref.update', ['inference/qwen3-agg'], 'Done'],
    ]);
    const first = steps[0]?.writes.map((w) => (w.verb === 'createEvent' ? `createEvent ${w.event.reason}` : w.verb === 'delete' ? 'delete' : `${w.verb} ${w.object.kind}/${w.object.metadata.name}`));
    expect(first).toEqual([
      'apply PodCliqueSet/qwen3-agg',
      // The Kubernetes discovery identity (default backend kubernetes; upstream reconcileK8sDiscoveryResources).
      'apply Role/qwen3-agg-k8s-service-discovery-role',
      'apply RoleBinding/qwen3-agg-k8s-service-discovery-binding',
      'apply Service/qwen3-agg-frontend',
      'apply Service/qwen3-agg-worker',
      'apply ServiceAccount/qwen3-agg-k8s-service-discovery',
      'applyStatus DynamoGraphDeployment/qwen3-agg',
      'createEvent some_resources_are_not_ready',
    ]);
    expect(steps[1]?.writes).toEqual([]);
  });

  it('reports a malformed line as Rejected and goes on', async () => {
    const steps = await replay(['{"not": "a cloudevent"}', captured[0] ?? '']);
    expect(steps.map((s) => s.outcome)).toEqual(['Rejected', 'Done']);
  });

  it('replays a resync (PingSource) event over every DGD in the state', async () => {
    const ping = JSON.stringify({ specversion: '1.0', id: 'ping-1', type: 'dev.knative.sources.ping', source: '/apis/v1/namespaces/dynamo-system/pingsources/dynamo-dgd-resync', kind: 'DynamoGraphDeployment', data: {} });
    const steps = await replay([ping]);
    expect(steps.map((s) => [s.objects, s.outcome])).toEqual([[['inference/qwen3-agg'], 'Done']]);
    expect(steps[0]?.writes.length).toBe(8);
  });
});
