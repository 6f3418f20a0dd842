import { describe, expect, it } from 'vitest';
import { readKubeObjects } from './yaml-input.js';

describe('readKubeObjects', () => {
  it.each([
    { name: 'a billion-laughs alias bomb', text: 'a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c]\nkind: X\n', error: 'f#1: invalid YAML: Excessive alias count indicates a resource exhaustion attack' },
    { name: 'a scalar document (e.g. a binary file)', text: 'just some text', error: 'f#1: not a Kubernetes object (expected a YAML mapping with apiVersion, kind and metadata)' },
    { name: 'a list', text: '- kind: A\n', error: 'f#1: not a Kubernetes object (expected a YAML mapping with apiVersion, kind and metadata)' },
  ])('turns $name into an error naming the document, never a throw', ({ text, error }) => {
    expect(readKubeObjects(text, 'f')).toEqual({ objects: [], errors: [error] });
  });

  it('keeps the valid documents of a file and reports the bad one, with at most three YAML messages', () => {
    const out = readKubeObjects('kind: A\n---\n: : :\n] ] ]\n{ { {\n---\n\n---\nkind: B\n', 'f');
    expect(out.objects.map((o) => [o.where, o.object['kind']])).toEqual([['f#1', 'A'], ['f#4', 'B']]);
    expect(out.errors).toHaveLength(1);
    expect(out.errors[0]).toMatch(/^f#2: invalid YAML: .*\(and \d+ more\)$/);
  });
});
