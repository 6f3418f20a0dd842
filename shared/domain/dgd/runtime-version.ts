/**
 * Version gates of rendering: the Dynamo runtime version of a component (from
 * `runtimeVersionOverride`, else the main container image tag) and the operator origin version
 * of a DGD (annotation `nvidia.com/dynamo-operator-origin-version`).
 *
 * Source: upstream `deploy/operator/internal/runtimeversion/runtimeversion.go` (tag pattern,
 * prerelease and build suffixes ignored), `internal/features/runtime/gates.go` (runtime gates),
 * `internal/features/compatibility/gate.go` (origin gates: an absent or malformed origin keeps
 * the legacy default). Pure.
 * @module
 */
import { ANNOTATION_OPERATOR_ORIGIN_VERSION, MAIN_CONTAINER_NAME, type Component, type Dgd } from '../../api/index.js';

/** A runtime or operator version's semver core. */
export interface Version {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
}


/** Runtime 1.5.0 enables the canary health check (`CanaryHealthChecks`, upstream `features/runtime/gates.go`). */
export const GATE_CANARY_HEALTH_CHECKS: Version = { major: 1, minor: 5, patch: 0 };
/** Runtime 1.5.0 raises the worker liveness failureThreshold from 1 to 3 (`IncreasedWorkerFailureThreshold`). */
export const GATE_INCREASED_WORKER_FAILURE_THRESHOLD: Version = { major: 1, minor: 5, patch: 0 };
/** Runtime 1.6.0 frontends and native EPPs match worker generations strictly (DYN_NAMESPACE_PREFIX_STRICT; upstream `TestComponentNamespacePrefixRuntimeCompatibility`). */
export const GATE_STRICT_NAMESPACE_PREFIX: Version = { major: 1, minor: 6, patch: 0 };
/** Origin 1.0.0 selects vLLM multiprocessing over Ray (`VLLMMultiprocessing`, upstream `features/compatibility/gates.go`). */
export const GATE_VLLM_MULTIPROCESSING: Version = { major: 1, minor: 0, patch: 0 };
/** Origin 1.6.0 adds `DYNAMO_LEADER_ADDRESS`/`DYNAMO_RANK` (upstream docs "Portable Topology Environment Variables"). */
export const GATE_MULTINODE_TOPOLOGY_ALIASES: Version = { major: 1, minor: 6, patch: 0 };

const SEMVER = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/** Parses `MAJOR.MINOR.PATCH[-pre][+build]`; undefined when it is not one. Pure. */
export function parseVersion(value: string): Version | undefined {
  const match = SEMVER.exec(value.trim());
  if (match === null) return undefined;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) };
}

/** Masterminds semver `NewVersion` (non-strict): optional `v`, minor and patch may be omitted. */
const LOOSE_SEMVER = /^v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$/;

/**
 * Parses an operator origin version as upstream does (`semver.NewVersion`, Masterminds v3,
 * non-strict: `v1.6.0`, `1.6` and `1` are accepted, a missing minor or patch is 0); undefined
 * when it is not one. Pure.
 */
export function parseOriginVersion(value: string): Version | undefined {
  const match = LOOSE_SEMVER.exec(value);
  if (match === null) return undefined;
  return { major: Number(match[1]), minor: Number(match[2] ?? 0), patch: Number(match[3] ?? 0) };
}

/**
 * The version in an image tag (`repo/name:v1.2.3-cuda13` -> 1.2.3; a leading `v` or `V` is
 * allowed, a digest is ignored); undefined without a semver tag, e.g. `:latest` or `:sha-123`.
 * Source: upstream `runtimeversion.ParseImageVersion` and its test rows. Pure.
 */
export function parseImageVersion(image: string): Version | undefined {
  let ref = image.trim();
  const digest = ref.indexOf('@');
  if (digest >= 0) ref = ref.slice(0, digest);
  const lastSlash = ref.lastIndexOf('/');
  const lastColon = ref.lastIndexOf(':');
  if (lastColon <= lastSlash) return undefined;
  return parseVersion(ref.slice(lastColon + 1).replace(/^[vV]/, ''));
}

/** True when `version` is at least `minimum`. */
export function isAtLeast(version: Version, minimum: Version): boolean {
  if (version.major !== minimum.major) return version.major > minimum.major;
  if (version.minor !== minimum.minor) return version.minor > minimum.minor;
  return version.patch >= minimum.patch;
}

/**
 * The Dynamo runtime version of a component: `runtimeVersionOverride`, else the tag of the main
 * container image (component template, else the first role template carrying one); undefined
 * when neither parses. Pure.
 */
export function componentRuntimeVersion(component: Component): Version | undefined {
  if (component.runtimeVersionOverride !== undefined) return parseVersion(component.runtimeVersionOverride);
  const templates = [component.podTemplate, ...(component.roles ?? []).map((r) => r.podTemplate)];
  for (const template of templates) {
    const image = template?.spec?.containers?.find((c) => c.name === MAIN_CONTAINER_NAME)?.image;
    if (image !== undefined && image !== '') return parseImageVersion(image);
  }
  return undefined;
}

/** A runtime gate: enabled only for a known runtime version at or above the threshold (upstream `runtime.Gate.Enabled`). Pure. */
export function isRuntimeGateEnabled(gate: Version, runtime: Version | undefined): boolean {
  return runtime !== undefined && isAtLeast(runtime, gate);
}

/**
 * An origin gate: enabled when the DGD's origin version (`nvidia.com/dynamo-operator-origin-version`,
 * stamped by admission on CREATE, see admission/origin-version.ts) is at or above the threshold.
 * A DGD without the annotation was created before any operator stamped it (an older upstream
 * operator): it keeps the legacy behaviour, so the gate is off; a malformed value is an unknown
 * origin and keeps it too. The configured operator version is deliberately not read here: a DGD
 * created by this control plane carries the version it was created under, so raising the
 * configured version never changes how it renders.
 * Source: upstream `compatibility.OperatorOriginFeatureGate.IsEnabled` ("When the annotation is
 * absent (pre-upgrade DGD), IsEnabled returns false to preserve backward compatibility") and
 * `VersionsFromAnnotations`. Pure.
 */
export function isOriginGateEnabled(gate: Version, dgd: Pick<Dgd, 'metadata'>): boolean {
  const annotated = dgd.metadata.annotations?.[ANNOTATION_OPERATOR_ORIGIN_VERSION];
  const origin = annotated === undefined ? undefined : parseOriginVersion(annotated);
  return origin !== undefined && isAtLeast(origin, gate);
}
