import { describe, expect, it } from 'vitest';
import { formatIssue, formatIssues, parseDgd } from './index.js';

const component = (name: string) => ({ name, type: 'worker', podTemplate: { spec: { containers: [{ name: 'main', image: 'img' }] } } });
const dgd = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'g' }) => ({ apiVersion: 'nvidia.com/v1beta1', kind: 'DynamoGraphDeployment', metadata, spec });
const errors = (object: unknown): string[] => {
  const parsed = parseDgd(object);
  return parsed.ok ? [] : parsed.issues.map(formatIssue);
};

describe('field errors, as Kubernetes prints them (k8s.io/apimachinery field.Error)', () => {
  it('reports a list over its limit as Too many with the count, never the whole list', () => {
    const components = Array.from({ length: 30 }, (_, i) => component(`c${i}`));
    expect(errors(dgd({ components }))).toEqual(['spec.components: Too many: 30: must have at most 25 items']);
  });

  it('prints a map key in brackets: metadata.annotations[<key>], spec.services[<name>]', () => {
    expect(errors(dgd({ components: [component('a')] }, { name: 'g', annotations: { 'nvidia.com/grove-update-strategy': 5 } }))).toEqual([
      'metadata.annotations[nvidia.com/grove-update-strategy]: Invalid value: 5: must be of type string',
    ]);
    const alpha = { apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoGraphDeployment', metadata: { name: 'g' }, spec: { services: { Frontend: { replicas: 'two' } } } };
    expect(errors(alpha)).toEqual(['spec.services[Frontend].replicas: Invalid value: "two": must be of type number']);
  });

  it('bounds int32 fields at 2^31-1 (replicas)', () => {
    expect(errors(dgd({ components: [{ ...component('a'), replicas: 2 ** 31 }] }))).toEqual([
      'spec.components[0].replicas: Invalid value: 2147483648: must be less than or equal to 2147483647',
    ]);
  });

  it('prints a large structured value as its type name, a small one whole', () => {
    expect(formatIssue({ path: 'x', type: 'Invalid', value: { nodeCount: 4 }, detail: 'field is immutable' })).toBe('x: Invalid value: {"nodeCount":4}: field is immutable');
    expect(formatIssue({ path: 'x', type: 'Invalid', value: Array.from({ length: 100 }, (_, i) => i), detail: 'd' })).toBe('x: Invalid value: "array": d');
  });

  it('joins several issues as an aggregated Invalid status does: [a, b]', () => {
    expect(formatIssues([{ path: 'a', type: 'Required', detail: 'x' }, { path: 'b', type: 'Forbidden', detail: 'y' }])).toBe('[a: Required value: x, b: Forbidden: y]');
  });
});

describe('__proto__ keys are refused at the edge, with their path (issue 12)', () => {
  it.each([
    {
      name: 'a v1alpha1 service named __proto__ (zod would take it as the map prototype and drop it)',
      json: '{"apiVersion":"nvidia.com/v1alpha1","kind":"DynamoGraphDeployment","metadata":{"name":"g","namespace":"ns"},"spec":{"services":{"Frontend":{"componentType":"frontend"},"__proto__":{"componentType":"worker"}}}}',
      want: 'spec.services[__proto__]: Invalid value: "__proto__": a name that JavaScript takes as an object prototype cannot be a key here',
    },
    {
      name: 'a __proto__ label key on a v1beta1 component',
      json: '{"apiVersion":"nvidia.com/v1beta1","kind":"DynamoGraphDeployment","metadata":{"name":"g"},"spec":{"components":[{"name":"w","type":"worker","labels":{"__proto__":"x"}}]}}',
      want: 'spec.components[0].labels[__proto__]: Invalid value: "__proto__": a name that JavaScript takes as an object prototype cannot be a key here',
    },
  ])('$name', ({ json, want }) => {
    const parsed = parseDgd(JSON.parse(json));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues.map(formatIssue)).toEqual([want]);
  });

  it('keeps "constructor" as an ordinary name (assignment keeps it as a key)', () => {
    const parsed = parseDgd(JSON.parse('{"apiVersion":"nvidia.com/v1alpha1","kind":"DynamoGraphDeployment","metadata":{"name":"g","namespace":"ns"},"spec":{"services":{"constructor":{"componentType":"worker","extraPodSpec":{"mainContainer":{"image":"img:1"}}}}}}'));
    expect(parsed.ok && parsed.dgd.spec.components.map((component) => component.name)).toEqual(['constructor']);
  });
});
