/**
 * Normalizing an acquired build snapshot by its selected compiler contract: only the contract
 * the inventory selected is decoded, so malformed split data can never reach the legacy reader.
 *
 * Source: upstream `internal/dynamo/lpx/build_snapshot.go` `normalizeBuildSnapshot` ("Decode only
 * the selected contract; malformed split data cannot reach the legacy reader"); upstream tests
 * `model_deployment_v1_test.go` `TestDeploymentContractCorruptionNeverUsesLegacy`,
 * `TestDeploymentContractRejectsCorruptNewOnly`.
 * @module
 */
import type { BuildContractFormat } from './build-snapshot.js';
import type { LpxBuild } from './build.js';
import { normalizeGbuildDeploymentV1 } from './deployment-v1.js';
import { normalizeGbuildManifestV2 } from './manifest-v2.js';

/**
 * normalizeBuildSnapshot: the build the fenced contract bytes decode to.
 * In: the selected format (`selectBuildContract`), the acquired build URL, the contract file's
 * bytes and the canonical inventory (the split contract checks its execution reference against
 * it). Out: the build, or the decoder's or validator's upstream error text. Pure.
 */
export function normalizeBuildSnapshot(
  format: BuildContractFormat,
  buildRef: string,
  bytes: Uint8Array,
  inventory: readonly string[],
): { readonly ok: true; readonly build: LpxBuild } | { readonly ok: false; readonly error: string } {
  return format === 'deploymentV1' ? normalizeGbuildDeploymentV1(buildRef, bytes, inventory) : normalizeGbuildManifestV2(buildRef, bytes);
}
