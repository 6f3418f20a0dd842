/**
 * Replay benchmark (not a test): the functions over captured-style events, in memory
 * (`replayEvents` with `replayFunctions()`, as `dynamo-fn replay` runs them), beside decoding the
 * same event lines alone (the least a replay does per event), in one run: both warmed up, then
 * timed in turn for five rounds in CPU time, medians reported. The events are Reference-mode updates of 50
 * DGDs (examples/vllm-aggregated.yaml renamed), round-robin; the first pass applies every
 * PodCliqueSet and Service, later ones find nothing to change (the steady state of a resync).
 * Aim (issue 17 item 4): replay at least half the rate of decoding the same events alone.
 *
 * Usage: npm run bench:replay [-- --events N]
 * @module
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { parse as parseYaml } from 'yaml';
import { replayFunctions } from '../shared/cli/replay.js';
import { replayEvents } from '../shared/dev/replay.js';
import type { KubeObject } from '../shared/kube/index.js';
import { decodeEvent, defaultConfig } from '../shared/runtime/index.js';
import { median, renderTable } from './table.js';

const DGDS = 50;

/** This process's CPU time (user + system), in seconds. */
function cpuSeconds(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}
const ROUNDS = 5;

function eventLine(index: number, name: string): string {
  return JSON.stringify({
    specversion: '1.0',
    id: `event-${index}`,
    source: 'https://10.96.0.1:443',
    type: 'dev.knative.apiserver.ref.update',
    subject: `/apis/nvidia.com/v1beta1/namespaces/inference/dynamographdeployments/${name}`,
    datacontenttype: 'application/json',
    data: { apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', name, namespace: 'inference' },
    kind: 'DynamoGraphDeployment',
    apiversion: 'nvidia.com/v1beta1',
    name,
    namespace: 'inference',
  });
}

export async function runReplayBench(events: number): Promise<string> {
  const example = parseYaml(readFileSync(new URL('../examples/vllm-aggregated.yaml', import.meta.url), 'utf8')) as KubeObject;
  const state: KubeObject[] = Array.from({ length: DGDS }, (_, index) => ({
    ...example,
    metadata: { ...example.metadata, name: `graph-${index}`, namespace: 'inference', uid: `00000000-0000-0000-0000-${String(index).padStart(12, '0')}`, generation: 1, resourceVersion: '1' },
  }));
  const lines = Array.from({ length: events }, (_, index) => eventLine(index, `graph-${index % DGDS}`));
  const now = new Date('2026-12-01T00:00:00Z');

  const decodeAll = () => {
    for (const line of lines) decodeEvent({ headers: { 'content-type': 'application/cloudevents+json' }, body: Buffer.from(line) });
  };
  const replayAll = (some: readonly string[]) => replayEvents(replayFunctions(), state, some, { config: defaultConfig(), log: pino({ level: 'silent' }), now: () => now });

  // Warm both paths up first (the JIT), then time them in turn, five rounds; medians are
  // reported. Time is this process's CPU time: on a shared machine, wall time mostly measures
  // the other processes.
  decodeAll();
  await replayAll(lines.slice(0, Math.min(lines.length, 5 * DGDS)));
  const decodeRuns: number[] = [];
  const replayRuns: number[] = [];
  let steps: Awaited<ReturnType<typeof replayAll>> = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const decodeStarted = cpuSeconds();
    decodeAll();
    decodeRuns.push(cpuSeconds() - decodeStarted);
    const replayStarted = cpuSeconds();
    steps = await replayAll(lines);
    replayRuns.push(cpuSeconds() - replayStarted);
  }
  const decodeSeconds = median(decodeRuns);
  const replaySeconds = median(replayRuns);
  const notDone = steps.filter((step) => step.outcome !== 'Done');
  if (notDone.length > 0) throw new Error(`replay bench: ${notDone.length} events did not end Done, e.g. ${JSON.stringify(notDone[0])}`);

  const rate = events / replaySeconds;
  const decodeRate = events / decodeSeconds;
  return renderTable(`Replay (${events} events over ${DGDS} DGDs, every function in memory as dynamo-fn replay runs them; median of ${ROUNDS} rounds)`, [
    {
      name: 'replay events per CPU-second',
      value: rate,
      unit: 'events/CPU-s',
      baseline: { name: 'decodeEvent alone', value: decodeRate },
      aim: { text: '>= 0.5x decodeEvent', isMet: rate >= 0.5 * decodeRate },
    },
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { events: { type: 'string', default: '5000' } } });
  process.stdout.write(await runReplayBench(Number(values.events)));
}
