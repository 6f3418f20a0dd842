/**
 * The DynamoGraphDeploymentRequest webhooks: `POST /mutate/nvidia.com/v1beta1/dynamographdeploymentrequests`
 * (defaults as a JSON Patch, the diff of the object and its defaulted copy) and
 * `POST /validate/nvidia.com/v1beta1/dynamographdeploymentrequests` (one 422 denial listing every
 * field issue; warnings in `response.warnings`). No I/O: ./review.ts routes here.
 *
 * Source: dgdr-reference "Spec reference"; shared/domain/dgdr/admission.ts for every rule.
 * @module
 */
import jsonpatch from 'fast-json-patch';
import { DGDR_KIND, DYNAMO_GROUP, formatIssues, type FieldIssue } from '../../shared/api/index.js';
import { defaultDgdr, validateDgdr, type DgdrAdmissionConfig } from '../../shared/domain/index.js';

/** A DGDR admission answer, before the review envelope. */
export interface DgdrAdmissionResponse {
  readonly allowed: boolean;
  readonly patch?: readonly jsonpatch.Operation[];
  readonly warnings?: readonly string[];
  readonly issues?: readonly FieldIssue[];
}

/** Defaults a DGDR object; the patch is the diff (no hand-written operations). Pure. */
export function mutateDgdr(object: object, operation: 'CREATE' | 'UPDATE', config: DgdrAdmissionConfig): DgdrAdmissionResponse {
  const operations = jsonpatch.compare(object, defaultDgdr(object, config, operation));
  return operations.length === 0 ? { allowed: true } : { allowed: true, patch: operations };
}

/** Validates a DGDR create or update. Pure. */
export function admitDgdr(object: object, oldObject: unknown): DgdrAdmissionResponse {
  const result = validateDgdr(object, oldObject);
  const warnings = result.warnings.length > 0 ? { warnings: result.warnings } : {};
  return result.issues.length === 0 ? { allowed: true, ...warnings } : { allowed: false, issues: result.issues, ...warnings };
}

/** The Invalid status of a denied DGDR: `DynamoGraphDeploymentRequest.nvidia.com "<name>" is invalid: <issues>`. Pure. */
export function dgdrInvalidMessage(issues: readonly FieldIssue[], name: string): string {
  return `${DGDR_KIND}.${DYNAMO_GROUP} ${JSON.stringify(name)} is invalid: ${formatIssues(issues)}`;
}


