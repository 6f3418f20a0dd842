import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';

import { PermanentError, TransientError } from '../runtime/index.js';
import { classifyKubeError, isResourceVersionConflict, kubeStatusOf } from './errors.js';

function anApiException(
  code: number,
  status: { reason?: string; message?: string; details?: object } = {},
  headers: Record<string, string> = {},
): ApiException<string> {
  const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, ...status });
  return new ApiException(code, `HTTP ${code}`, body, headers);
}

function aConnectionError(code: string): Error {
  return new TypeError('fetch failed', { cause: Object.assign(new Error(`connect ${code}`), { code }) });
}

interface Row {
  readonly name: string;
  readonly reason: string;
  readonly input: unknown;
  readonly want: { readonly kind: 'Transient'; readonly throttled: boolean } | { readonly kind: 'Permanent'; readonly reason: string };
}

const rows: readonly Row[] = [
  {
    name: '409 Conflict on a stale resourceVersion is transient',
    reason: 'STYLE.md §12: a 409 on a precondition is re-read and retried',
    input: anApiException(409, { reason: 'Conflict', message: 'the object has been modified' }),
    want: { kind: 'Transient', throttled: false },
  },
  {
    name: '409 apply field conflict is permanent',
    reason: 'STYLE.md §12: an apply field conflict fails the same way again',
    input: anApiException(409, {
      reason: 'Conflict',
      message: 'Apply failed with 1 conflict: conflict with "other": .spec.replicas',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "other"', field: '.spec.replicas' }] },
    }),
    want: { kind: 'Permanent', reason: 'Conflict' },
  },
  {
    name: '409 AlreadyExists is permanent',
    reason: 'a create of an existing name fails the same way again',
    input: anApiException(409, { reason: 'AlreadyExists' }),
    want: { kind: 'Permanent', reason: 'AlreadyExists' },
  },
  {
    name: '429 is transient and throttled',
    reason: 'STYLE.md §12; the host answers 429 so the broker backs off',
    input: anApiException(429, { reason: 'TooManyRequests' }, { 'retry-after': '1' }),
    want: { kind: 'Transient', throttled: true },
  },
  {
    name: '500 InternalError is transient',
    reason: 'STYLE.md §12: 5xx',
    input: anApiException(500, { reason: 'InternalError' }),
    want: { kind: 'Transient', throttled: false },
  },
  {
    name: '504 Timeout is transient',
    reason: 'STYLE.md §12: 5xx and timeouts',
    input: anApiException(504, { reason: 'Timeout' }),
    want: { kind: 'Transient', throttled: false },
  },
  {
    name: '500 for an undeclared field in an apply is permanent',
    reason: 'kubernetes/kubernetes#139253: Kubernetes answers a bare 500 for a client error',
    input: anApiException(500, {
      message: 'failed to create typed patch object (ns/x; grove.io/v1alpha1, Kind=PodCliqueSet): .spec.surprise: field not declared in schema',
    }),
    want: { kind: 'Permanent', reason: 'BadRequest' },
  },
  {
    name: '422 Invalid is permanent',
    reason: 'STYLE.md §12',
    input: anApiException(422, { reason: 'Invalid' }),
    want: { kind: 'Permanent', reason: 'Invalid' },
  },
  {
    name: '403 Forbidden is permanent',
    reason: 'STYLE.md §12',
    input: anApiException(403, { reason: 'Forbidden' }),
    want: { kind: 'Permanent', reason: 'Forbidden' },
  },
  {
    name: '400 without a Status body is permanent',
    reason: 'STYLE.md §12',
    input: new ApiException(400, 'HTTP 400', 'not json', {}),
    want: { kind: 'Permanent', reason: 'HTTP400' },
  },
  {
    name: 'a refused connection is transient',
    reason: 'STYLE.md §12: the API server may be restarting',
    input: aConnectionError('ECONNREFUSED'),
    want: { kind: 'Transient', throttled: false },
  },
  {
    name: 'an undici socket error is transient',
    reason: 'STYLE.md §12',
    input: aConnectionError('UND_ERR_SOCKET'),
    want: { kind: 'Transient', throttled: false },
  },
  {
    name: 'a request timeout is transient',
    reason: 'STYLE.md §12: timeouts',
    input: new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
    want: { kind: 'Transient', throttled: false },
  },
];

describe('classifyKubeError', () => {
  it.each(rows)('$name', ({ input, want }) => {
    const got = classifyKubeError(input, 'apply PodCliqueSet ns/x');
    const summary =
      got instanceof TransientError
        ? { kind: 'Transient', throttled: got.throttled }
        : { kind: 'Permanent', reason: got.reason };
    expect(summary).toEqual(want);
    expect(got.cause).toBe(input);
    expect(got.message).toMatch(/^cannot apply PodCliqueSet ns\/x: /);
  });

  it('names the operation, code, reason and message', () => {
    const got = classifyKubeError(
      anApiException(422, { reason: 'Invalid', message: 'spec.replicas: Invalid value: "string"' }),
      'apply PodCliqueSet ns/x',
    );
    expect(got.message).toMatchInlineSnapshot(
      `"cannot apply PodCliqueSet ns/x: 422 Invalid: spec.replicas: Invalid value: "string""`,
    );
  });

  it('rethrows an error that is neither an API answer nor a connection failure', () => {
    const bug = new RangeError('not our business');
    expect(() => classifyKubeError(bug, 'get ConfigMap ns/x')).toThrow(bug);
  });

  it('returns an already classified error unchanged', () => {
    const transient = new TransientError('cannot get ConfigMap ns/x: 503');
    expect(classifyKubeError(transient, 'get ConfigMap ns/x')).toBe(transient);
  });
});

describe('isResourceVersionConflict', () => {
  it.each([
    { name: 'a 409 Conflict on the resourceVersion precondition ("the object has been modified")', input: anApiException(409, { reason: 'Conflict', message: 'the object has been modified; please apply your changes to the latest version and try again' }), want: true },
    { name: 'a 409 AlreadyExists (permanent)', input: anApiException(409, { reason: 'AlreadyExists', message: 'exists' }), want: false },
    { name: 'a 503 (transient, not a conflict)', input: anApiException(503, { reason: 'ServiceUnavailable', message: 'try later' }), want: false },
    { name: 'a connection failure', input: aConnectionError('ECONNRESET'), want: false },
  ])('STYLE.md §12: $name -> $want', ({ input, want }) => {
    expect(isResourceVersionConflict(classifyKubeError(input, 'apply status of DynamoGraphDeployment ns/x'))).toBe(want);
  });
});

describe('kubeStatusOf', () => {
  it('finds the Status along the cause chain, with cause reasons and Retry-After', () => {
    const api = anApiException(
      429,
      { reason: 'TooManyRequests', message: 'slow down', details: { causes: [{ reason: 'Throttled' }] } },
      { 'retry-after': '3' },
    );
    expect(kubeStatusOf(new Error('wrapped', { cause: api }))).toEqual({
      code: 429,
      reason: 'TooManyRequests',
      message: 'slow down',
      causeReasons: ['Throttled'],
      retryAfterSeconds: 3,
    });
  });

  it('is undefined for an error that is not an API answer', () => {
    expect(kubeStatusOf(aConnectionError('ECONNRESET'))).toBeUndefined();
  });
});
