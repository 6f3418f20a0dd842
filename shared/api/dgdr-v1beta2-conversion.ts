/**
 * DynamoGraphDeploymentRequest `nvidia.com/v1beta2` <-> `nvidia.com/v1beta1` (the hub) through
 * the read-only conversion views, a pure converter for the conversion webhook on plain objects.
 *
 * - A native v1beta2 request reads through v1beta1 (and v1alpha1) as `spec.v1beta2` (its whole
 *   v1beta2 spec) and `status.v1beta2` (its whole v1beta2 status), with no native v1beta1 field.
 * - A native v1beta1 (or v1alpha1) request reads through v1beta2 as `spec.v1beta1` (its whole
 *   v1beta1 spec) and `status.v1beta1`, with no native v1beta2 field.
 * - Native fields and a view together are an error (a mixed representation); so is a view that is
 *   not an object. Metadata passes through unchanged, so every round trip gives back what was written.
 *
 * Source: ../shared/reference/dgdr-reference.txt "Conversion views" ("the API server represents a
 * native v1beta2 request through v1alpha1 or v1beta1 by populating spec.v1beta2. Conversely, it
 * represents a native v1beta1 request through v1beta2 by populating spec.v1beta1"); upstream
 * deploy/operator/api/v1beta2/dynamographdeploymentrequest_conversion.go (the status envelopes and
 * the mixed-representation failure, upstream-notes/dgdr.md §5 "Conversion v1beta1 ⇄ v1beta2").
 * @module
 */
import { DGDR_V1ALPHA1, DGDR_V1BETA1 } from './dgdr.js';
import { DGDR_V1BETA2 } from './dgdr-v1beta2.js';

type Obj = Record<string, unknown>;

/** The view of a native v1beta2 request inside v1beta1 and v1alpha1 objects: `spec.v1beta2`, `status.v1beta2`. */
export const DGDR_VIEW_V1BETA2 = 'v1beta2';
/** The view of a native v1beta1 request inside v1beta2 objects: `spec.v1beta1`, `status.v1beta1`. */
export const DGDR_VIEW_V1BETA1 = 'v1beta1';

export type DgdrViewConversionResult = { readonly ok: true; readonly object: Obj } | { readonly ok: false; readonly message: string };

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Unwraps or wraps one part (`spec` or `status`) of an object: a part holding only the view
 * `view` becomes the view's contents; a part without it is wrapped as `{ [wrapAs]: part }`;
 * an absent part stays absent. Failures name the field path. Pure.
 */
function convertPart(part: unknown, field: 'spec' | 'status', view: string, wrapAs: string): { ok: true; value: Obj | undefined } | { ok: false; message: string } {
  if (part === undefined || part === null) return { ok: true, value: undefined };
  if (!isObj(part)) return { ok: false, message: `${field}: Invalid value: must be an object` };
  if (!(view in part)) return { ok: true, value: { [wrapAs]: structuredClone(part) } };
  const contents = part[view];
  if (!isObj(contents)) return { ok: false, message: `${field}.${view}: Invalid value: the conversion view must be an object` };
  const native = Object.keys(part).filter((key) => key !== view);
  if (native.length > 0) return { ok: false, message: `${field}.${view}: Forbidden: the read-only conversion view may not be set together with native fields (${native.sort().join(', ')})` };
  return { ok: true, value: structuredClone(contents) };
}

/** One object with `spec` and `status` converted part by part, under `apiVersion`. Pure. */
function convertParts(object: Readonly<Obj>, apiVersion: string, view: string, wrapAs: string): DgdrViewConversionResult {
  const spec = convertPart(object['spec'], 'spec', view, wrapAs);
  if (!spec.ok) return spec;
  const status = convertPart(object['status'], 'status', view, wrapAs);
  if (!status.ok) return status;
  const { spec: _spec, status: _status, ...rest } = structuredClone(object) as Obj;
  return { ok: true, object: { ...rest, apiVersion, ...(spec.value === undefined ? {} : { spec: spec.value }), ...(status.value === undefined ? {} : { status: status.value }) } };
}

/**
 * A v1beta2 DGDR to the v1beta1 hub: a native v1beta2 object becomes `spec.v1beta2`/`status.v1beta2`;
 * a v1beta2 object that is the `spec.v1beta1` view of a native v1beta1 one becomes that object again.
 * Failures: the view together with native fields, a view that is not an object. Pure.
 */
export function convertDgdrV1Beta2ToV1Beta1(object: Readonly<Obj>): DgdrViewConversionResult {
  return convertParts(object, DGDR_V1BETA1, DGDR_VIEW_V1BETA1, DGDR_VIEW_V1BETA2);
}

/** The v1beta1 hub to v1beta2: the inverse of {@link convertDgdrV1Beta2ToV1Beta1}. Pure. */
export function convertDgdrV1Beta1ToV1Beta2(object: Readonly<Obj>): DgdrViewConversionResult {
  return convertParts(object, DGDR_V1BETA2, DGDR_VIEW_V1BETA2, DGDR_VIEW_V1BETA1);
}

/** Whether a v1beta1 or v1alpha1 object is the `spec.v1beta2` view of a native v1beta2 request. Pure. */
export function isDgdrV1Beta2View(object: Readonly<Obj>): boolean {
  const spec = object['spec'];
  return isObj(spec) && DGDR_VIEW_V1BETA2 in spec;
}

/** Whether a v1beta2 object is the `spec.v1beta1` view of a native v1beta1 (or v1alpha1) request. Pure. */
export function isDgdrV1Beta1View(object: Readonly<Obj>): boolean {
  const spec = object['spec'];
  return isObj(spec) && DGDR_VIEW_V1BETA1 in spec;
}

/**
 * The `spec.v1beta2` view between v1beta1 and v1alpha1: it has no v1alpha1 counterpart, so it
 * is carried unchanged (only `apiVersion` changes). Failures: the view together with native
 * fields. Pure.
 */
export function convertDgdrV1Beta2ViewBetweenV1Alpha1AndV1Beta1(object: Readonly<Obj>, desiredApiVersion: typeof DGDR_V1ALPHA1 | typeof DGDR_V1BETA1): DgdrViewConversionResult {
  for (const field of ['spec', 'status'] as const) {
    const part = object[field];
    if (part === undefined || part === null) continue;
    const checked = convertPart(part, field, DGDR_VIEW_V1BETA2, DGDR_VIEW_V1BETA2);
    if (!checked.ok) return checked;
    if (isObj(part) && !(DGDR_VIEW_V1BETA2 in part) && Object.keys(part).length > 0) {
      return { ok: false, message: `${field}: Invalid value: a native v1beta2 request's ${field} must hold only the conversion view ${field}.${DGDR_VIEW_V1BETA2}` };
    }
  }
  return { ok: true, object: { ...(structuredClone(object) as Obj), apiVersion: desiredApiVersion } };
}
