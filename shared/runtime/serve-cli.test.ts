// Tests for shared/cli/serve.ts (the `dynamo-fn serve` command), kept beside the host it runs.
import { describe, expect, it } from 'vitest';
import { run, usage, type FunctionName, type ServeDeps } from '../cli/serve.js';
import type { FunctionDefinition, KubeEvent } from './contract.js';
import { aDefinition, aRoute, anApiServerEvent, get, sendEvent } from './test-support.js';

interface FakeProcess {
  readonly deps: ServeDeps;
  readonly errors: string[];
  readonly logs: Record<string, unknown>[];
  readonly imported: FunctionName[];
  /** Delivers SIGTERM to the command. */
  signal(): void;
}

function fakeProcess(
  load: (name: FunctionName) => Promise<unknown>,
  env: Readonly<Record<string, string>> = {},
): FakeProcess {
  const errors: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const imported: FunctionName[] = [];
  let listener: ((signal: string) => void) | undefined;
  return {
    errors,
    logs,
    imported,
    signal: () => listener?.('SIGTERM'),
    deps: {
      env: { PORT: '0', ...env },
      importFunction: async (name) => {
        imported.push(name);
        return load(name);
      },
      writeError: (text) => {
        errors.push(text);
      },
      logDestination: {
        write(line: string) {
          logs.push(JSON.parse(line) as Record<string, unknown>);
        },
      },
      onShutdownSignal(onSignal) {
        listener = onSignal;
        return () => {
          listener = undefined;
        };
      },
      host: '127.0.0.1',
    },
  };
}

async function waitForLog(logs: readonly Record<string, unknown>[], msg: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const line = logs.find((entry) => entry['msg'] === msg);
    if (line !== undefined) return line;
    if (Date.now() > deadline) throw new Error(`no log line "${msg}"`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('dynamo-fn serve', () => {
  it('serves the function, answers events, and drains to exit 0 on SIGTERM', async () => {
    const seen: KubeEvent[] = [];
    const definition = aDefinition([
      aRoute({
        handle: async (event) => {
          seen.push(event);
          return { kind: 'Done' };
        },
      }),
    ]);
    const fake = fakeProcess(async () => ({ default: definition }));

    const exitCode = run(['reconcile', '--port', '0'], fake.deps);
    const started = await waitForLog(fake.logs, 'Started function server');
    const url = String(started['url']);

    expect((await sendEvent(url, anApiServerEvent(), 'binary')).status).toBe(204);
    expect((await get(url, '/metrics')).body).toContain('process_cpu_user_seconds_total');
    fake.signal();

    expect(await exitCode).toBe(0);
    expect(fake.imported).toEqual(['reconcile']);
    expect(seen).toHaveLength(1);
    expect(fake.logs.map((line) => line['msg'])).toEqual(
      expect.arrayContaining(['Received shutdown signal', 'Stopped function server']),
    );
    expect(fake.errors).toEqual([]);
  });

  it('hands over to a module that exports serve(argv), with the arguments after FUNCTION', async () => {
    const calls: (readonly string[])[] = [];
    const fake = fakeProcess(async () => ({
      serve: async (args: readonly string[]) => {
        calls.push(args);
        return 7;
      },
    }));

    expect(await run(['admission', '--tls-cert', '/etc/tls/tls.crt'], fake.deps)).toBe(7);
    expect(calls).toEqual([['--tls-cert', '/etc/tls/tls.crt']]);
  });

  it.each<{ name: string; argv: string[]; env?: Record<string, string>; load?: () => Promise<unknown>; error: string }>([
    {
      name: 'no FUNCTION',
      argv: [],
      error: 'dynamo-fn serve: missing FUNCTION (one of admission, reconcile, profile, cleanup)',
    },
    {
      name: 'an unknown FUNCTION',
      argv: ['frobnicate'],
      error: 'dynamo-fn serve: unknown function "frobnicate"; expected one of admission, reconcile, profile, cleanup',
    },
    {
      name: 'a function whose module cannot be imported',
      argv: ['profile'],
      load: async () => {
        throw new Error("Cannot find module '../../functions/profile/index.js'");
      },
      error: "dynamo-fn serve: function profile is not available: Cannot find module '../../functions/profile/index.js'",
    },
    {
      name: 'a module without a FunctionDefinition',
      argv: ['cleanup'],
      load: async () => ({ default: { name: 'cleanup' } }),
      error: 'dynamo-fn serve: function cleanup is not available: functions/cleanup/index.ts does not default-export a FunctionDefinition',
    },
    {
      name: 'an unknown option',
      argv: ['reconcile', '--verbose'],
      error: "dynamo-fn serve: Unknown option '--verbose'",
    },
    {
      name: 'a bad environment value',
      argv: ['reconcile'],
      env: { LOG_LEVEL: 'loud' },
      error:
        'dynamo-fn serve: invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    },
    {
      name: 'a bad --port',
      argv: ['reconcile', '--port', 'eighty'],
      error: 'dynamo-fn serve: invalid configuration: PORT must be an integer from 0 to 65535, got "eighty"',
    },
  ])('exits 1 before listening on $name', async ({ argv, env, load, error }) => {
    let initCalls = 0;
    const definition: FunctionDefinition = aDefinition([aRoute()], {
      init: async (base) => {
        initCalls += 1;
        return base;
      },
    });
    const fake = fakeProcess(load ?? (async () => ({ default: definition })), env);

    expect(await run(argv, fake.deps)).toBe(1);
    expect(fake.errors.join('')).toContain(error);
    expect(initCalls).toBe(0);
    expect(fake.logs).toEqual([]);
  });

  it('documents every option and environment variable in --help', () => {
    for (const word of [
      '--port',
      '--help',
      'PORT',
      'LOG_LEVEL',
      'RESYNC_CONCURRENCY',
      'DRAIN_TIMEOUT_SECONDS',
      'MAX_BODY_BYTES',
      'LPX_ENABLED',
      'KUBECONFIG',
    ]) {
      expect(usage).toContain(word);
    }
  });
});
