/**
 * Image-tag semantic versions, as the operator reads them to decide whether a profiler image
 * identifies its Dynamo release.
 *
 * Source: upstream deploy/operator/internal/runtimeversion/runtimeversion.go (`ParseImageVersion`),
 * as recorded in ../shared/upstream-notes/dgdr.md §4.3; dgdr-reference "runtimeVersionOverride".
 * @module
 */

/** SemVer 2.0 with an optional leading `v`/`V`, pre-release and build metadata (semver.org regex). */
const SEMVER_TAG = /^[vV]?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/** The MAJOR.MINOR.PATCH of an image tag (pre-release and build are ignored). */
export interface ImageVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
}

/**
 * Reads the semantic version of an image's tag.
 * In: an image reference (`registry/repo:tag`, optionally `@sha256:...`). Out: the version, or
 * `{ error }` with upstream's reason: `image "<i>" does not contain a tag`, or
 * `image "<i>" tag "<t>" is not a semantic version`.
 * Rules: the digest is stripped; the tag is the text after the last `:` that follows the last `/`
 * (so a registry port is not a tag). Source: runtimeversion.go `ParseImageVersion`. Pure.
 */
export function parseImageVersion(image: string): ImageVersion | { readonly error: string } {
  const withoutDigest = image.split('@')[0] ?? '';
  const lastSlash = withoutDigest.lastIndexOf('/');
  const colon = withoutDigest.lastIndexOf(':');
  if (colon <= lastSlash) return { error: `image ${JSON.stringify(image)} does not contain a tag` };
  const tag = withoutDigest.slice(colon + 1);
  const match = SEMVER_TAG.exec(tag);
  if (match === null) return { error: `image ${JSON.stringify(image)} tag ${JSON.stringify(tag)} is not a semantic version` };
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) };
}

/** Whether an image's tag is a parseable semantic version. Pure. */
export function hasSemanticVersionTag(image: string): boolean {
  return !('error' in parseImageVersion(image));
}

/**
 * The canonical `MAJOR.MINOR.PATCH` of an operator version (`v1.2.0` -> `1.2.0`, pre-release and
 * build dropped), or undefined when it does not parse; then no default image is applied.
 * Source: upstream-notes/dgdr.md §2.1 "Default image". Pure.
 */
export function canonicalVersion(version: string): string | undefined {
  const match = SEMVER_TAG.exec(version.trim());
  return match === null ? undefined : `${match[1]}.${match[2]}.${match[3]}`;
}
