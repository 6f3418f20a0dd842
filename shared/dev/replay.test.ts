import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { parse } from 'yaml';
import { FIELD_MANAGER_RECONCILE, parseDgd } from '../api/index.js';
import type { KubeObject } from '../kube/index.js';
import { defaultConfig } from '../runtime/index.js';
import reconcile, { depsWithKube } from '../../functions/reconcile/index.js';
import { repoRoot } from '../../test/support/paths.js';
import { NO_STATE_NOTE, replayFunctions, run } from '../cli/replay.js';
import { readKubeObjects } from '../cli/yaml-input.js';
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
      'apply Service/qwen3-agg-frontend',
      'apply Service/qwen3-agg-worker',
      'apply ServiceAccount/qwen3-agg-k8s-service-discovery',
      // Applied after its Role: the RBAC escalation check resolves the Role a RoleBinding names.
      'apply RoleBinding/qwen3-agg-k8s-service-discovery-binding',
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

describe('replay covers every function and follows the capture (issue 18 item 4)', () => {
  const fixture = (name: string) => readFileSync(resolve(repoRoot, 'test/fixtures/replay', name), 'utf8').split('\n');
  const dgdrState = readKubeObjects(readFileSync(resolve(repoRoot, 'test/fixtures/replay/qwen3-rapid.state.yaml'), 'utf8'), 'state').objects.map(({ object }) => object as unknown as KubeObject);
  const replayAll = (initial: readonly KubeObject[], lines: readonly string[], isReusingQuietPasses = true) =>
    replayEvents(replayFunctions(), initial, lines, { config: defaultConfig(), log: pino({ level: 'silent' }), now: () => NOW, isReusingQuietPasses });
  const summary = (steps: Awaited<ReturnType<typeof replayAll>>) =>
    steps.map((s) => ({
      line: s.line,
      objects: s.objects,
      functions: s.functions,
      outcome: s.outcome,
      notes: s.notes,
      writes: s.writes.map((w) => (w.verb === 'createEvent' ? `createEvent ${w.event.reason}` : w.verb === 'delete' ? `delete ${w.ref.kind}/${w.ref.name}` : `${w.verb} ${w.object.kind}/${w.object.metadata.name}`)),
    }));

  it('applies a captured delete to its state, so the restore of a deleted child is the write it replays (not "no writes")', async () => {
    // Line 4: the Resource-mode delete of the frontend Service (children are watched in Resource mode, infra/chart/templates/reconcile/children.yaml).
    const steps = summary(await replayAll(state, fixture('qwen3-agg-child-deleted.events.jsonl')));
    expect(steps.slice(1)).toEqual([
      { line: 2, objects: ['inference/qwen3-agg'], functions: ['reconcile', 'profile'], outcome: 'Done', notes: [], writes: [] },
      { line: 3, objects: ['inference/qwen3-agg'], functions: ['reconcile', 'profile'], outcome: 'Done', notes: [], writes: [] },
      {
        line: 4,
        objects: ['inference/qwen3-agg-frontend'],
        functions: ['reconcile'],
        outcome: 'Done',
        notes: ['deleted Service inference/qwen3-agg-frontend from the state, as the event says the API server did'],
        writes: ['apply Service/qwen3-agg-frontend'],
      },
      { line: 5, objects: ['inference/qwen3-agg'], functions: ['reconcile', 'profile'], outcome: 'Done', notes: [], writes: [] },
    ]);
  });

  it('routes each event to every function that takes its kind: DGDR to profile, Job and claim to profile and cleanup, DGD to reconcile and profile; each names its object', async () => {
    const steps = summary(await replayAll(dgdrState, fixture('qwen3-rapid.events.jsonl')));
    expect(steps.map((s) => [s.line, s.objects, s.functions, s.outcome])).toEqual([
      [1, ['default/qwen3-rapid'], ['profile'], 'Done'],
      [2, ['default/profile-qwen3-rapid'], ['profile', 'cleanup'], 'Done'],
      [3, ['default/traces'], ['profile', 'cleanup'], 'Done'],
      [4, ['inference/not-in-state'], ['reconcile', 'profile'], 'Done'],
      [5, ['default/qwen3-rapid'], ['profile'], 'Done'],
      [6, ['default/qwen3-rapid'], ['profile'], 'Done'],
    ]);
    // A DGDR with its hardware found starts profiling: the profiling Job, its identity, Pending status (upstream DGDR controller).
    expect(steps[0]?.writes).toEqual([
      'replace DynamoGraphDeploymentRequest/qwen3-rapid',
      'apply ServiceAccount/dgdr-profiling-job',
      'apply RoleBinding/dgdr-profiling-job',
      'apply Job/profile-qwen3-rapid',
      'applyStatus DynamoGraphDeploymentRequest/qwen3-rapid',
      'createEvent Initialized',
    ]);
  });

  it('keeps the writes it prints: the Job profile created on line 1 is in the state when line 2 names it', async () => {
    const steps = summary(await replayAll(dgdrState, fixture('qwen3-rapid.events.jsonl')));
    expect(steps[1]?.notes).toEqual([]);
    expect(steps[1]?.writes).toEqual(['applyStatus DynamoGraphDeploymentRequest/qwen3-rapid', 'createEvent ProfilingJobCreated']);
  });

  it('says so when an event names an object its state does not hold, and when a delete names one', async () => {
    const steps = summary(await replayAll(dgdrState, fixture('qwen3-rapid.events.jsonl')));
    expect(steps[2]?.notes).toEqual(['PersistentVolumeClaim default/traces is not in the state, so the functions find it gone (give it with --state)']);
    expect(steps[3]?.notes).toEqual(['DynamoGraphDeployment inference/not-in-state is not in the state, so the functions find it gone (give it with --state)']);
    expect(steps[5]?.notes).toEqual(['deleted DynamoGraphDeploymentRequest default/qwen3-rapid from the state, as the event says the API server did']);
    const again = summary(await replayAll([], [fixture('qwen3-rapid.events.jsonl')[5] ?? '']));
    expect(again[0]?.notes).toEqual(['DynamoGraphDeploymentRequest default/qwen3-rapid was deleted, and the state did not hold it']);
  });

  it('reports a quiet pass it does not run again exactly as running it would (level-triggered: same reads, same clock, same pass)', async () => {
    const lines = [...captured, ...captured, ...fixture('qwen3-agg-child-deleted.events.jsonl'), ...captured];
    expect(summary(await replayAll(state, lines))).toEqual(summary(await replayAll(state, lines, false)));
    // A Reference-mode delete carries no owner, so only the DGD's next pass can notice the gone Service: it must run again.
    const referenceDelete = (fixture('qwen3-agg-child-deleted.events.jsonl')[3] ?? '').replace('"dev.knative.apiserver.resource.delete"', '"dev.knative.apiserver.ref.delete"');
    const afterDelete = [...captured, captured[1] ?? '', referenceDelete, captured[1] ?? ''];
    const reused = summary(await replayAll(state, afterDelete));
    expect(reused).toEqual(summary(await replayAll(state, afterDelete, false)));
    expect(reused[4]?.writes).toEqual(['apply Service/qwen3-agg-frontend']);
    const dgdrLines = [...fixture('qwen3-rapid.events.jsonl').slice(0, 3), ...fixture('qwen3-rapid.events.jsonl').slice(0, 5)];
    expect(summary(await replayAll(dgdrState, dgdrLines))).toEqual(summary(await replayAll(dgdrState, dgdrLines, false)));
  });
});

describe('dynamo-fn replay (shared/cli/replay.ts)', () => {
  it('with no --state, says why every event finds nothing instead of only printing "no writes"', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => out.push(String(chunk)) > 0);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => err.push(String(chunk)) > 0);
    try {
      const code = await run(['--now', '2026-11-29T12:00:00Z', resolve(repoRoot, 'test/fixtures/replay/qwen3-agg.events.jsonl')]);
      expect(code).toBe(0);
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
    }
    expect(err.join('')).toBe(`${NO_STATE_NOTE}\n`);
    expect(out.join('')).toContain('# DynamoGraphDeployment inference/qwen3-agg is not in the state, so the functions find it gone (give it with --state)\n# no writes\n');
    expect(out.join('')).toContain('# line 1: dev.knative.apiserver.ref.add inference/qwen3-agg [reconcile, profile] -> Done\n');
  });
});
