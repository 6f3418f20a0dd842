/**
 * `dynamo-fn replay`: runs a function over captured events against a starting state, in
 * memory, and prints the writes it would make.
 * @module
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { DGD_KIND, FIELD_MANAGER_CLEANUP, FIELD_MANAGER_PROFILE, FIELD_MANAGER_PROFILE_PUBLISHER, FIELD_MANAGER_PROFILE_RUN, FIELD_MANAGER_RECONCILE, formatIssue, parseDgd } from '../api/index.js';
import { replayEvents, type ReplayableFunction, type ReplayStep } from '../dev/replay.js';
import type { KubeObject } from '../kube/index.js';
import { defaultConfig, type HandlerDeps } from '../runtime/index.js';
import cleanup, { depsWithKube as cleanupDepsWithKube } from '../../functions/cleanup/index.js';
import profile, { depsWithKube as profileDepsWithKube } from '../../functions/profile/index.js';
import reconcile, { depsWithKube as reconcileDepsWithKube } from '../../functions/reconcile/index.js';
import { readKubeObjects } from './yaml-input.js';

/** The `reportingInstance` of Events the profile function writes during a replay (no host name: output is reproducible). */
const REPLAY_INSTANCE = 'dynamo-fn-replay';

/**
 * The functions replay runs, in the order each event reaches them: reconcile, profile, cleanup
 * (admission is synchronous and is not delivered CloudEvents). Each writes the one in-memory
 * store under its own field managers, as on a cluster (profile: `dynamo-profile`, and its Runs'
 * and publisher's own). The profile function gets no environment (no OPERATOR_IMAGE, no
 * exporter templates), so replays do not depend on the shell they run in.
 */
export function replayFunctions(): readonly ReplayableFunction<HandlerDeps>[] {
  return [
    erased({ name: reconcile.name, routes: reconcile.routes, depsWithKube: (base, kube) => reconcileDepsWithKube(base, kube), fieldManager: FIELD_MANAGER_RECONCILE }),
    erased({
      name: profile.name,
      routes: profile.routes,
      depsWithKube: (base, kube) => ({
        ...profileDepsWithKube(base, kube, { K_REVISION: REPLAY_INSTANCE }),
        runKube: kube.as(FIELD_MANAGER_PROFILE_RUN),
        publisherKube: kube.as(FIELD_MANAGER_PROFILE_PUBLISHER),
      }),
      fieldManager: FIELD_MANAGER_PROFILE,
    }),
    erased({ name: cleanup.name, routes: cleanup.routes, depsWithKube: (base, kube) => cleanupDepsWithKube(base, kube), fieldManager: FIELD_MANAGER_CLEANUP }),
  ];
}

/** One function among others: replay hands each function's deps only to its own routes. */
function erased<D extends HandlerDeps>(fn: ReplayableFunction<D>): ReplayableFunction<HandlerDeps> {
  return fn as unknown as ReplayableFunction<HandlerDeps>;
}

/** What replay says when no `--state` was given (stderr, once, before the steps). */
export const NO_STATE_NOTE =
  'dynamo-fn replay: no --state given: replay starts from an empty API server, so an event that names an object finds it gone and writes nothing; give the objects the API server held before the first event with --state FILE';

export const summary = 'Replay captured events against a starting state and print the writes the functions would make';

export const usage = `Usage: dynamo-fn replay [options] EVENTS_FILE

Runs the functions' handlers (reconcile, profile and cleanup, each event going to every
function that takes its kind), in memory, over captured CloudEvents (structured mode, one
JSON object per line, as 'dynamo-fn dev --capture FILE' writes them) starting from the
objects in the --state files, and prints for each event the functions that took it, its
outcome and the writes that changed something (server-side applies, status applies,
deletes, Events) as a YAML stream. Nothing is sent anywhere.

The state follows the capture: a delete event removes the object it names, a Resource-mode
event stores the object it carries, and every printed write is kept, so later events see
what earlier ones did. An event that names an object the state does not hold says so.
A pass that changed nothing is not run again for the same event while nothing it read has
changed (it would change nothing again). DynamoGraphDeployments in the state may be
v1alpha1; they are converted to v1beta1 as the API server would store them.

Options:
  --state FILE              YAML objects the API server holds before the first event (repeatable)
  --now TIME                the clock, RFC 3339 (default: now); fix it for reproducible output
  --lpx-enabled             replay with the feature gate lpx.enabled=true
  --dgdr-v1beta2-enabled    replay with the feature gate dgdrV1Beta2.enabled=true
  --output FORMAT           yaml (default) or json (one JSON step per line)
  -h, --help                show this help

Exit status: 0 when every line was a CloudEvent; 1 when a line was malformed (it is
reported and replay goes on) or on a usage error.`;

/**
 * Reads the starting state. DGDs (v1alpha1 too) are stored as the API server would, in
 * v1beta1. Out: the objects, or every problem found (invalid YAML, objects without a name).
 */
async function loadState(files: readonly string[]): Promise<{ objects: KubeObject[]; errors: string[] }> {
  const objects: KubeObject[] = [];
  const errors: string[] = [];
  for (const file of files) {
    const input = readKubeObjects(await readFile(file, 'utf8'), file);
    errors.push(...input.errors);
    for (const { where, object } of input.objects) {
      const metadata = object['metadata'] as { name?: unknown; namespace?: unknown } | undefined;
      if (typeof object['apiVersion'] !== 'string' || typeof metadata?.name !== 'string' || metadata.name === '') {
        errors.push(`${where}: ${String(object['kind'])} needs apiVersion and metadata.name`);
        continue;
      }
      if (object['kind'] === DGD_KIND) {
        const parsed = parseDgd(object);
        if (!parsed.ok) {
          errors.push(...parsed.issues.map((issue) => `${where}: ${formatIssue(issue)}`));
          continue;
        }
        objects.push({ ...(parsed.dgd as unknown as KubeObject), metadata: { ...(parsed.dgd.metadata as KubeObject['metadata']), namespace: parsed.dgd.metadata.namespace ?? 'default' } });
        continue;
      }
      objects.push(object as unknown as KubeObject);
    }
  }
  return { objects, errors };
}

/** Renders steps as a YAML stream: a comment line per event, then its writes. */
export function formatSteps(steps: readonly ReplayStep[]): string {
  return steps
    .map((step) => {
      const by = step.functions.length === 0 ? '' : ` [${step.functions.join(', ')}]`;
      const head = `# line ${step.line}: ${step.eventType ?? 'malformed'} ${step.objects.join(' ')}${by} -> ${step.outcome}${step.detail === undefined ? '' : ` (${step.detail})`}\n`;
      const notes = step.notes.map((note) => `# ${note}\n`).join('');
      const writes = step.writes.map((w) => stringify(w, { lineWidth: 0 })).join('---\n');
      return `---\n${head}${notes}${writes === '' ? '# no writes\n' : writes}`;
    })
    .join('');
}

export async function run(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        state: { type: 'string', multiple: true, default: [] },
        now: { type: 'string' },
        'lpx-enabled': { type: 'boolean', default: false },
        'dgdr-v1beta2-enabled': { type: 'boolean', default: false },
        output: { type: 'string', default: 'yaml' },
      },
    });
  } catch (error) {
    process.stderr.write(`dynamo-fn replay: ${(error as Error).message}\n\n${usage}\n`);
    return 1;
  }
  const [eventsFile, ...extra] = parsed.positionals;
  // RFC 3339 only: `new Date('1')` would otherwise read as the year 2001.
  const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
  const now = parsed.values.now === undefined ? new Date() : rfc3339.test(parsed.values.now) ? new Date(parsed.values.now) : new Date(Number.NaN);
  if (eventsFile === undefined || extra.length > 0 || Number.isNaN(now.getTime()) || !['yaml', 'json'].includes(parsed.values.output)) {
    process.stderr.write(`dynamo-fn replay: give one EVENTS_FILE, a valid --now and --output yaml|json\n\n${usage}\n`);
    return 1;
  }
  let lines: string[];
  let state: KubeObject[];
  try {
    lines = (await readFile(eventsFile, 'utf8')).split('\n');
    const loaded = await loadState(parsed.values.state);
    if (loaded.errors.length > 0) {
      process.stderr.write(loaded.errors.map((e) => `error: ${e}\n`).join(''));
      return 1;
    }
    state = loaded.objects;
  } catch (error) {
    process.stderr.write(`dynamo-fn replay: cannot read input: ${(error as Error).message}\n`);
    return 1;
  }
  if (parsed.values.state.length === 0) process.stderr.write(`${NO_STATE_NOTE}\n`);
  const steps = await replayEvents(replayFunctions(), state, lines, {
    config: defaultConfig({ lpxEnabled: parsed.values['lpx-enabled'], dgdrV1Beta2Enabled: parsed.values['dgdr-v1beta2-enabled'] }),
    log: pino({ level: 'silent' }),
    now: () => now,
  });
  process.stdout.write(parsed.values.output === 'json' ? steps.map((s) => JSON.stringify(s)).join('\n') + '\n' : formatSteps(steps));
  return steps.some((s) => s.outcome === 'Rejected') ? 1 : 0;
}
