/**
 * Availability and rollout budget of a component: the deprecated and native minimum forms,
 * the effective minimum, the provider-override target, and the Grove update strategy.
 *
 * Source: ../shared/reference/dgd-reference.txt "Configure native minimum availability",
 * "Grove rollout budget overrides", "Grove update strategy"; upstream-notes/dgd.md §2.3, §3.1-§3.3.
 * @module
 */
import { ANNOTATION_GROVE_UPDATE_STRATEGY, GROVE_UPDATE_STRATEGIES, type Component, type Dgd, type GroveUpdateStrategy } from '../../api/index.js';
import { usesScalingGroup } from './names.js';

export type ProviderOverrideTarget = 'PodCliqueSet' | 'PodCliqueTemplateSpec' | 'PodCliqueScalingGroupConfig';

/**
 * The target a component-scope providerOverride resolves to: `PodCliqueScalingGroupConfig`
 * for LPX and scaling-group components, else `PodCliqueTemplateSpec` (upstream-notes/dgd.md §2.3). Pure.
 */
export function componentOverrideTarget(component: Component): ProviderOverrideTarget {
  return component.type === 'lpx' || usesScalingGroup(component) ? 'PodCliqueScalingGroupConfig' : 'PodCliqueTemplateSpec';
}

/** Path segments of the native minimum inside `providerOverride.value` for this component's shape. */
export function nativeMinAvailablePath(component: Component): readonly string[] {
  return componentOverrideTarget(component) === 'PodCliqueScalingGroupConfig' ? ['minAvailable'] : ['spec', 'minAvailable'];
}

/**
 * The native minimum authored in the component's providerOverride: `value.spec.minAvailable`
 * for a standalone component, `value.minAvailable` for a scaling-group component.
 * Out: the value as authored (possibly not a number), or undefined when absent. Pure.
 */
export function nativeMinAvailable(component: Component): unknown {
  let node: unknown = component.providerOverride?.value;
  for (const key of nativeMinAvailablePath(component)) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node ?? undefined;
}

/**
 * The effective minimum: the deprecated `minAvailable`, else the native provider value, else 1
 * ("An omitted minimum resolves to 1 during rendering", dgd-reference). Pure.
 */
export function effectiveMinAvailable(component: Component): number {
  if (component.minAvailable !== undefined) return component.minAvailable;
  const native = nativeMinAvailable(component);
  return typeof native === 'number' ? native : 1;
}

/** The authored `providerOverride.value.rollingUpdate.maxUnavailable`, or undefined. Pure. */
export function maxUnavailable(component: Component): unknown {
  const rollingUpdate = component.providerOverride?.value['rollingUpdate'];
  if (typeof rollingUpdate !== 'object' || rollingUpdate === null) return undefined;
  return (rollingUpdate as Record<string, unknown>)['maxUnavailable'] ?? undefined;
}

export type UpdateStrategyResult =
  | { readonly ok: true; readonly strategy: GroveUpdateStrategy | undefined }
  | { readonly ok: false; readonly value: string };

/**
 * The Grove update strategy the DGD selects: `metadata.annotations["nvidia.com/grove-update-strategy"]`
 * matched exactly (case-sensitive, no trimming); absent -> undefined (Grove's default,
 * RollingRecreate). `spec.annotations` selects nothing. Neither minimum form selects Coherent.
 * Source: dgd-reference "Grove update strategy"; upstream-notes/dgd.md §3.1. Pure.
 */
export function resolveUpdateStrategy(dgd: Pick<Dgd, 'metadata'>): UpdateStrategyResult {
  const value = dgd.metadata.annotations?.[ANNOTATION_GROVE_UPDATE_STRATEGY];
  if (value === undefined) return { ok: true, strategy: undefined };
  const strategy = GROVE_UPDATE_STRATEGIES.find((s) => s === value);
  return strategy === undefined ? { ok: false, value } : { ok: true, strategy };
}
