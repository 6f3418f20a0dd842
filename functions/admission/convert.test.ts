/**
 * The ConversionReview endpoint's decision: per-kind converters, results in request order,
 * Failure naming the object, 400 for bodies that are not a v1 ConversionReview (Kubernetes
 * "Versions in CustomResourceDefinitions", webhook request and response).
 */
import { describe, expect, it } from 'vitest';
import { answerConversionReview, createConverterRegistry, type Converter } from './convert.js';

const review = (objects: unknown[], desiredAPIVersion = 'nvidia.com/v1beta1'): string =>
  JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'u-1', desiredAPIVersion, objects } });

const alpha = (name: string): Record<string, unknown> => ({
  apiVersion: 'nvidia.com/v1alpha1',
  kind: 'DynamoGraphDeployment',
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: '7' },
  spec: { services: { Frontend: { componentType: 'frontend', replicas: 1, extraPodSpec: { mainContainer: { image: 'f:1' } } } } },
});

describe('answerConversionReview', () => {
  it('converts every object to the desired version, in request order, echoing the uid', () => {
    const answer = answerConversionReview(review([alpha('a'), alpha('b')]), createConverterRegistry());
    if (answer.status !== 200) throw new Error(answer.message);
    expect(answer.review.response.uid).toBe('u-1');
    expect(answer.review.response.result).toEqual({ status: 'Success' });
    expect(answer.review.response.convertedObjects.map((o) => [o['apiVersion'], (o['metadata'] as { name: string }).name])).toEqual([
      ['nvidia.com/v1beta1', 'a'],
      ['nvidia.com/v1beta1', 'b'],
    ]);
    expect(answer.review.response.convertedObjects[0]?.['spec']).toEqual({
      components: [{ name: 'Frontend', type: 'frontend', replicas: 1, podTemplate: { spec: { containers: [{ image: 'f:1', name: 'main' }] } } }],
    });
  });

  it('fails the whole review, naming the object, for a kind without a converter', () => {
    const answer = answerConversionReview(review([alpha('a'), { apiVersion: 'nvidia.com/v1alpha1', kind: 'DynamoModel', metadata: { name: 'm', namespace: 'ns' } }]), createConverterRegistry());
    if (answer.status !== 200) throw new Error(answer.message);
    expect(answer.review.response).toEqual({ uid: 'u-1', result: { status: 'Failure', message: 'DynamoModel ns/m: no converter is registered for nvidia.com/DynamoModel' }, convertedObjects: [] });
  });

  it("fails with the converter's field path when an object cannot convert", () => {
    const answer = answerConversionReview(review([{ ...alpha('a'), spec: {} }]), createConverterRegistry());
    if (answer.status !== 200) throw new Error(answer.message);
    expect(answer.review.response.result).toEqual({ status: 'Failure', message: 'DynamoGraphDeployment ns/a: spec.services: Required value: a v1alpha1 DynamoGraphDeployment lists its services as a map' });
  });

  it('refuses a converter that changes metadata other than labels and annotations (the API server would)', () => {
    const renaming: Converter = { group: 'nvidia.com', kind: 'DynamoGraphDeployment', convert: (o, v) => ({ ok: true, object: { ...o, apiVersion: v, metadata: { name: 'other' } } }) };
    const answer = answerConversionReview(review([alpha('a')]), createConverterRegistry([renaming]));
    if (answer.status !== 200) throw new Error(answer.message);
    expect(answer.review.response.result).toEqual({ status: 'Failure', message: 'DynamoGraphDeployment ns/a: the converter changed metadata other than labels and annotations, or gave another apiVersion' });
  });

  it('answers a Failure, not an error, when a converter throws', () => {
    const throwing: Converter = { group: 'nvidia.com', kind: 'DynamoGraphDeployment', convert: () => { throw new Error('boom'); } };
    const answer = answerConversionReview(review([alpha('a')]), createConverterRegistry([throwing]));
    if (answer.status !== 200) throw new Error(answer.message);
    expect(answer.review.response.result).toEqual({ status: 'Failure', message: 'DynamoGraphDeployment ns/a: conversion failed: boom' });
  });

  it('refuses a conversion to another group', () => {
    const answer = answerConversionReview(review([alpha('a')], 'grove.io/v1alpha1'), createConverterRegistry());
    if (answer.status !== 200) throw new Error(answer.message);
    expect(answer.review.response.result).toEqual({ status: 'Failure', message: "DynamoGraphDeployment ns/a: cannot convert nvidia.com/v1alpha1 to another group's grove.io/v1alpha1" });
  });

  it.each([
    { name: 'not JSON', body: '{', want: /^request body is not valid JSON/ },
    { name: 'an AdmissionReview', body: JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: 'x' } }), want: /^request body is not an apiextensions.k8s.io\/v1 ConversionReview with a request.uid/ },
    { name: 'no uid', body: JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { desiredAPIVersion: 'nvidia.com/v1beta1', objects: [] } }), want: /request\.uid/ },
  ])('answers 400 for a body that is $name', ({ body, want }) => {
    const answer = answerConversionReview(body, createConverterRegistry());
    expect(answer.status).toBe(400);
    expect(answer.status === 400 ? answer.message : '').toMatch(want);
  });

  it('refuses two converters for one kind at start', () => {
    const converter: Converter = { group: 'nvidia.com', kind: 'X', convert: (o) => ({ ok: true, object: o }) };
    expect(() => createConverterRegistry([converter, converter])).toThrow('two converters are registered for nvidia.com/X');
  });
});
