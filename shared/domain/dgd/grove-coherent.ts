/**
 * The Coherent capability check: before a PodCliqueSet is written with `updateStrategy.type:
 * Coherent`, the installed Grove CRD must know that strategy.
 *
 * Source: upstream `internal/dynamo/grove_coherent_support.go` (upstream-notes/dgd.md §3.1
 * "Coherent capability check"): read the CRD `podcliquesets.grove.io`; its served `v1alpha1`
 * schema must list "Coherent" in the `spec.updateStrategy.type` enum, else "Grove Coherent
 * updates require Grove v0.1.0-alpha.14 or later and its matching CRDs". (The reference asks
 * for alpha.15 or later for the recovery fixes; the message is upstream's, word for word.)
 * @module
 */

/** The CRD the check reads. */
export const GROVE_PODCLIQUESET_CRD_NAME = 'podcliquesets.grove.io';

/** Upstream's error text when the installed Grove CRD lacks Coherent. */
export const MESSAGE_GROVE_COHERENT_UNSUPPORTED = 'Grove Coherent updates require Grove v0.1.0-alpha.14 or later and its matching CRDs';

/**
 * True when the `podcliquesets.grove.io` CRD serves `v1alpha1` with "Coherent" in the
 * `spec.updateStrategy.type` enum; false for anything else (no such version, not served, no
 * enum, an enum without it, a malformed object). Pure.
 */
export function isGroveCoherentSupported(crd: unknown): boolean {
  const versions = (crd as { spec?: { versions?: unknown } } | undefined)?.spec?.versions;
  if (!Array.isArray(versions)) return false;
  const v1alpha1 = versions.find((v: unknown) => (v as { name?: unknown }).name === 'v1alpha1') as { served?: unknown; schema?: unknown } | undefined;
  if (v1alpha1 === undefined || v1alpha1.served !== true) return false;
  let node: unknown = (v1alpha1.schema as { openAPIV3Schema?: unknown } | undefined)?.openAPIV3Schema;
  for (const key of ['spec', 'updateStrategy', 'type']) node = (node as { properties?: Record<string, unknown> } | undefined)?.properties?.[key];
  const values = (node as { enum?: unknown } | undefined)?.enum;
  return Array.isArray(values) && values.includes('Coherent');
}
