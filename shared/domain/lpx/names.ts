/**
 * LPX object names: the LPX PodCliqueSet and the LpuPipelineRequests.
 *
 * Source: ../shared/upstream-notes/lpx.md §2.3 (`PCSNameForLPX`), §3.2 (request name and its
 * identity digest); upstream-notes/grove.md §A.8 (the 45-character combined-name budget).
 * @module
 */
import { createHash } from 'node:crypto';
import { GROVE_MAX_COMBINED_NAME_LENGTH } from '../../api/index.js';

/** The LPXGraphDeployment identity the names hash: namespace, name, uid. */
export interface LpxIdentity {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/**
 * The longest LPX PodCliqueSet name: Grove's 45-character budget less the longest scaling group
 * plus clique we render for up to 8 drafts (`lpx` + `agt8`, or `lpx9` + `lpx9-cond`: 3-4 + 4-9).
 * Upstream truncates the LPXGD name to MaxPodCliqueSetNameLength-5 before the `-xxxx` suffix.
 */
export const MAX_LPX_PODCLIQUESET_NAME_LENGTH = GROVE_MAX_COMBINED_NAME_LENGTH - 14;

/**
 * PCSNameForLPX: the LPXGD name with dots as dashes, `lpx-` prefixed when it starts with a digit,
 * truncated to {@link MAX_LPX_PODCLIQUESET_NAME_LENGTH}-5, trailing dashes trimmed, then `-` and
 * the first 2 bytes (4 hex) of sha256(`ns/name/uid`). Stable across input edits; a new LPXGD (new
 * uid) gets a new name. Source: lpx.md §2.3 "PCS name". Pure.
 */
export function lpxPodCliqueSetName(id: LpxIdentity): string {
  let base = id.name.replace(/\./g, '-');
  if (/^[0-9]/.test(base)) base = `lpx-${base}`;
  base = base.slice(0, MAX_LPX_PODCLIQUESET_NAME_LENGTH - 5).replace(/-+$/, '');
  const suffix = createHash('sha256').update(`${id.namespace}/${id.name}/${id.uid}`).digest('hex').slice(0, 4);
  return `${base}-${suffix}`;
}

function lengthPrefixed(hash: ReturnType<typeof createHash>, value: string): void {
  const bytes = Buffer.from(value, 'utf8');
  const length = Buffer.alloc(8);
  length.writeBigUInt64BE(BigInt(bytes.length));
  hash.update(length).update(bytes);
}

/**
 * The LpuPipelineRequest name: `lpx-<LPXGD name, dots as dashes, at most 23 characters, trailing
 * '-' trimmed>-<first 32 hex of the identity digest>`. The digest is sha256 over length-prefixed
 * namespace, name, uid, the workload (only when there is more than one), the model, and the
 * scaling-group replica (only when > 0); the input revision and generation are left out, so an
 * edit never renames a request. Source: lpx.md §3.2 "Name". Pure.
 */
export function pipelineRequestName(id: LpxIdentity, request: { readonly workload: string; readonly workloadCount: number; readonly model: string; readonly replicaIndex: number }): string {
  const hash = createHash('sha256');
  for (const value of [id.namespace, id.name, id.uid]) lengthPrefixed(hash, value);
  if (request.workloadCount > 1) lengthPrefixed(hash, request.workload);
  lengthPrefixed(hash, request.model);
  if (request.replicaIndex > 0) lengthPrefixed(hash, String(request.replicaIndex));
  const prefix = id.name.replace(/\./g, '-').slice(0, 23).replace(/-+$/, '');
  return `lpx-${prefix}-${hash.digest('hex').slice(0, 32)}`;
}
