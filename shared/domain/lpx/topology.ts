/**
 * XT compiler topology names: their chip count and the node count they occupy.
 *
 * Source: upstream `internal/dynamo/lpx` topology parser (`topologyRe`,
 * `legacyTopologyRe`, `Topology`, `parse`, `Topology.Replicas`): a name with `__` separators
 * must match `<a>__<b>__<N>C__G_<g>__<c>__GHZ_<f>__<d>[__G_<g2>][__<e>]` and carries its chip
 * count as `<N>C`; an older name carries it as `<N>_CHIP`.
 * @module
 */
import { LPU_CHIPS_PER_NODE, type LpxTopology } from './build.js';

/** Upstream `topologyRe` (RE2; the lazy groups behave the same in JavaScript). Group 3 is the chip count. */
const TOPOLOGY_RE = /^(.+?)__(.+?)__([0-9]+)C__G_([0-9_]+?)__(.+?)__GHZ_([0-9_]+?)__(.+?)(?:__G_([0-9_]+?))?(?:__(.+?))?$/d;
/** Upstream `legacyTopologyRe`. */
const LEGACY_TOPOLOGY_RE = /(^|_)(-?\d+)_CHIP(_|$)/;

export type TopologyResult = { readonly ok: true; readonly topology: LpxTopology } | { readonly ok: false; readonly error: string };

/**
 * parseTopology (upstream `parse`): the chip count of an XT topology name and its node count
 * ({@link topologyReplicas}). `raw` is the name as given (not trimmed). For a `__` name the
 * compatibility key is the name without its chip count (upstream `compatibilityKey`: two
 * partitions whose names differ only in chips may be collapsed by prop-sync).
 * Failures: "topology %q does not match expected pattern"; a count beyond Go's int,
 * "parsing chip count from %q: strconv.Atoi: parsing %q: value out of range". Pure.
 */
export function parseTopology(raw: string): TopologyResult {
  if (raw.includes('__')) {
    const match = TOPOLOGY_RE.exec(raw);
    const span = match?.indices?.[3];
    if (match === null || span === undefined) return { ok: false, error: `topology ${goQuote(raw)} does not match expected pattern` };
    const digits = raw.slice(span[0], span[1]);
    const chipCount = atoi(raw, digits);
    if (!chipCount.ok) return chipCount;
    return { ok: true, topology: topologyOf(raw, chipCount.value, raw.slice(0, span[0]) + raw.slice(span[1])) };
  }
  const legacy = LEGACY_TOPOLOGY_RE.exec(raw)?.[0] ?? '';
  const match = trimUnderscores(legacy);
  if (match === '') return { ok: false, error: `topology ${goQuote(raw)} does not match expected pattern` };
  const digits = match.endsWith('_CHIP') ? match.slice(0, -'_CHIP'.length) : match;
  const chipCount = atoi(raw, digits);
  if (!chipCount.ok) return chipCount;
  return { ok: true, topology: topologyOf(raw, chipCount.value, undefined) };
}

/**
 * topologyReplicas (upstream `Topology.Replicas`): the scheduler endpoints (one per node) of
 * `chipCount` chips, `max(1, floor(chipCount / 8))`. Pure.
 */
export function topologyReplicas(chipCount: number): number {
  return Math.max(1, Math.trunc(chipCount / LPU_CHIPS_PER_NODE));
}

function topologyOf(raw: string, chipCount: number, compatibilityKey: string | undefined): LpxTopology {
  const topology = { raw, chipCount, nodeCount: topologyReplicas(chipCount) };
  return compatibilityKey === undefined ? topology : { ...topology, compatibilityKey };
}

/** Go's `strconv.Atoi` on the matched digits (64-bit int), with `parse`'s wrapping of its error. */
function atoi(raw: string, digits: string): { ok: true; value: number } | { ok: false; error: string } {
  const value = BigInt(digits);
  if (value > 9223372036854775807n || value < -9223372036854775808n) {
    return { ok: false, error: `parsing chip count from ${goQuote(raw)}: strconv.Atoi: parsing ${goQuote(digits)}: value out of range` };
  }
  return { ok: true, value: Number(value) };
}

/** Go's `strings.Trim(s, "_")`. */
function trimUnderscores(value: string): string {
  return value.replace(/^_+|_+$/g, '');
}

/**
 * Go's `%q` (`strconv.Quote`) for the texts these errors quote: `"` and `\` escaped, the named
 * control escapes, other ASCII control bytes as `\xNN`; printable text as is.
 */
export function goQuote(value: string): string {
  const named: Record<string, string> = { '\x07': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '"': '\\"', '\\': '\\\\' };
  let out = '"';
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    out += named[char] ?? (code < 0x20 || code === 0x7f ? `\\x${code.toString(16).padStart(2, '0')}` : char);
  }
  return `${out}"`;
}
