/**
 * Shared shapes and small pure helpers of DGD admission: the config, the result, the context
 * every rule reads, and value predicates.
 *
 * Source: ../shared/STYLE.md §10-§11 (defaultX/validateX, FieldIssue as data);
 * ../shared/upstream-notes/dgd.md §3.
 * @module
 */
import type { Component, Dgd, FieldIssue, GroveUpdateStrategy } from '../../api/index.js';
import type { DgdrAdmissionConfig } from '../dgdr/admission.js';
import type { ClusterTopologies } from './topology.js';

/** The operator settings admission depends on. */
export interface AdmissionConfig {
  /** Feature gate `lpx.enabled` (dgd-reference: "LPX components are experimental ..."). */
  readonly lpxEnabled: boolean;
  /** `lpx.modelRegistryURL` (upstream-notes/lpx.md §4, §7); absent or empty: no registry. */
  readonly modelRegistryUrl?: string | undefined;
  /**
   * Full usernames (`system:serviceaccount:<ns>:<name>`) allowed to change the replicas of a
   * component a DynamoGraphDeploymentScalingAdapter owns: the reconcile function's service
   * account (./scaling-adapter.ts). Absent: only the Planner's service account.
   */
  readonly replicasModifiers?: readonly string[];
  /** DGDR defaulting: the operator version (and an explicit image) the default profiler image comes from; absent: ../dgdr/admission.ts defaults. */
  readonly dgdr?: DgdrAdmissionConfig;
}

/** What validation decides: every field issue (a denial when non-empty) and every warning. */
export interface ValidationResult {
  readonly issues: readonly FieldIssue[];
  readonly warnings: readonly string[];
}

/** The largest int32: Grove's replica and budget fields are int32 (upstream-notes/dgd.md §3.2 step 7). */
export const MAX_INT32 = 2_147_483_647;

/** True for a whole number in 1..2^31-1 ("must be a positive 32-bit integer"). Pure. */
export function isPositiveInt32(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= MAX_INT32;
}

/** True for a plain JSON object (not null, not an array). Pure. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Structural equality of JSON values (key order ignored; `undefined` members equal absent ones). Pure. */
export function isDeepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((item, i) => isDeepEqual(item, b[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  for (const key of keys) if (!isDeepEqual(left[key], right[key])) return false;
  return true;
}

/** `"a", "b"`: values quoted and joined as Kubernetes lists supported values. Pure. */
export function quoteList(values: readonly string[]): string {
  return values.map((v) => JSON.stringify(v)).join(', ');
}

/** `spec.components[i]`. Pure. */
export function componentPath(index: number): string {
  return `spec.components[${index}]`;
}

/** True when `path` is `prefix` or lies under it (`prefix.x`, `prefix[0]`). Pure. */
export function isPathUnder(path: string, prefix: string): boolean {
  if (!path.startsWith(prefix)) return false;
  const next = path.charAt(prefix.length);
  return next === '' || next === '.' || next === '[';
}

/** The shared LPX draft/target pair, by component index, when the LPX components form one. */
export interface LpxPair {
  readonly draftIndex: number;
  readonly targetIndex: number;
}

/**
 * Everything the rules read, computed once per request.
 * `old` is the parsed stored object on UPDATE (undefined on CREATE, or when it no longer parses);
 * `strategy` is the resolved update strategy (undefined when the annotation is absent or invalid).
 */
export interface AdmissionContext {
  readonly dgd: Dgd;
  readonly old: Dgd | undefined;
  readonly isUpdate: boolean;
  readonly config: AdmissionConfig;
  /** The resolved strategy; `undefined` means Grove's default, RollingRecreate. */
  readonly strategy: GroveUpdateStrategy | undefined;
  /** False when the strategy annotation is unsupported (the budget and outage rules then wait). */
  readonly isStrategyKnown: boolean;
  readonly oldStrategy: GroveUpdateStrategy | undefined;
  /** Old components by exact name (list-map key). Empty on CREATE. */
  readonly oldComponents: ReadonlyMap<string, Component>;
  readonly lpxPair: LpxPair | undefined;
  /** The requester's `userInfo.username`; undefined when the request did not say. */
  readonly username?: string | undefined;
  /**
   * The ClusterTopologyBindings the shell read for this request (./topology.ts
   * `clusterTopologyNamesToRead`); undefined when no reader is configured (live checks skipped).
   */
  readonly clusterTopologies?: ClusterTopologies | undefined;
}

/** The effective Grove strategy: the annotation's, else Grove's default RollingRecreate (dgd-reference "Grove update strategy"). Pure. */
export function effectiveStrategy(strategy: GroveUpdateStrategy | undefined): GroveUpdateStrategy {
  return strategy ?? 'RollingRecreate';
}

/** True for a shared LPX draft component (the agent-only half of a draft/target pair). Pure. */
export function isSharedDraft(ctx: Pick<AdmissionContext, 'lpxPair'>, index: number): boolean {
  return ctx.lpxPair?.draftIndex === index;
}

/** True for an LPX component whose replicas are omitted (external capacity ownership). Pure. */
export function hasExternalCapacity(component: Component): boolean {
  return component.type === 'lpx' && component.replicas === undefined;
}

/**
 * The replica count admission reasons about: the authored value, else 1 for an ordinary
 * component (defaulting sets it), else undefined for LPX (omitted means external capacity). Pure.
 */
export function desiredReplicas(component: Component): number | undefined {
  return component.replicas ?? (component.type === 'lpx' ? undefined : 1);
}
