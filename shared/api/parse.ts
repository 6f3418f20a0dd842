/**
 * Parsing at the edge: any DGD object (v1beta1, or v1alpha1 through conversion) to a typed
 * v1beta1 DGD, or field issues naming every problem.
 * @module
 */
import { DGD_KIND, DGD_V1ALPHA1, DGD_V1BETA1 } from './constants.js';
import { DgdSchema, type Dgd } from './dgd.js';
import { convertDgdV1Alpha1 } from './dgd-v1alpha1.js';
import { findPrototypeKeys, fromZodIssues, type FieldIssue } from './issues.js';

export type ParseDgdResult =
  | { readonly ok: true; readonly dgd: Dgd; readonly sourceVersion: typeof DGD_V1BETA1 | typeof DGD_V1ALPHA1; readonly notes: readonly string[] }
  | { readonly ok: false; readonly issues: readonly FieldIssue[] };

/**
 * Parses a DynamoGraphDeployment of either served version into the v1beta1 type.
 * In: a plain object (from YAML, an event, or the API server). Out: the typed DGD and
 * conversion notes, or field issues. Issues of a converted v1alpha1 object are reported at
 * `spec.services[<name>]` rather than at the list index the conversion produced.
 * Failures: `apiVersion`/`kind` not a DGD -> NotSupported issue. Pure.
 */
export function parseDgd(input: unknown): ParseDgdResult {
  const object = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  if (object['kind'] !== DGD_KIND) {
    return { ok: false, issues: [{ path: 'kind', type: 'NotSupported', value: object['kind'], detail: `supported values: "${DGD_KIND}"` }] };
  }
  const prototypeKeys = findPrototypeKeys(object);
  if (prototypeKeys.length > 0) return { ok: false, issues: prototypeKeys };
  if (object['apiVersion'] === DGD_V1ALPHA1) {
    const converted = convertDgdV1Alpha1(object);
    if (!converted.ok) return converted;
    const parsed = DgdSchema.safeParse(converted.object, { reportInput: true });
    if (parsed.success) return { ok: true, dgd: parsed.data, sourceVersion: DGD_V1ALPHA1, notes: converted.notes };
    const names = ((converted.object['spec'] as { components: { name: string }[] }).components ?? []).map((c) => c.name);
    const issues = fromZodIssues(parsed.error.issues).map((issue) => ({
      ...issue,
      path: issue.path.replace(/^spec\.components\[(\d+)\]/, (_m, i: string) => `spec.services[${names[Number(i)] ?? i}]`),
    }));
    return { ok: false, issues };
  }
  if (object['apiVersion'] !== DGD_V1BETA1) {
    return { ok: false, issues: [{ path: 'apiVersion', type: 'NotSupported', value: object['apiVersion'], detail: `supported values: "${DGD_V1BETA1}", "${DGD_V1ALPHA1}"` }] };
  }
  const parsed = DgdSchema.safeParse(object, { reportInput: true });
  if (!parsed.success) return { ok: false, issues: fromZodIssues(parsed.error.issues) };
  return { ok: true, dgd: parsed.data, sourceVersion: DGD_V1BETA1, notes: [] };
}
