/**
 * The LPX component's experimental options, `spec.components[].lpx.experimental` (D+, upstream's
 * newest API: `api/v1beta1` `LPXExperimentalSpec`, `LPXLocalPartitions`): `localPartitions{mode:
 * All|IDs, ids}` selects the partitions of a hybrid build that the Cyborg conductor runs on its
 * own GPU; `checkpoint` (refused by our admission, as the LPX checkpoint stanza is).
 *
 * The schema is the CRD's: `mode` an enum, `ids` a set of 1 or more compiler partition ids in
 * 0..4294967295, and upstream's CEL rule `self.mode == 'IDs' ? has(self.ids) : !has(self.ids)`
 * ("ids is required when mode is IDs and forbidden otherwise"). Kept in its own file so both
 * ./dgd.ts (the component) and ./lpx.ts (the stanza as the LPX path reads it) use one copy.
 *
 * Source: ../shared/upstream-notes/lpx.md §0 "D+", §1.1 `localPartitions`; upstream
 * deploy/operator/api/v1beta1 LPX types (`LPXConfig.Experimental`, the kubebuilder markers).
 * @module
 */
import { z } from 'zod';
import { looseObject } from './core.js';

/** `lpx.experimental.localPartitions.mode` (upstream `LPXLocalPartitionsModeAll`, `LPXLocalPartitionsModeIDs`). */
export const LPX_LOCAL_PARTITIONS_MODES = ['All', 'IDs'] as const;
export type LpxLocalPartitionsMode = (typeof LPX_LOCAL_PARTITIONS_MODES)[number];
/** Largest compiler partition id (upstream `+kubebuilder:validation:items:Maximum=4294967295`). */
export const MAX_LPX_PARTITION_ID = 4_294_967_295;
/** Upstream's CEL rule on `LPXLocalPartitions` and its message. */
export const LPX_LOCAL_PARTITIONS_RULE = "self.mode == 'IDs' ? has(self.ids) : !has(self.ids)";
export const LPX_LOCAL_PARTITIONS_RULE_MESSAGE = 'ids is required when mode is IDs and forbidden otherwise';

export const LpxLocalPartitionsSchema = z
  .object({
    mode: z.enum(LPX_LOCAL_PARTITIONS_MODES),
    ids: z.array(z.number().int().min(0).max(MAX_LPX_PARTITION_ID)).min(1).meta({ 'x-kubernetes-list-type': 'set' }).optional(),
  })
  .meta({ 'x-kubernetes-validations': [{ rule: LPX_LOCAL_PARTITIONS_RULE, message: LPX_LOCAL_PARTITIONS_RULE_MESSAGE }] });
export type LpxLocalPartitions = z.infer<typeof LpxLocalPartitionsSchema>;

export const LpxExperimentalSchema = z
  .object({
    localPartitions: LpxLocalPartitionsSchema.optional(),
    checkpoint: looseObject().optional(),
  })
  .loose();

/**
 * `spec.components[].lpx` in the DGD schema and CRD: the typed experimental options; the rest
 * (buildId, scheduling, ...) is preserved as written and checked by admission (./lpx.ts
 * `LpxConfigSchema` reads it).
 */
export const LpxComponentConfigSchema = z.object({ experimental: LpxExperimentalSchema.optional() }).loose();
