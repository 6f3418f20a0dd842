/**
 * Field issues: validation problems as data, with paths printed the way Kubernetes prints
 * them (`spec.components[1].replicas`, `metadata.annotations[nvidia.com/grove-update-strategy]`).
 *
 * Source: ../shared/STYLE.md §11; k8s.io/apimachinery/pkg/util/validation/field.
 * @module
 */
import type { z } from 'zod';

export type FieldIssueType = 'Required' | 'Invalid' | 'Forbidden' | 'NotSupported' | 'Duplicate' | 'TooLong' | 'TooMany';

/** One validation problem. `path` is already rendered (see {@link renderPath}). */
export interface FieldIssue {
  readonly path: string;
  readonly type: FieldIssueType;
  readonly detail: string;
  readonly value?: unknown;
}

/** A path segment: a field name, a list index, or a map key (printed in brackets). */
export type PathSegment = string | number | { readonly key: string };

/**
 * Renders a path the way Kubernetes field errors print it: fields joined by dots, list
 * indices and map keys in brackets. `['spec', 'components', 1, 'replicas']` ->
 * `spec.components[1].replicas`. Pure.
 */
export function renderPath(segments: readonly PathSegment[]): string {
  let out = '';
  for (const segment of segments) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (typeof segment === 'object') out += `[${segment.key}]`;
    else out += out === '' ? segment : `.${segment}`;
  }
  return out;
}

const TYPE_TEXT: Readonly<Record<FieldIssueType, string>> = {
  Required: 'Required value',
  Invalid: 'Invalid value',
  Forbidden: 'Forbidden',
  NotSupported: 'Unsupported value',
  Duplicate: 'Duplicate value',
  TooLong: 'Too long',
  TooMany: 'Too many',
};

/**
 * Formats one issue as Kubernetes' field.Error does: `<path>: <Type text>: <value>: <detail>`
 * (the value is printed for Invalid, NotSupported, Duplicate and TooMany only). A list or map
 * longer than 120 characters of JSON prints as `"array"` or `"object"`, as the API server
 * prints a CEL failure, so a denial never echoes a whole spec back. Pure.
 */
export function formatIssue(issue: FieldIssue): string {
  const showValue = issue.value !== undefined && (issue.type === 'Invalid' || issue.type === 'NotSupported' || issue.type === 'Duplicate' || issue.type === 'TooMany');
  const value = showValue ? `: ${renderValue(issue.value)}` : '';
  return `${issue.path}: ${TYPE_TEXT[issue.type]}${value}: ${issue.detail}`;
}

/** Longest value printed whole; a larger list or map prints as its type name. */
const MAX_PRINTED_VALUE_LENGTH = 120;

function renderValue(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  const json = JSON.stringify(value) ?? String(value);
  if (json.length <= MAX_PRINTED_VALUE_LENGTH || value === null || typeof value !== 'object') return json;
  return Array.isArray(value) ? '"array"' : '"object"';
}

/**
 * Fields whose value is a map: the segment after one is a key, printed in brackets
 * (`metadata.annotations[nvidia.com/grove-update-strategy]`, `spec.services[Frontend]`).
 */
const MAP_FIELDS: ReadonlySet<string> = new Set(['annotations', 'labels', 'services', 'nodeSelector', 'limits', 'requests', 'matchLabels']);

function zodPathSegments(path: readonly PropertyKey[]): PathSegment[] {
  return path.map((segment, index) => {
    if (typeof segment === 'number') return segment;
    const previous = path[index - 1];
    const key = typeof segment === 'symbol' ? String(segment) : segment;
    return typeof previous === 'string' && MAP_FIELDS.has(previous) ? { key } : key;
  });
}

/** Joins issues into one message, as an aggregated Invalid status lists them: `[a, b]`. Pure. */
export function formatIssues(issues: readonly FieldIssue[]): string {
  if (issues.length === 1 && issues[0] !== undefined) return formatIssue(issues[0]);
  return `[${issues.map(formatIssue).join(', ')}]`;
}

/**
 * Converts zod issues to field issues. Zod paths are relative to the parsed value; `prefix`
 * is prepended (e.g. `['spec']`). Missing values become Required, enum misses NotSupported,
 * everything else Invalid. Pure.
 */
export function fromZodIssues(issues: readonly z.core.$ZodIssue[], prefix: readonly PathSegment[] = []): FieldIssue[] {
  return issues.map((issue) => {
    const path = renderPath([...prefix, ...zodPathSegments(issue.path)]);
    if (issue.code === 'invalid_type' && issue.input === undefined) {
      return { path, type: 'Required', detail: 'must be specified' } satisfies FieldIssue;
    }
    if (issue.code === 'invalid_value') {
      return { path, type: 'NotSupported', detail: `supported values: ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`, value: issue.input } satisfies FieldIssue;
    }
    if (issue.code === 'too_big' && issue.origin === 'string') {
      return { path, type: 'TooLong', detail: `may not be more than ${String(issue.maximum)} bytes` } satisfies FieldIssue;
    }
    if (issue.code === 'too_big' && issue.origin === 'array') {
      const count = Array.isArray(issue.input) ? issue.input.length : undefined;
      return { path, type: 'TooMany', ...(count === undefined ? {} : { value: count }), detail: `must have at most ${String(issue.maximum)} items` } satisfies FieldIssue;
    }
    return { path, type: 'Invalid', detail: kubernetesDetail(issue), value: issue.input } satisfies FieldIssue;
  });
}

/** Kubernetes-style wording for the zod issues that have one; zod's message otherwise. */
function kubernetesDetail(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'too_small':
      if (issue.origin === 'number' || issue.origin === 'int') return `must be greater than ${issue.inclusive === false ? '' : 'or equal to '}${String(issue.minimum)}`;
      if (issue.origin === 'array') return `must have at least ${String(issue.minimum)} items`;
      if (issue.origin === 'string') return `must be at least ${String(issue.minimum)} characters`;
      return issue.message;
    case 'too_big':
      if (issue.origin === 'number' || issue.origin === 'int') return `must be less than ${issue.inclusive === false ? '' : 'or equal to '}${String(issue.maximum)}`;
      if (issue.origin === 'array') return `must have at most ${String(issue.maximum)} items`;
      return issue.message;
    case 'invalid_type':
      return `must be of type ${issue.expected === 'int' ? 'integer' : issue.expected}`;
    default:
      return issue.message;
  }
}

/** The own property names that a plain-object assignment would take as the prototype, not a key. */
const PROTOTYPE_KEYS = new Set(['__proto__']);

/**
 * Whether a parsed JSON value holds an own key `__proto__` anywhere: the same keys
 * {@link findPrototypeKeys} reports, found without building paths, so a hot path (the validating
 * webhook) can afford to ask on every review and send only the rare hit down the reporting path.
 * In: any JSON value. Out: true when `findPrototypeKeys(value)` is not empty. Pure.
 */
export function hasPrototypeKeys(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (const item of value) if (typeof item === 'object' && item !== null && hasPrototypeKeys(item)) return true;
    return false;
  }
  // for-in, not Object.keys: no array per object (twice as fast on a DGD); a parsed JSON object
  // has no inherited enumerable keys, so both see the same keys.
  for (const key in value) {
    if (key === '__proto__') return true;
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'object' && item !== null && hasPrototypeKeys(item)) return true;
  }
  return false;
}

/**
 * Finds every own key `__proto__` in a parsed JSON value, with its path (maps in brackets, as
 * Kubernetes prints map keys). JSON.parse keeps such a key as an own property, but any code that
 * copies a map by assignment (zod's `z.record` among it) turns it into the prototype, so the key
 * would vanish from validation while the API server stores it (issue 12: a v1alpha1 service
 * named `__proto__` slipped through). Refusing it at the edge keeps every later step honest.
 * `constructor` and other names need no check: assignment keeps them as keys.
 * In: any JSON value. Out: one Invalid issue per key found (depth-first, in key order). Pure.
 */
export function findPrototypeKeys(value: unknown, path: readonly PathSegment[] = []): FieldIssue[] {
  if (typeof value !== 'object' || value === null) return [];
  if (Array.isArray(value)) return value.flatMap((item, index) => findPrototypeKeys(item, [...path, index]));
  const issues: FieldIssue[] = [];
  for (const key of Object.keys(value)) {
    if (PROTOTYPE_KEYS.has(key)) {
      issues.push({ path: renderPath([...path, { key }]), type: 'Invalid', value: key, detail: 'a name that JavaScript takes as an object prototype cannot be a key here' });
      continue;
    }
    issues.push(...findPrototypeKeys((value as Record<string, unknown>)[key], [...path, key]));
  }
  return issues;
}
