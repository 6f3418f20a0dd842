import { describe, expect, it } from 'vitest';
import { aComponent } from '../../../test/support/builders.js';
import { componentNameBudget, fnv32a, isDns1123Subdomain, podCliqueSetName, shortenName, usesScalingGroup } from './names.js';

describe('generated names (upstream-notes/grove.md §A.8, dgd.md §4.1)', () => {
  it('fnv32a matches Go hash/fnv New32a', () => {
    // Reference vectors of FNV-1a 32-bit: "" -> 0x811c9dc5, "a" -> 0xe40c292c, "foobar" -> 0xbf9cf968.
    expect([fnv32a(''), fnv32a('a'), fnv32a('foobar')]).toEqual([0x811c9dc5, 0xe40c292c, 0xbf9cf968]);
  });

  it('keeps a DGD name that fits the budget', () => {
    expect(podCliqueSetName('my-graph', [aComponent('worker', 'worker')])).toBe('my-graph');
  });

  it('shortens to 45 - the largest component budget with a stable 4-hex fnv suffix when PCS + clique would exceed 45', () => {
    const name = 'llama3-70b-instruct-production-serving-east';
    const components = [aComponent('VllmPrefillWorker', 'prefill')];
    const pcs = podCliqueSetName(name, components);
    expect(pcs).toBe(`${name.slice(0, 45 - 17 - 5)}-${(fnv32a(name) & 0xffff).toString(16).padStart(4, '0')}`);
    expect(pcs.length + componentNameBudget(components[0]!)).toBe(45);
    expect(podCliqueSetName(name, components)).toBe(pcs);
  });

  it('counts the scaling-group name plus the -wkr clique for a multinode component', () => {
    expect(componentNameBudget(aComponent('Decode', 'decode', { multinode: { nodeCount: 2 } }))).toBe('decode'.length + 'decode-wkr'.length);
  });

  it('never leaves a trailing hyphen before the hash suffix, so the name stays DNS-1123', () => {
    const shortened = shortenName('abcd-efgh-ijkl', 10);
    expect(shortened).toMatch(/^abcd-[0-9a-f]{4}$/);
    expect(isDns1123Subdomain(shortened)).toBe(true);
  });

  it('replaces dots in the DGD name, since Grove names a headless Service after the PCS', () => {
    expect(podCliqueSetName('qwen3.0-6b', [aComponent('worker', 'worker')])).toBe('qwen3-0-6b');
  });
});

describe('single-node inter-pod GMS uses a scaling group whose longest clique is <name>-gms-0 (upstream UsesPCSG, LongestPodCliqueNameForDGDComponent)', () => {
  it('budgets "worker" + "worker-gms-0" = 18 characters, and renders as a scaling group', () => {
    const component = aComponent('worker', 'worker', { experimental: { gpuMemoryService: { mode: 'InterPod' } } });
    expect([componentNameBudget(component), usesScalingGroup(component)]).toEqual([18, true]);
  });
});
