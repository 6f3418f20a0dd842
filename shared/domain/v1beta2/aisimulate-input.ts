/**
 * The AISimulate `recommend` input of a v1beta2 Run: the typed request fields lowered into an
 * underlay, then `spec.aisim.inputOverrides` applied last as a JSON Merge Patch, then the result
 * checked against the bundled AISimulate input JSON Schema.
 *
 * Source: ../shared/reference/dgdr-reference.txt "Replay a recorded trace" (the trace lowering,
 * the merge patch, null deletes), "v1beta2 hardware SKU" (sku passed through, admission
 * validates the merged input); upstream-notes/profiler.md §3.5 (input keys, exit 2 on an
 * invalid input) and §4 (lowering targets verified against the real AISimulate schema).
 * @module
 */
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { TRACE_MOUNT_DIR, type DgdrV1Beta2Spec, type FieldIssue } from '../../api/index.js';

/** A JSON value as AISimulate reads it. */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };
export type JsonObject = { readonly [key: string]: JsonValue };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Applies a JSON Merge Patch: objects merge key by key, `null` deletes the key, anything else
 * (arrays included) replaces. A non-object patch replaces the target whole.
 * In: target and patch (neither is modified). Out: a new value.
 * Source: RFC 7386 §2 (MergePatch pseudo-code); reference "Replay a recorded trace" ("A null
 * override deletes the named field or parent object, and the operator does not restore it"). Pure.
 */
export function applyJsonMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyJsonMergePatch(result[key], value);
  }
  return result;
}

/**
 * Where the Job mounts the trace file: `/var/run/aisimulate/trace/trace.jsonl.gz`, or
 * `trace.jsonl` when `subPath` does not end in `.gz`.
 * Source: reference "Replay a recorded trace". Pure.
 */
export function traceMountPath(subPath: string): string {
  return `${TRACE_MOUNT_DIR}/${subPath.endsWith('.gz') ? 'trace.jsonl.gz' : 'trace.jsonl'}`;
}

/**
 * Lowers `spec.workload.trace` to AISimulate traffic: `source {type: trace, format: dynamo,
 * paths: [<mount>]}`, `load {type: trace_timestamps}` with `speedup` from
 * `replay.arrivalSpeedupRatio` when set, and no `stop.requests`.
 * Source: reference "Replay a recorded trace"; profiler.md §4 (trace traffic accepts only
 * `stop.max_virtual_time_seconds`). Pure.
 */
export function lowerTraceWorkload(trace: NonNullable<NonNullable<DgdrV1Beta2Spec['workload']>['trace']>): JsonObject {
  const speedup = trace.replay?.arrivalSpeedupRatio;
  return {
    source: { type: 'trace', format: 'dynamo', paths: [traceMountPath(trace.source.persistentVolumeClaim.subPath)] },
    load: { type: 'trace_timestamps', ...(speedup === undefined ? {} : { speedup }) },
  };
}

/**
 * How many requests a static workload sends per unit of its load (AISimulate
 * `traffic.stop.requests_per_load_unit`): 10, the ratio of AISimulate's own default traffic
 * (`TrafficConfig.default()`: 100 requests at concurrency 10). AISimulate refuses synthetic
 * traffic without a stop ("synthetic traffic requires a stop condition"); upstream's v1beta2
 * StaticWorkload carries the same ratio as `numRequestRatio` (upstream-notes/dgdr.md §5).
 */
export const STATIC_REQUESTS_PER_LOAD_UNIT = 10;

/**
 * The load of a static workload with neither `concurrency` nor `requestRate`: the KV cache
 * filled once (`kv_capacity_fraction`, `fraction: 1`), so each candidate runs at the in-flight
 * load its own KV capacity allows, i.e. its maximum throughput. This is the v1beta1 rule for the
 * same workload ("When neither field is set ... the profiler uses its default maximum-throughput
 * selection", dgdr-reference "Spec reference", workload.concurrency) in AISimulate's terms, and
 * upstream's third static load target (`kvLoadRatio`, upstream-notes/dgdr.md §5).
 */
export const STATIC_DEFAULT_LOAD: JsonObject = { type: 'kv_capacity_fraction', fraction: 1 };

/**
 * Lowers `spec.workload.static` to synthetic AISimulate traffic: `source {type: synthetic,
 * input_tokens: isl, output_tokens: osl}`; `load {type: concurrency, concurrency}`, for
 * `requestRate` `load {type: poisson, requests_per_second}`, and with neither the
 * maximum-throughput load {@link STATIC_DEFAULT_LOAD}; `stop {requests_per_load_unit:`
 * {@link STATIC_REQUESTS_PER_LOAD_UNIT}`}`. Unset isl/osl are left to AISimulate's defaults.
 * The reference names no static targets; these are the AISimulate fields of the same meaning
 * (bundled schema `SyntheticSource`, `TrafficRecommendationLoad`, `TrafficStop`; fixture
 * `rec3.yaml`). Pure.
 */
export function lowerStaticWorkload(workload: NonNullable<NonNullable<DgdrV1Beta2Spec['workload']>['static']>): JsonObject {
  const source: Record<string, JsonValue> = { type: 'synthetic' };
  if (workload.isl !== undefined) source['input_tokens'] = workload.isl;
  if (workload.osl !== undefined) source['output_tokens'] = workload.osl;
  const load: JsonObject =
    workload.concurrency !== undefined
      ? { type: 'concurrency', concurrency: workload.concurrency }
      : workload.requestRate !== undefined
        ? { type: 'poisson', requests_per_second: workload.requestRate }
        : STATIC_DEFAULT_LOAD;
  return { source, load, stop: { requests_per_load_unit: STATIC_REQUESTS_PER_LOAD_UNIT } };
}

/**
 * The underlay lowered from the typed fields: `engine.model` from `model.name`,
 * `engine.hardware` from `hardware.gpu.sku` (passed unchanged), `engine.backend` from
 * `backends` (one backend as a string, several as `{choices}`), traffic from the workload, and
 * `optimization.constraints.max_candidate_gpus` from `hardware.gpu.budget`. `optimization` is
 * always present (the recommend input requires it). `numGpusPerNode` has no AISimulate field
 * and is used when Candidates are rendered.
 * Source: reference "v1beta2 hardware SKU", "Replay a recorded trace"; profiler.md §3.5, §4. Pure.
 */
export function lowerAisimulateInput(spec: DgdrV1Beta2Spec): JsonObject {
  const gpu = spec.hardware?.gpu;
  const engine: Record<string, JsonValue> = { model: spec.model.name };
  if (gpu?.sku !== undefined) engine['hardware'] = gpu.sku;
  const backends = spec.backends ?? [];
  if (backends.length === 1 && backends[0] !== undefined) engine['backend'] = backends[0];
  else if (backends.length > 1) engine['backend'] = { choices: [...backends] };
  const trace = spec.workload?.trace;
  const staticWorkload = spec.workload?.static ?? undefined;
  const traffic = trace !== undefined ? lowerTraceWorkload(trace) : staticWorkload !== undefined ? lowerStaticWorkload(staticWorkload) : undefined;
  const optimization: JsonObject = gpu?.budget === undefined ? {} : { constraints: { max_candidate_gpus: gpu.budget } };
  return { ...(traffic === undefined ? {} : { traffic }), engine, optimization };
}

/**
 * The Run's AISimulate input: the lowered underlay with `spec.aisim.inputOverrides` applied
 * last as a JSON Merge Patch (it can replace or delete any lowered value).
 * Source: reference "Replay a recorded trace". Pure.
 */
export function buildAisimulateInput(spec: DgdrV1Beta2Spec): unknown {
  const overrides = spec.aisim?.inputOverrides;
  const underlay = lowerAisimulateInput(spec);
  return overrides === undefined ? underlay : applyJsonMergePatch(underlay, overrides);
}

/** A compiled validator of the bundled AISimulate input schema; see {@link compileAisimulateInputSchema}. */
export type AisimulateInputValidator = (input: unknown) => readonly FieldIssue[];

/**
 * Rewrites pydantic's discriminated unions (`oneOf` + `discriminator.mapping`, which ajv does
 * not support) as `if`/`then` on the tag, so only the selected branch reports errors: a
 * tagged `source: {type: trace}` missing `paths` says so, instead of every branch's complaints.
 * A missing tag selects the branch whose tag property has a default, as pydantic does.
 */
function withDiscriminatorsAsConditionals(node: unknown, defs: Readonly<Record<string, unknown>>): unknown {
  if (Array.isArray(node)) return node.map((n) => withDiscriminatorsAsConditionals(n, defs));
  if (!isPlainObject(node)) return node;
  const discriminator = node['discriminator'];
  if (isPlainObject(discriminator) && isPlainObject(discriminator['mapping']) && typeof discriminator['propertyName'] === 'string') {
    const tag = discriminator['propertyName'];
    const mapping = Object.entries(discriminator['mapping']).filter((e): e is [string, string] => typeof e[1] === 'string');
    const branches: unknown[] = mapping.map(([value, ref]) => ({ if: { properties: { [tag]: { const: value } }, required: [tag] }, then: { $ref: ref } }));
    const defaulted = mapping.find(([, ref]) => {
      const target = defs[ref.replace('#/$defs/', '')];
      const properties = isPlainObject(target) ? target['properties'] : undefined;
      const tagSchema = isPlainObject(properties) ? properties[tag] : undefined;
      return isPlainObject(tagSchema) && tagSchema['default'] !== undefined;
    });
    if (defaulted !== undefined) branches.push({ if: { not: { required: [tag] } }, then: { $ref: defaulted[1] } });
    return { type: 'object', properties: { [tag]: { enum: mapping.map(([value]) => value) } }, allOf: branches };
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = withDiscriminatorsAsConditionals(value, defs);
  return out;
}

function issuePath(prefix: string, error: ErrorObject): string {
  const pointer = error.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const missing = error.keyword === 'required' ? [String((error.params as { missingProperty: string }).missingProperty)] : [];
  const extra = error.keyword === 'additionalProperties' ? [String((error.params as { additionalProperty: string }).additionalProperty)] : [];
  let out = prefix;
  for (const segment of [...pointer, ...missing, ...extra]) out += /^\d+$/.test(segment) ? `[${segment}]` : `.${segment}`;
  return out;
}

/**
 * Compiles the bundled AISimulate `recommend` input JSON Schema (pydantic
 * `model_json_schema()`, draft 2020-12, `additionalProperties: false` throughout) into a
 * validator whose issues are field issues under `pathPrefix` (e.g. `spec.aisim.inputOverrides`):
 * a missing property is Required at its path, an unknown one Forbidden, anything else Invalid
 * with ajv's message. Only the deepest error of each path is kept, so a `oneOf` miss names
 * the branch's field rather than the whole union.
 * Failures: throws when the schema itself does not compile (a packaging error, found at start).
 * Source: reference "v1beta2 hardware SKU" ("Request and Run admission validate the merged input
 * against the bundled AISimulate input schema"); profiler.md §3.5. Pure once compiled.
 */
export function compileAisimulateInputSchema(schema: Readonly<Record<string, unknown>>, pathPrefix = 'spec.aisim.inputOverrides'): AisimulateInputValidator {
  // strict: false — pydantic's schema carries keywords ajv does not know (`title` is fine,
  // `discriminator` is rewritten below).
  const ajv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
  const defs = isPlainObject(schema['$defs']) ? schema['$defs'] : {};
  const validate = ajv.compile(withDiscriminatorsAsConditionals(schema, defs) as Record<string, unknown>);
  return (input) => {
    if (validate(input)) return [];
    const byPath = new Map<string, FieldIssue>();
    for (const error of validate.errors ?? []) {
      // A union's own error, and the `null` branch of an optional field, repeat what the
      // branch errors say more precisely.
      if (error.keyword === 'oneOf' || error.keyword === 'anyOf' || error.keyword === 'if') continue;
      if (error.keyword === 'type' && (error.params as { type?: unknown }).type === 'null') continue;
      const path = issuePath(pathPrefix, error);
      const issue: FieldIssue =
        error.keyword === 'required'
          ? { path, type: 'Required', detail: 'must be specified (AISimulate input schema)' }
          : error.keyword === 'additionalProperties'
            ? { path, type: 'Forbidden', detail: 'not a field of the AISimulate input schema' }
            : { path, type: 'Invalid', detail: `${error.message ?? 'is invalid'} (AISimulate input schema)` };
      if (!byPath.has(path)) byPath.set(path, issue);
    }
    if (byPath.size === 0) byPath.set(pathPrefix, { path: pathPrefix, type: 'Invalid', detail: 'does not match the AISimulate input schema' });
    return [...byPath.values()].sort((a, b) => a.path.localeCompare(b.path));
  };
}
