/**
 * The LPX part of a DGD reconcile: the LPXGraphDeployment to apply and the child status merged
 * into the DGD's status.components and Ready. decideDgd (../reconcile-dgd.ts) calls this once
 * for a DGD with LPX components while `lpx.enabled=true`.
 *
 * Source: ../shared/upstream-notes/lpx.md §6.1 (handoff and mergeLPXChildStatus).
 * @module
 */
import { CONDITION_SCALING_DEFERRED, LpxGraphDeploymentSchema, LPX_REASON_FAILED, type Dgd } from '../../api/index.js';
import type { RenderedObject } from '../dgd/render.js';
import { decideLpxHandoff } from './handoff.js';
import { mergeLpxChildStatus, type LpxVerdict } from './readiness.js';
import { resolveLpxWorkloads } from './workloads.js';

export interface DgdLpxPart {
  /** The LPXGraphDeployment to apply; empty when a foreign object holds its name. */
  readonly apply: readonly RenderedObject[];
  /** Status entries of the LPX components. */
  readonly components: Record<string, Record<string, unknown>>;
  readonly verdict: LpxVerdict;
  /**
   * The child's `ScalingDeferred=True` (reason, message) while the LPX part holds back a replica
   * change: the DGD reports it as its own ("An LPX child's ScalingDeferred propagates to the
   * DGD", upstream-notes/dgd.md §4.7 step 6). Undefined when the child does not defer.
   */
  readonly scalingDeferred?: { readonly reason: string; readonly message: string };
}

/**
 * decideDgdLpx: the handoff ({@link decideLpxHandoff}) and the merged child status
 * ({@link mergeLpxChildStatus}). A foreign LPXGraphDeployment at the DGD's name is never
 * adopted: nothing is applied and the LPX part fails with "LPXGraphDeployment %q belongs to a
 * different source; adoption is not supported".
 * In: the parsed DGD; the observed LPXGD as stored (unparsed) or undefined. Pure.
 */
export function decideDgdLpx(dgd: Dgd, observedChild: Readonly<Record<string, unknown>> | undefined): DgdLpxPart {
  const workloads = resolveLpxWorkloads(dgd);
  const parsed = observedChild === undefined ? undefined : LpxGraphDeploymentSchema.safeParse(observedChild);
  const child = parsed?.success === true ? parsed.data : undefined;
  const handoff = decideLpxHandoff(dgd, child === undefined ? undefined : { ownerReferences: child.metadata.ownerReferences ?? [], annotations: child.metadata.annotations ?? {} });
  if (!handoff.ok) {
    return { apply: [], components: mergeLpxChildStatus(workloads, undefined, '').components, verdict: { kind: 'failed', reason: LPX_REASON_FAILED, message: handoff.message } };
  }
  const merged = mergeLpxChildStatus(
    workloads,
    child === undefined
      ? undefined
      : {
          generation: child.metadata.generation,
          inputRevision: child.spec.inputRevision,
          isDeleting: child.metadata.deletionTimestamp !== undefined,
          observedGeneration: child.status?.observedGeneration,
          conditions: child.status?.conditions ?? [],
          components: child.status?.components ?? {},
        },
    handoff.inputRevision,
  );
  const deferred = child?.status?.conditions?.find((c) => c.type === CONDITION_SCALING_DEFERRED && c.status === 'True');
  return { apply: [handoff.object], components: merged.components, verdict: merged.verdict, ...(deferred === undefined ? {} : { scalingDeferred: { reason: deferred.reason ?? '', message: deferred.message ?? '' } }) };
}
