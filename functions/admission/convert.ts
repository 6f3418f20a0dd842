/**
 * The conversion webhook: `POST /convert` answers apiextensions.k8s.io/v1 ConversionReviews for
 * every multi-version kind we serve, through a per-kind converter registry. No I/O: the HTTP
 * server (./server.ts) hands the body in and writes the answer out.
 *
 * | Request | Answer |
 * | --- | --- |
 * | every object has a registered converter and converts | 200, `result.status: Success`, `convertedObjects` in request order |
 * | an object has no converter, is not an object, is of another group, or its conversion fails | 200, `result.status: Failure`, a message naming the object and the field path |
 * | not JSON, nested too deep, not a v1 ConversionReview with `request.uid` | 400, plain-text reason |
 *
 * Registering a kind: add one line to {@link CONVERTERS} (`group`, `kind`, `convert(object,
 * desiredAPIVersion)`); its CRD then names `conversion.strategy: Webhook` with
 * `clientConfig.service.path: /convert` (shared/api/crd.ts `CONVERSION_WEBHOOK_SERVICE`).
 *
 * A converter may change only `apiVersion`, the body and `metadata.labels`/`annotations`; the
 * API server refuses any other metadata change, so the answer is checked for that here too.
 * Source: Kubernetes "Versions in CustomResourceDefinitions" (webhook request and response);
 * upstream's operator serves conversion through controller-runtime's webhook at the same path,
 * `/convert`, with v1beta1 as the hub (internal/webhook/dynamographdeployment_conversion.go,
 * api/v1alpha1/*_conversion.go).
 * @module
 */
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { DGDR_KIND, DGD_KIND, DYNAMO_GROUP, convertDgd, convertDgdr } from '../../shared/api/index.js';
import { MAX_NESTING_DEPTH, exceedsNestingDepth } from './review.js';

type Obj = Record<string, unknown>;

/** The path the API server posts ConversionReviews to. */
export const CONVERT_PATH = '/convert';
export const CONVERSION_API_VERSION = 'apiextensions.k8s.io/v1';
export const CONVERSION_REVIEW_KIND = 'ConversionReview';

/** The outcome of one object's conversion. */
export type ConverterResult = { readonly ok: true; readonly object: Obj } | { readonly ok: false; readonly message: string };

/** One kind's converter: pure, never throws for any object of its kind. */
export interface Converter {
  readonly group: string;
  readonly kind: string;
  /** Converts `object` (any served version of the kind) to `desiredApiVersion` (`group/version`). */
  readonly convert: (object: Obj, desiredApiVersion: string) => ConverterResult;
}

/**
 * Every kind served through conversion. One line per kind, so engineers adding a kind (DGDR
 * v1alpha1 <-> v1beta1) touch only their own line.
 */
export const CONVERTERS: readonly Converter[] = [
  { group: DYNAMO_GROUP, kind: DGD_KIND, convert: convertDgd },
  { group: DYNAMO_GROUP, kind: DGDR_KIND, convert: convertDgdr },
];

/** Converters keyed `<group>/<Kind>`. */
export type ConverterRegistry = ReadonlyMap<string, Converter>;

/**
 * Builds the registry. Failures: throws when two converters claim the same group and kind (a
 * programming error, caught at start).
 */
export function createConverterRegistry(converters: readonly Converter[] = CONVERTERS): ConverterRegistry {
  const registry = new Map<string, Converter>();
  for (const converter of converters) {
    const key = `${converter.group}/${converter.kind}`;
    if (registry.has(key)) throw new Error(`two converters are registered for ${key}`);
    registry.set(key, converter);
  }
  return registry;
}

const ConversionReviewSchema = z.object({
  apiVersion: z.literal(CONVERSION_API_VERSION),
  kind: z.literal(CONVERSION_REVIEW_KIND),
  request: z.object({ uid: z.string().min(1), desiredAPIVersion: z.string().min(1), objects: z.array(z.unknown()) }),
});

/** apiextensions.k8s.io/v1 ConversionResponse. */
export interface ConversionResponse {
  readonly uid: string;
  readonly result: { readonly status: 'Success' } | { readonly status: 'Failure'; readonly message: string };
  readonly convertedObjects: readonly Obj[];
}

export type ConversionAnswer =
  | {
      readonly status: 200;
      readonly review: { readonly apiVersion: string; readonly kind: string; readonly response: ConversionResponse };
      readonly summary: { readonly uid: string; readonly desiredAPIVersion: string; readonly objects: number; readonly isSuccess: boolean; readonly failure?: string };
    }
  | { readonly status: 400; readonly message: string };

function groupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(object: Obj): string {
  const metadata = isObj(object['metadata']) ? object['metadata'] : {};
  const namespace = typeof metadata['namespace'] === 'string' ? `${metadata['namespace']}/` : '';
  return `${String(object['kind'])} ${namespace}${String(metadata['name'] ?? '')}`;
}

/** Converts one object, or says why not. Pure. */
function convertOne(object: unknown, desiredApiVersion: string, registry: ConverterRegistry): ConverterResult {
  if (!isObj(object) || typeof object['apiVersion'] !== 'string' || typeof object['kind'] !== 'string') {
    return { ok: false, message: 'an object to convert must have apiVersion and kind' };
  }
  const group = groupOf(object['apiVersion']);
  if (group !== groupOf(desiredApiVersion)) return { ok: false, message: `${describe(object)}: cannot convert ${object['apiVersion']} to another group's ${desiredApiVersion}` };
  const converter = registry.get(`${group}/${object['kind']}`);
  if (converter === undefined) return { ok: false, message: `${describe(object)}: no converter is registered for ${group}/${object['kind']}` };
  let result: ConverterResult;
  try {
    result = converter.convert(object, desiredApiVersion);
  } catch (error) {
    // A converter bug must not take the endpoint down: the API server gets a Failure naming the object.
    return { ok: false, message: `${describe(object)}: conversion failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (!result.ok) return { ok: false, message: `${describe(object)}: ${result.message}` };
  const before = isObj(object['metadata']) ? object['metadata'] : {};
  const after = isObj(result.object['metadata']) ? result.object['metadata'] : {};
  const fixed = (m: Obj): Obj => Object.fromEntries(Object.entries(m).filter(([k]) => k !== 'labels' && k !== 'annotations'));
  if (result.object['apiVersion'] !== desiredApiVersion || !isDeepStrictEqual(fixed(before), fixed(after))) {
    return { ok: false, message: `${describe(object)}: the converter changed metadata other than labels and annotations, or gave another apiVersion` };
  }
  return result;
}

/**
 * Answers one ConversionReview.
 * In: the raw request body; the registry. Out: HTTP 200 with a ConversionReview echoing
 * `request.uid` (all objects converted, or a Failure naming the first object that could not
 * be), or HTTP 400 with a plain-text reason. Never throws for any input. Pure.
 */
export function answerConversionReview(body: string, registry: ConverterRegistry): ConversionAnswer {
  let parsedBody: unknown;
  try {
    parsedBody = JSON.parse(body);
  } catch (error) {
    return { status: 400, message: `request body is not valid JSON: ${(error as Error).message}` };
  }
  if (exceedsNestingDepth(parsedBody, MAX_NESTING_DEPTH)) return { status: 400, message: `request body nests deeper than ${MAX_NESTING_DEPTH} levels` };
  const review = ConversionReviewSchema.safeParse(parsedBody);
  if (!review.success) {
    const problems = review.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    return { status: 400, message: `request body is not an ${CONVERSION_API_VERSION} ${CONVERSION_REVIEW_KIND} with a request.uid: ${problems}` };
  }
  const { uid, desiredAPIVersion, objects } = review.data.request;
  const converted: Obj[] = [];
  let failure: string | undefined;
  for (const object of objects) {
    const result = convertOne(object, desiredAPIVersion, registry);
    if (!result.ok) {
      failure = result.message;
      break;
    }
    converted.push(result.object);
  }
  const response: ConversionResponse =
    failure === undefined ? { uid, result: { status: 'Success' }, convertedObjects: converted } : { uid, result: { status: 'Failure', message: failure }, convertedObjects: [] };
  return {
    status: 200,
    review: { apiVersion: CONVERSION_API_VERSION, kind: CONVERSION_REVIEW_KIND, response },
    summary: { uid, desiredAPIVersion, objects: objects.length, isSuccess: failure === undefined, ...(failure === undefined ? {} : { failure }) },
  };
}
