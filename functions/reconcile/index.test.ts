import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ConfigError, defaultConfig } from '../../shared/runtime/index.js';
import { init } from './index.js';

const base = { log: pino({ level: 'silent' }), now: () => new Date(0), config: defaultConfig() };

describe('reconcile init', () => {
  it('refuses to start without KUBECONFIG outside a pod, naming the variable', async () => {
    const failure = init(base, {});
    await expect(failure).rejects.toBeInstanceOf(ConfigError);
    await expect(failure).rejects.toThrow(/^invalid configuration: KUBECONFIG must be a kubeconfig file path when not running in a Kubernetes pod/);
  });
});
