/**
 * The hybrid conductor's GPU rule: a hybrid-compiled LPX build runs its GPU runtime (Cyborg) in
 * the conductor's pods, so the conductor's `main` container must hold GPUs, either a whole,
 * positive `nvidia.com/gpu` count (a limit, with any request equal to it) or a Pod resource claim
 * (DRA) it references by name.
 *
 * Source: upstream `internal/dynamo/lpx/cyborg_runtime.go` (`EffectiveCyborgGPUCount`; test
 * `TestEffectiveCyborgGPUCount`) and `resolve_selected_workload.go` (`validateWorkloadConductor`:
 * "Hybrid execution is selected by immutable build metadata, not template presence"; test
 * `TestResolveWorkload...` "Validate claim consumption by the Cyborg main container"). Every
 * function here is pure.
 * @module
 */
import { LPX_ROLE_CONDUCTOR, MAIN_CONTAINER_NAME, type Component } from '../../api/index.js';
import type { Derived } from './derive.js';

/** The classic GPU scalar hybrid Cyborg inventory counts (upstream `commonconsts.KubeResourceGPUNvidia`). */
export const NVIDIA_GPU_RESOURCE = 'nvidia.com/gpu';

/** Go's `resource.ErrFormatWrong`, the error of a quantity that is not one. */
const QUANTITY_FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** An exact quantity value, `numerator / denominator` (denominator > 0). */
interface Rational {
  readonly numerator: bigint;
  readonly denominator: bigint;
}

const DECIMAL_SUFFIX_EXPONENTS: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX_POWERS: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

/**
 * parseQuantity (Kubernetes `resource.ParseQuantity`, exactly): a signed decimal number and one
 * of the SI suffixes (`n`..`E`), the binary suffixes (`Ki`..`Ei`) or a decimal exponent
 * (`e3`, `E-2`). A JSON number is its decimal text. Out: the exact value, or undefined when
 * the text is not a quantity. Pure.
 */
export function parseQuantity(quantity: string | number): Rational | undefined {
  const match = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:([numkMGTPE]|[KMGTPE]i)?|[eE]([+-]?\d+))$/.exec(String(quantity));
  if (match === null) return undefined;
  const [, sign = '', number = '', suffix = '', exponentText] = match;
  const [whole = '', fraction = ''] = number.split('.');
  let numerator = BigInt(`${whole}${fraction}` || '0') * (sign === '-' ? -1n : 1n);
  let denominator = 10n ** BigInt(fraction.length);
  const binary = BINARY_SUFFIX_POWERS[suffix];
  const exponent = exponentText === undefined ? (DECIMAL_SUFFIX_EXPONENTS[suffix] ?? 0) : Number(exponentText);
  if (binary !== undefined) numerator *= 2n ** BigInt(binary);
  else if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
  else denominator *= 10n ** BigInt(-exponent);
  return { numerator, denominator };
}

interface Resources {
  readonly limits?: Readonly<Record<string, string | number>>;
  readonly requests?: Readonly<Record<string, string | number>>;
  readonly claims?: readonly { readonly name?: string }[];
}

/** A quantity that must be a whole positive number of GPUs, or its upstream error (`kind`: limit or request). */
function wholeGpuCount(kind: 'limit' | 'request', quantity: string | number): Derived<bigint> {
  const value = parseQuantity(quantity);
  const shown = JSON.stringify(String(quantity));
  if (value === undefined) return { ok: false, error: `Cyborg GPU ${kind}: ${QUANTITY_FORMAT_ERROR}` };
  if (value.numerator % value.denominator !== 0n) {
    return { ok: false, error: `Cyborg GPU ${kind}: GPU resource ${JSON.stringify(NVIDIA_GPU_RESOURCE)} quantity ${shown} must be a whole number` };
  }
  const count = value.numerator / value.denominator;
  if (count <= 0n) return { ok: false, error: `Cyborg GPU ${kind} ${JSON.stringify(NVIDIA_GPU_RESOURCE)} must be positive, got ${shown}` };
  return { ok: true, value: count };
}

/**
 * effectiveCyborgGpuCount (upstream `EffectiveCyborgGPUCount`): the `nvidia.com/gpu` count a
 * container's resources give hybrid Cyborg inventory. None (0) when neither a limit nor a
 * request names it (DRA claims and other scalars such as MIG profiles are not counted); a limit
 * alone is the count (Kubernetes defaults the request from it); an explicit request needs an
 * equal limit. Errors, quantities quoted as authored (upstream prints Go's canonical form,
 * the same for canonical input): "Cyborg GPU limit: GPU resource "nvidia.com/gpu" quantity %q
 * must be a whole number", "Cyborg GPU limit "nvidia.com/gpu" must be positive, got %q", the
 * same for "request", "Cyborg GPU request "nvidia.com/gpu" requires an equal limit", "Cyborg
 * GPU request "nvidia.com/gpu" must equal its limit, got request %q and limit %q".
 * In: the container's `resources`. Out: the count. Pure.
 */
export function effectiveCyborgGpuCount(resources: Resources | undefined): Derived<number> {
  const limit = resources?.limits?.[NVIDIA_GPU_RESOURCE];
  const request = resources?.requests?.[NVIDIA_GPU_RESOURCE];
  if (limit === undefined && request === undefined) return { ok: true, value: 0 };
  let limitCount = 0n;
  if (limit !== undefined) {
    const counted = wholeGpuCount('limit', limit);
    if (!counted.ok) return counted;
    limitCount = counted.value;
  }
  if (request !== undefined) {
    const counted = wholeGpuCount('request', request);
    if (!counted.ok) return counted;
    if (limit === undefined) return { ok: false, error: `Cyborg GPU request ${JSON.stringify(NVIDIA_GPU_RESOURCE)} requires an equal limit` };
    if (counted.value !== limitCount) {
      return { ok: false, error: `Cyborg GPU request ${JSON.stringify(NVIDIA_GPU_RESOURCE)} must equal its limit, got request ${JSON.stringify(String(request))} and limit ${JSON.stringify(String(limit))}` };
    }
  }
  return { ok: true, value: Number(limitCount) };
}

interface PodSpecView {
  readonly containers?: readonly { readonly name?: string; readonly resources?: Resources }[];
  readonly resourceClaims?: readonly { readonly name?: string }[];
}

/**
 * validateHybridConductorDevices (upstream `validateWorkloadConductor`, hybrid arm): for a
 * hybrid-compiled build the conductor's `main` container needs a positive GPU count
 * ({@link effectiveCyborgGpuCount}) or a container claim naming one of the Pod's
 * `resourceClaims` ("A Pod claim supplies devices only to containers that reference its local
 * name": a sidecar's claim, an unused Pod claim or the external ResourceClaim name do not count).
 * Errors: "component %q conductor resources: <count error>"; "component %q conductor main
 * container requires a declared resourceClaim or a positive nvidia.com/gpu request" (also when
 * the conductor or its `main` container is missing). In: the component's roles, whether the
 * build is hybrid-compiled (`compilationMode: lpx`). Out: the error text, or undefined. Pure.
 */
export function validateHybridConductorDevices(component: Pick<Component, 'name' | 'roles'>, isHybridBuild: boolean): string | undefined {
  if (!isHybridBuild) return undefined;
  const spec = (component.roles ?? []).find((r) => r.name === LPX_ROLE_CONDUCTOR)?.podTemplate?.spec as PodSpecView | undefined;
  const main = (spec?.containers ?? []).find((c) => c.name === MAIN_CONTAINER_NAME);
  const count = effectiveCyborgGpuCount(main?.resources);
  if (!count.ok) return `component ${JSON.stringify(component.name)} conductor resources: ${count.error}`;
  if (count.value > 0) return undefined;
  const podClaims = new Set((spec?.resourceClaims ?? []).map((c) => c.name));
  if ((main?.resources?.claims ?? []).some((claim) => claim.name !== undefined && podClaims.has(claim.name))) return undefined;
  return `component ${JSON.stringify(component.name)} conductor main container requires a declared resourceClaim or a positive ${NVIDIA_GPU_RESOURCE} request`;
}
