/**
 * Replay benchmark (not a test): the reconcile function over captured-style events, in memory
 * (`replayEvents`, as `dynamo-fn replay` runs it), beside decoding the same event lines alone
 * (the least a replay does per event), in one run. The events are Reference-mode updates of 50
 * DGDs (examples/vllm-aggregated.yaml renamed), round-robin; the first pass applies every
 * PodCliqueSet and Service, later ones find nothing to change (the steady state of a resync).
 * Aim (issue 12): at least 20,000 events/s offline.
 *
 * Usage: npm run bench:replay [-- --events N]
 * @module
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { parse as parseYaml } from 'yaml';
import reconcile, { depsWithKube } from '../functions/reconcile/index.js';
import { FIELD_MANAGER_RECONCILE } from '../shared/api/index.js';
import { replayEvents } from '../shared/dev/replay.js';
import type { KubeObject } from '../shared/kube/index.js';
import { decodeEvent, defaultConfig } from '../shared/runtime/index.js';
import { renderTable } from './table.js';

const DGDS = 50;

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

  const decodeStarted = performance.now();
  for (const line of lines) decodeEvent({ headers: { 'content-type': 'application/cloudevents+json' }, body: Buffer.from(line) });
  const decodeSeconds = (performance.now() - decodeStarted) / 1000;

  const replayStarted = performance.now();
  const steps = await replayEvents({ routes: reconcile.routes, depsWithKube, fieldManager: FIELD_MANAGER_RECONCILE }, state, lines, {
    config: defaultConfig(),
    log: pino({ level: 'silent' }),
    now: () => now,
  });
  const replaySeconds = (performance.now() - replayStarted) / 1000;
  const notDone = steps.filter((step) => step.outcome !== 'Done');
  if (notDone.length > 0) throw new Error(`replay bench: ${notDone.length} events did not end Done, e.g. ${JSON.stringify(notDone[0])}`);

  const rate = events / replaySeconds;
  return renderTable(`Replay (${events} events over ${DGDS} DGDs, reconcile in memory)`, [
    {
      name: 'replay events/s',
      value: rate,
      unit: 'events/s',
      baseline: { name: 'decodeEvent alone', value: events / decodeSeconds },
      aim: { text: '>= 20000 events/s', isMet: rate >= 20_000 },
    },
  ]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { events: { type: 'string', default: '5000' } } });
  process.stdout.write(await runReplayBench(Number(values.events)));
}
