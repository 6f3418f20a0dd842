import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { deepFreeze } from '../../../test/support/builders.js';
import { aRun } from '../../../test/support/v1beta2-builders.js';
import { sharedDir } from '../../../test/support/paths.js';
import { applyJsonMergePatch, buildAisimulateInput, compileAisimulateInputSchema, lowerAisimulateInput, traceMountPath } from './aisimulate-input.js';

const fixtures = resolve(sharedDir, 'fixtures', 'aisimulate');
const recommendSchema = JSON.parse(readFileSync(resolve(fixtures, 'aisimulate-0.13.0.dev85-recommend-input.schema.json'), 'utf8')) as Record<string, unknown>;
const validate = compileAisimulateInputSchema(recommendSchema);

describe('applyJsonMergePatch (RFC 7386 Appendix A test cases)', () => {
  const rows = [
    { name: 'replaces a value', target: { a: 'b' }, patch: { a: 'c' }, want: { a: 'c' } },
    { name: 'adds a member', target: { a: 'b' }, patch: { b: 'c' }, want: { a: 'b', b: 'c' } },
    { name: 'null deletes a member', target: { a: 'b' }, patch: { a: null }, want: {} },
    { name: 'null deletes only that member', target: { a: 'b', b: 'c' }, patch: { a: null }, want: { b: 'c' } },
    { name: 'an array replaces a value', target: { a: ['b'] }, patch: { a: 'c' }, want: { a: 'c' } },
    { name: 'a value replaces an array', target: { a: 'c' }, patch: { a: ['b'] }, want: { a: ['b'] } },
    { name: 'merges nested objects and deletes inside them', target: { a: { b: 'c' } }, patch: { a: { b: 'd', c: null } }, want: { a: { b: 'd' } } },
    { name: 'arrays are replaced whole, not merged', target: { a: [{ b: 'c' }] }, patch: { a: [1] }, want: { a: [1] } },
    { name: 'a non-object patch replaces the target', target: ['a', 'b'], patch: ['c', 'd'], want: ['c', 'd'] },
    { name: 'an object patch replaces a non-object target', target: { a: 'b' }, patch: ['c'], want: ['c'] },
    { name: 'null in a patch for an absent member is a no-op', target: { e: null }, patch: { a: 1 }, want: { e: null, a: 1 } },
    { name: 'nulls inside a new object are dropped', target: {}, patch: { a: { bb: { ccc: null } } }, want: { a: { bb: {} } } },
  ];
  it.each(rows)('$name', ({ target, patch, want }) => {
    expect(applyJsonMergePatch(target, patch)).toEqual(want);
  });
});

describe('traceMountPath', () => {
  it.each([
    { name: 'a .gz subPath mounts at trace.jsonl.gz', subPath: 'windows/2026-10-27T10-00.jsonl.gz', want: '/var/run/aisimulate/trace/trace.jsonl.gz' },
    { name: 'any other subPath mounts at trace.jsonl', subPath: 'traces/today.jsonl', want: '/var/run/aisimulate/trace/trace.jsonl' },
  ])('reference "Replay a recorded trace": $name', ({ subPath, want }) => {
    expect(traceMountPath(subPath)).toBe(want);
  });
});

describe('lowering typed fields to the AISimulate input, then spec.aisim.inputOverrides as a JSON Merge Patch', () => {
  const trace = (replay?: { arrivalSpeedupRatio: number }) => ({ trace: { format: 'Dynamo' as const, source: { persistentVolumeClaim: { claimName: 'request-traces', subPath: 'windows/2026-10-27T10-00.jsonl.gz' } }, ...(replay === undefined ? {} : { replay }) } });
  const lowered = {
    traffic: { source: { type: 'trace', format: 'dynamo', paths: ['/var/run/aisimulate/trace/trace.jsonl.gz'] }, load: { type: 'trace_timestamps' } },
    engine: { model: 'Qwen/Qwen3-0.6B', hardware: 'h200_sxm' },
    optimization: { constraints: { max_candidate_gpus: 8 } },
  };
  const rows = [
    {
      name: 'a trace lowers to traffic.source type/format/paths and load trace_timestamps, with no traffic.stop.requests',
      reason: 'reference "Replay a recorded trace": "lowers the trace to ... traffic.source (type: trace, format: dynamo, and paths with the mounted file) and traffic.load.type: trace_timestamps ... It adds no traffic.stop.requests"',
      spec: { workload: trace() },
      want: lowered,
    },
    {
      name: 'arrivalSpeedupRatio lowers to traffic.load.speedup',
      reason: 'reference "Replay a recorded trace": "with traffic.load.speedup when arrivalSpeedupRatio is set"',
      spec: { workload: trace({ arrivalSpeedupRatio: 2 }) },
      want: { ...lowered, traffic: { ...lowered.traffic, load: { type: 'trace_timestamps', speedup: 2 } } },
    },
    {
      name: 'an override replaces lowered traffic.source.format and paths',
      reason: 'reference "Replay a recorded trace": "spec.aisim.inputOverrides is applied last as a JSON Merge Patch and can replace any of them"',
      spec: { workload: trace(), aisim: { inputOverrides: { traffic: { source: { format: 'mooncake', paths: ['/elsewhere.jsonl'] } } } } },
      want: { ...lowered, traffic: { ...lowered.traffic, source: { type: 'trace', format: 'mooncake', paths: ['/elsewhere.jsonl'] } } },
    },
    {
      name: 'a null override deletes the lowered source and nothing restores it',
      reason: 'reference "Replay a recorded trace": "A null override deletes the named field or parent object, and the operator does not restore it"',
      spec: { workload: trace(), aisim: { inputOverrides: { traffic: { source: null } } } },
      want: { ...lowered, traffic: { load: { type: 'trace_timestamps' } } },
      // AISimulate needs a source: the same input exits 2 with "traffic.source Field required" (profiler.md §3.5).
      issues: [{ path: 'spec.aisim.inputOverrides.traffic.source', type: 'Required', detail: 'must be specified (AISimulate input schema)' }],
    },
    {
      name: 'hardware: {} lowers no hardware and no budget; the overrides supply both',
      reason: 'reference "v1beta2 hardware SKU": "use the empty-object opt-out and supply both the upstream hardware selector and candidate GPU budget yourself"',
      spec: { hardware: {}, workload: trace(), aisim: { inputOverrides: { engine: { hardware: 'h200_sxm' }, optimization: { constraints: { max_candidate_gpus: 8 } } } } },
      want: lowered,
    },
    {
      name: 'an unknown SKU is passed through unchanged',
      reason: 'reference "v1beta2 hardware SKU": "Passed to AISimulate unchanged"',
      spec: { hardware: { gpu: { sku: 'future_accelerator', budget: 8, numGpusPerNode: 8 } }, workload: trace() },
      want: { ...lowered, engine: { model: 'Qwen/Qwen3-0.6B', hardware: 'future_accelerator' } },
    },
    {
      name: 'one backend lowers to engine.backend, several to its choices',
      reason: 'bundled schema EngineRecommendationConfig.backend: an enum or Choices{choices}',
      spec: { backends: ['vllm', 'sglang'] as ('vllm' | 'sglang')[], workload: trace() },
      want: { ...lowered, engine: { ...lowered.engine, backend: { choices: ['vllm', 'sglang'] } } },
    },
    {
      name: 'static traffic lowers to a synthetic source, a concurrency load and a request stop (AISimulate: "synthetic traffic requires a stop condition")',
      reason: 'bundled schema SyntheticSource input_tokens/output_tokens, TrafficRecommendationLoad concurrency, TrafficStop requests_per_load_unit (fixture rec3.yaml); 10 requests per load unit as AISimulate\'s default traffic (100 requests at concurrency 10)',
      spec: { workload: { static: { isl: 2000, osl: 200, concurrency: 32 } } },
      want: { ...lowered, traffic: { source: { type: 'synthetic', input_tokens: 2000, output_tokens: 200 }, load: { type: 'concurrency', concurrency: 32 }, stop: { requests_per_load_unit: 10 } } },
    },
    {
      name: 'a static requestRate lowers to a poisson load in requests per second',
      reason: 'dgdr-reference "requestRate ... in requests per second"; bundled schema TrafficRecommendationLoad poisson requests_per_second',
      spec: { workload: { static: { isl: 4000, osl: 1000, requestRate: 2.5 } } },
      want: { ...lowered, traffic: { source: { type: 'synthetic', input_tokens: 4000, output_tokens: 1000 }, load: { type: 'poisson', requests_per_second: 2.5 }, stop: { requests_per_load_unit: 10 } } },
    },
    {
      name: 'reference "When neither field is set ... the profiler uses its default maximum-throughput selection": the admission default {isl: 4000, osl: 1000} lowers to the KV cache filled once (kv_capacity_fraction 1)',
      reason: 'dgdr-reference "Spec reference" workload.concurrency; upstream v1beta2 StaticWorkload kvLoadRatio (upstream-notes/dgdr.md §5); bundled schema TrafficRecommendationLoad kv_capacity_fraction fraction',
      spec: { workload: { static: { isl: 4000, osl: 1000 } } },
      want: { ...lowered, traffic: { source: { type: 'synthetic', input_tokens: 4000, output_tokens: 1000 }, load: { type: 'kv_capacity_fraction', fraction: 1 }, stop: { requests_per_load_unit: 10 } } },
    },
  ];
  it.each(rows)('$name', ({ spec, want }) => {
    const run = deepFreeze(aRun({ spec }));
    expect(buildAisimulateInput(run.spec)).toEqual(want);
    expect(buildAisimulateInput(run.spec)).toEqual(buildAisimulateInput(run.spec));
  });

  it('the underlay alone ignores inputOverrides', () => {
    expect(lowerAisimulateInput(aRun({ spec: { workload: trace(), aisim: { inputOverrides: { engine: null } } } }).spec)).toEqual(lowered);
  });

  it.each(rows)('the input of "$name" is checked against the bundled recommend schema', (row) => {
    expect(validate(buildAisimulateInput(aRun({ spec: row.spec }).spec))).toEqual('issues' in row ? row.issues : []);
  });
});

describe('validating the merged input against the bundled AISimulate input schema', () => {
  it.each([
    { name: 'rec1.yaml (the Dynamo trace lowering run against the real AISimulate) is valid', file: 'rec1.yaml', want: [] },
    { name: 'rec3.yaml (synthetic traffic) is valid apart from its dgd output-adapter section, which is not an input field', file: 'rec3.yaml', want: [{ path: 'spec.aisim.inputOverrides.dgd', type: 'Forbidden', detail: 'not a field of the AISimulate input schema' }] },
    { name: 'rec-nosource.yaml (traffic.source: null, AISimulate exit 2 "traffic.source Field required") names traffic.source', file: 'rec-nosource.yaml', want: [{ path: 'spec.aisim.inputOverrides.traffic.source', type: 'Required', detail: 'must be specified (AISimulate input schema)' }] },
    { name: 'rec-unknownsku.yaml passes the schema: the catalog is checked by AISimulate at run time', file: 'rec-unknownsku.yaml', want: [] },
  ])('profiler.md §3.5: $name', ({ file, want }) => {
    expect(validate(parse(readFileSync(resolve(fixtures, file), 'utf8')))).toEqual(want);
  });

  it('reports the fields of the selected source branch only, each at its path', () => {
    const input = { engine: { model: 'Qwen/Qwen3-0.6B', bogus: 1 }, optimization: {}, traffic: { source: { type: 'trace', format: 'nope' }, load: { type: 'trace_timestamps', concurrency: 'x' } } };
    expect(validate(input)).toMatchInlineSnapshot(`
      [
        {
          "detail": "not a field of the AISimulate input schema",
          "path": "spec.aisim.inputOverrides.engine.bogus",
          "type": "Forbidden",
        },
        {
          "detail": "must be specified (AISimulate input schema)",
          "path": "spec.aisim.inputOverrides.engine.hardware",
          "type": "Required",
        },
        {
          "detail": "must be integer (AISimulate input schema)",
          "path": "spec.aisim.inputOverrides.traffic.load.concurrency",
          "type": "Invalid",
        },
        {
          "detail": "must be equal to one of the allowed values (AISimulate input schema)",
          "path": "spec.aisim.inputOverrides.traffic.source.format",
          "type": "Invalid",
        },
        {
          "detail": "must be specified (AISimulate input schema)",
          "path": "spec.aisim.inputOverrides.traffic.source.paths",
          "type": "Required",
        },
      ]
    `);
  });
});
