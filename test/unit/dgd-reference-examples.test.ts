/**
 * "The reference's example manifests are all admitted as printed" (issue 19, Done when), for
 * dgd-reference.txt: every `apiVersion: nvidia.com/...` / `kind: DynamoGraphDeployment` block it
 * prints, read from the reference in place up to its first blank line, goes through the CRD schema
 * and both DGD webhooks (test/unit/admission-chain.ts) as a CREATE and is allowed, and renders.
 * (dgdr-reference.txt's examples: test/integration/dgdr-v1beta2-api.test.ts, "every example
 * manifest of dgdr-reference.txt is admitted as printed".)
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseDgd } from '../../shared/api/index.js';
import { renderDgd } from '../../shared/domain/index.js';
import { admitThroughChain, type Obj } from './admission-chain.js';
import { sharedDir } from '../support/paths.js';

/** The DGD manifests dgd-reference.txt prints: from an `apiVersion: nvidia.com/` line followed by `kind: DynamoGraphDeployment` to the next blank line. */
function referenceDgds(): { name: string; text: string }[] {
  const lines = readFileSync(resolve(sharedDir, 'reference', 'dgd-reference.txt'), 'utf8').split('\n');
  const blocks: { name: string; text: string }[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    if (!/^apiVersion: nvidia\.com\//.test(lines[index] ?? '') || lines[index + 1] !== 'kind: DynamoGraphDeployment') continue;
    const start = index;
    while (index < lines.length && (lines[index] ?? '').trim() !== '') index += 1;
    const text = lines.slice(start, index).join('\n');
    blocks.push({ name: `line ${start + 1}: ${String((parse(text) as { metadata?: { name?: string } }).metadata?.name)}`, text });
  }
  return blocks;
}

describe('dgd-reference.txt example manifests are admitted as printed', () => {
  const examples = referenceDgds();
  it('finds the reference\'s DGD examples (the minimal example and the Coherent vllm-disagg example)', () => {
    expect(examples.map((e) => e.name)).toEqual(['line 13: my-graph', 'line 127: vllm-disagg']);
  });
  it.each(examples)('$name: admitted (schema and webhooks, CREATE) and rendered without errors', ({ text }) => {
    const object = parse(text) as Obj;
    const admitted = admitThroughChain({ object: { ...object, metadata: { ...(object['metadata'] as Obj), namespace: 'ns' } } });
    expect({ allowed: admitted.allowed, issues: admitted.issues }).toEqual({ allowed: true, issues: [] });
    const parsed = parseDgd(admitted.object);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const rendered = renderDgd(parsed.dgd);
    expect(rendered.ok ? [] : rendered.issues).toEqual([]);
  });
});
