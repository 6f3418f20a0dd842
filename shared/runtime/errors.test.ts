import { describe, expect, it } from 'vitest';
import { ConfigError, PermanentError, TransientError } from './errors.js';

describe('error classes', () => {
  it('TransientError keeps its cause and defaults throttled to false', () => {
    const cause = new Error('503 from apiserver');
    const error = new TransientError('cannot apply PodCliqueSet team-a/llama', { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('TransientError');
    expect(error.cause).toBe(cause);
    expect(error.throttled).toBe(false);
    expect(new TransientError('throttled', { throttled: true }).throttled).toBe(true);
  });

  it('PermanentError carries its reason', () => {
    const error = new PermanentError('cannot apply Service team-a/llama: forbidden', { reason: 'Forbidden' });
    expect(error.name).toBe('PermanentError');
    expect(error.reason).toBe('Forbidden');
    expect('cause' in error).toBe(false);
  });

  it('ConfigError renders each issue and shortens long values', () => {
    const error = new ConfigError([
      { key: 'KUBECONFIG', expected: 'a file path', received: undefined },
      { key: 'PORT', expected: 'an integer from 0 to 65535', received: 'x'.repeat(100) },
    ]);
    expect(error.name).toBe('ConfigError');
    expect(error.message).toBe(
      `invalid configuration: KUBECONFIG must be a file path, got nothing; PORT must be an integer from 0 to 65535, got "${'x'.repeat(64)}..."`,
    );
    expect(Object.isFrozen(error.issues)).toBe(true);
  });
});
