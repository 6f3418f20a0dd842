/**
 * What each v1beta2 status writer owns, for the no-write decision (`decideStatusWrite`): a Run
 * or request pass whose owned status fields are unchanged writes no status.
 * Source: issue 17 item 3 ("The same for profile's DGDR and Run passes"); the field managers of
 * functions/profile (`dynamo-profile-run` owns the Run's phase, times, jobRef and `Completed`, and
 * the request's Runs status and `Accepted`; `dynamo-profile-publisher` owns the Run's `Published`,
 * candidateRefs and progress).
 * @module
 */
import { CONDITION_ACCEPTED, CONDITION_COMPLETED } from '../../api/index.js';
import type { StatusOwnership } from '../status-write.js';

/** The Run status fields the Run logic writes (RunStatusIntent and jobRef) and its condition `Completed`. */
export const RUN_STATUS_OWNERSHIP: StatusOwnership = { fields: ['observedGeneration', 'phase', 'conditions', 'startTime', 'completionTime', 'jobRef'], conditionTypes: [CONDITION_COMPLETED] };

/** The v1beta2 request status fields the Runs logic writes and its condition `Accepted`. */
export const REQUEST_STATUS_OWNERSHIP: StatusOwnership = { fields: ['observedGeneration', 'activeRunRef', 'recentRunRefs', 'conditions'], conditionTypes: [CONDITION_ACCEPTED] };
