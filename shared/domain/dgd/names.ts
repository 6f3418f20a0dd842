/**
 * Generated names: the PodCliqueSet name, clique and scaling-group names, and the Grove
 * 45-character combined-name budget.
 *
 * Source: ../shared/upstream-notes/grove.md §A.8 (Grove's `maxCombinedResourceNameLength`:
 * len(pcs) + len(clique) [+ len(pcsg) for scaling-group members] <= 45, so that a pod name
 * `<pcs>-<i>-<pcsg>-<j>-<clique>-<5 random>` stays within 63); upstream-notes/dgd.md §4.1
 * (`PCSNameForDGD`: the DGD name, else `name[:budget-5] + "-" + 4 hex of fnv32a`, budget at least 8).
 * @module
 */
import { GROVE_MAX_COMBINED_NAME_LENGTH, type Component, type Dgd } from '../../api/index.js';
import { isInterPodGms } from './gms.js';

/** The smallest PodCliqueSet name budget upstream shortens to (upstream-notes/dgd.md §4.1). */
export const MIN_PODCLIQUESET_NAME_BUDGET = 8;

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** True when `name` is a DNS-1123 subdomain (RFC 1123, at most 253 characters). Pure. */
export function isDns1123Subdomain(name: string): boolean {
  return name.length <= 253 && DNS1123_SUBDOMAIN.test(name);
}

/** True when `name` is a DNS-1123 label (at most 63 characters, no dots). Pure. */
export function isDns1123Label(name: string): boolean {
  return name.length <= 63 && DNS1123_LABEL.test(name);
}

/**
 * dns1123LabelProblems (apimachinery `validation.IsDNS1123Label`): why `value` is not a DNS-1123
 * label, in apimachinery's order and words: longer than 63, "must be no more than 63
 * characters"; then, unless it matches the label pattern, "must not contain dots" for a valid
 * subdomain, else the RFC 1123 regex message. Empty when it is a label. Pure.
 */
export function dns1123LabelProblems(value: string): string[] {
  const problems: string[] = [];
  if (value.length > 63) problems.push('must be no more than 63 characters');
  if (!DNS1123_LABEL.test(value)) {
    problems.push(
      DNS1123_SUBDOMAIN.test(value)
        ? 'must not contain dots'
        : "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    );
  }
  return problems;
}

/** 32-bit FNV-1a over the UTF-8 bytes of `text` (Go's hash/fnv New32a). Pure. */
export function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/**
 * Shortens `name` to at most `budget` characters as upstream does: kept whole when it fits,
 * else `name[:budget-5]` (trailing `-`/`.` trimmed, so the result stays DNS-1123) + `-` +
 * 4 hex digits of fnv32a(name) & 0xffff. Stable: the same name always gives the same result. Pure.
 */
export function shortenName(name: string, budget: number): string {
  if (name.length <= budget) return name;
  const suffix = (fnv32a(name) & 0xffff).toString(16).padStart(4, '0');
  const prefix = name.slice(0, Math.max(0, budget - 5)).replace(/[-.]+$/, '');
  return `${prefix}-${suffix}`;
}

/** The lower-cased clique/scaling-group base name of a component (`VllmWorker` -> `vllmworker`). Pure. */
export function componentBaseName(component: Pick<Component, 'name'>): string {
  return component.name.toLowerCase();
}

/**
 * Whether the component renders as a Grove scaling group: multinode, inter-pod GMS, or
 * `experimental.grove.forceScalingGroup` (upstream `UsesPCSG`; upstream-notes/dgd.md §2.3
 * "uses a PCSG").
 */
export function usesScalingGroup(component: Component): boolean {
  return isMultinode(component) || isInterPodGms(component) || component.experimental?.grove?.forceScalingGroup === true;
}

/** Whether the component spans several nodes (`multinode.nodeCount` > 1). */
export function isMultinode(component: Component): boolean {
  return (component.multinode?.nodeCount ?? 1) > 1;
}

/** Multinode clique names: leader `<name>-ldr`, workers `<name>-wkr` (upstream-notes/dgd.md §4.2). */
export function leaderCliqueName(component: Component): string {
  return `${componentBaseName(component)}-ldr`;
}
export function workerCliqueName(component: Component): string {
  return `${componentBaseName(component)}-wkr`;
}

/**
 * The characters a component adds to the Grove combined-name check: its clique name when
 * standalone; the scaling-group name plus its longest member clique name otherwise. Pure.
 */
export function componentNameBudget(component: Component): number {
  const base = componentBaseName(component).length;
  if (!usesScalingGroup(component)) return base;
  // The longest rendered clique (upstream `LongestPodCliqueNameForDGDComponent`): `-wkr`, or a
  // single-node inter-pod GMS weight server `-gms-0`.
  const longestClique = isMultinode(component) ? workerCliqueName(component).length : isInterPodGms(component) ? base + '-gms-0'.length : base;
  return base + longestClique;
}

/**
 * The PodCliqueSet name for a DGD: its name with dots as hyphens (Grove names a headless
 * Service after the PCS, and a Service name cannot contain dots), shortened with a stable
 * hash suffix to `45 - max(component budget)` characters (at least 8). Components passed
 * are the ones rendered into this PCS. Pure.
 */
export function podCliqueSetName(dgdName: string, components: readonly Component[]): string {
  const maxBudget = Math.max(0, ...components.map(componentNameBudget));
  const budget = Math.max(MIN_PODCLIQUESET_NAME_BUDGET, GROVE_MAX_COMBINED_NAME_LENGTH - maxBudget);
  return shortenName(dgdName.replace(/\./g, '-'), budget);
}

/**
 * The combined Grove name length of a component under a PCS name, or undefined when it fits.
 * Source: upstream-notes/dgd.md §3.5 "Grove name budget". Pure.
 */
export function groveNameOverflow(pcsName: string, component: Component): number | undefined {
  const combined = pcsName.length + componentNameBudget(component);
  return combined > GROVE_MAX_COMBINED_NAME_LENGTH ? combined : undefined;
}

/** The component Service name: `lower(<dgd>-<component>)`, dots as hyphens, at most 63 characters. Pure. */
export function componentServiceName(dgd: Pick<Dgd, 'metadata'>, component: Pick<Component, 'name'>): string {
  return shortenName(`${dgd.metadata.name ?? ''}-${component.name}`.toLowerCase().replace(/\./g, '-'), 63);
}
