/**
 * The validating webhook's fast structural check (shared/api/dgd-exact.ts) stands for zod only
 * where zod would change nothing: whenever `isExactDgd(x)`, `DgdSchema.safeParse(x)` succeeds
 * with data strictly equal to `x`, so the rules read the same object either way and every issue
 * and message still comes from zod (issue 17 item 4: "Every rule's behaviour and message stays
 * exactly as it is"). Checked on the corpus, the bench DGD and fast-check mutations of them.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { z } from 'zod';
import { DgdSchema, DgdSpecSchema, KvTransferPolicySchema, isExactDgd, parseDgd } from '../../shared/api/index.js';
import { defaultDgd } from '../../shared/domain/index.js';
import { GENERATED_PATH, generateDgdExactValidator } from '../../scripts/dgd-exact-validator.js';
import { twelveComponentDgd } from '../../bench/admission.js';
import { sharedDir } from '../support/paths.js';

type Json = unknown;

/** Every corpus DGD as the API server would send it to the validating webhook: v1beta1, defaulted, plain JSON. */
function corpusAsSent(): { name: string; object: Json }[] {
  const dir = resolve(sharedDir, 'corpus', 'dgd');
  const out: { name: string; object: Json }[] = [];
  for (const file of readdirSync(dir).sort()) {
    parseAllDocuments(readFileSync(resolve(dir, file), 'utf8')).forEach((document, index) => {
      const object = document.toJS() as { kind?: string } | null;
      if (object?.kind !== 'DynamoGraphDeployment') return;
      const parsed = parseDgd(object);
      if (!parsed.ok) return;
      out.push({ name: `${file}#${index}`, object: JSON.parse(JSON.stringify(defaultDgd(parsed.dgd))) });
    });
  }
  return out;
}

function assertZodAgrees(value: Json): void {
  if (!isExactDgd(value)) return;
  const parsed = DgdSchema.safeParse(value);
  expect(parsed.success).toBe(true);
  expect(parsed.data).toStrictEqual(value);
}

/** Every path to a value inside `value` (object keys and array indices). */
function pathsOf(value: Json, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return out;
  for (const [key, item] of Object.entries(value)) {
    const path = [...prefix, Array.isArray(value) ? Number(key) : key];
    out.push(path);
    pathsOf(item, path, out);
  }
  return out;
}

/** A copy of `value` with the node at `path` replaced by `replacement`, or removed when it is undefined. */
function withNode(value: Json, path: readonly (string | number)[], replacement: Json): Json {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  let node: Record<string | number, unknown> = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (replacement === undefined) {
    if (Array.isArray(node)) node.splice(Number(last), 1);
    else delete node[last];
  } else node[last] = replacement;
  return copy;
}

const corpus = corpusAsSent();
const bench = JSON.parse(JSON.stringify(defaultDgd(twelveComponentDgd()))) as Json;

/** Schemas under `schema` that carry a refinement (a custom check), by walking zod's definitions. */
function refinedSchemas(schema: z.core.$ZodType, seen = new Set<z.core.$ZodType>(), found = new Set<z.core.$ZodType>()): Set<z.core.$ZodType> {
  if (seen.has(schema)) return found;
  seen.add(schema);
  const def = schema._zod.def as unknown as Record<string, unknown> & { type: string; checks?: { _zod: { def: { check: string } } }[] };
  expect(['transform', 'pipe', 'preprocess', 'catch', 'lazy', 'promise', 'custom'], `a ${def.type} schema changes or hides values; dgd-exact cannot stand for it`).not.toContain(def.type);
  if ((def.checks ?? []).some((check) => check._zod.def.check === 'custom')) found.add(schema);
  const children: unknown[] = [def['innerType'], def['element'], def['valueType'], def['keyType'], ...Object.values((def['shape'] as object | undefined) ?? {}), ...((def['options'] as unknown[] | undefined) ?? [])];
  for (const child of children) if (child !== undefined) refinedSchemas(child as z.core.$ZodType, seen, found);
  return found;
}

describe('dgd-exact: the compiled check accepts only what zod would return unchanged', () => {
  it('the generated validator is current (regenerate: npx tsx scripts/dgd-exact-validator.ts)', () => {
    expect(readFileSync(GENERATED_PATH, 'utf8')).toBe(generateDgdExactValidator());
  });

  it('the only refinements in DgdSchema are the ones isExactDgd repeats (one epp, unique names, one kvTransferPolicy topology source), and nothing transforms', () => {
    expect(refinedSchemas(DgdSchema)).toEqual(new Set([DgdSpecSchema, KvTransferPolicySchema]));
  });

  it('takes the fast path for every corpus DGD as sent to the validating webhook, and for the bench DGD', () => {
    expect(corpus.length).toBeGreaterThan(30);
    for (const { name, object } of [...corpus, { name: 'bench', object: bench }]) {
      expect(isExactDgd(object), name).toBe(true);
      assertZodAgrees(object);
    }
  });

  it('refuses what zod would change: a missing default, an unknown field of a strict object, a refinement failure, a wrong type', () => {
    const base = bench as { spec: { components: Record<string, unknown>[] } };
    const multinode = base.spec.components.findIndex((c) => c['multinode'] !== undefined);
    const cases: Json[] = [
      withNode(bench, ['spec', 'components', multinode, 'multinode', 'nodeCount'], undefined),
      withNode(bench, ['spec', 'components', 0, 'unknownField'], 1),
      withNode(bench, ['spec', 'components', 1, 'name'], 'FRONTEND'),
      withNode(withNode(bench, ['spec', 'components', 0, 'type'], 'epp'), ['spec', 'components', 1, 'type'], 'epp'),
      withNode(bench, ['spec', 'experimental'], { kvTransferPolicy: { domain: 'rack', labelKey: 'a', clusterTopologyName: 'b' } }),
      withNode(bench, ['spec', 'components', 0, 'replicas'], 1.5),
    ];
    for (const value of cases) {
      expect(isExactDgd(value)).toBe(false);
      const parsed = DgdSchema.safeParse(value);
      if (parsed.success) expect(parsed.data).not.toStrictEqual(value);
    }
  });

  it('property: any one change to a corpus or bench DGD is either refused or parsed by zod to an equal object', () => {
    const bases = [...corpus.map((c) => c.object), bench];
    fc.assert(
      fc.property(
        fc.nat({ max: bases.length - 1 }).chain((index) => {
          const base = bases[index];
          const paths = pathsOf(base);
          return fc.tuple(fc.constant(base), fc.constantFrom(...paths), fc.oneof(fc.constant(undefined), fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(null, '', 0, -1, 2 ** 31, 'epp', 'x'.repeat(64), {}, [])));
        }),
        ([base, path, replacement]) => assertZodAgrees(withNode(base, path, replacement)),
      ),
      { numRuns: 1000 },
    );
  }, 120_000);
});
