// Tests for shared/cli/serve.ts (the `dynamo-fn serve` command), kept beside the host it runs.
import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { usage as admissionUsage } from '../../functions/admission/index.js';
import {
  FunctionNotImplementedError,
  handlesHelp,
  isMissingModule,
  run,
  usage,
  type FunctionName,
  type ServeDeps,
} from '../cli/serve.js';
import type { FunctionDefinition, KubeEvent } from './contract.js';
import { aDefinition, aRoute, anApiServerEvent, get, sendEvent } from './test-support.js';

interface FakeProcess {
  readonly deps: ServeDeps;
  readonly output: string[];
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
  const output: string[] = [];
  const errors: string[] = [];
  const logs: Record<string, unknown>[] = [];
  const imported: FunctionName[] = [];
  let listener: ((signal: string) => void) | undefined;
  return {
    output,
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
      writeOutput: (text) => {
        output.push(text);
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

describe('dynamo-fn serve --help', () => {
  it('answers --help itself, so the dispatcher passes it through', () => {
    expect(handlesHelp).toBe(true);
  });

  it.each<{ name: string; argv: string[]; load?: () => Promise<unknown>; want: string }>([
    { name: 'serve --help prints the serve usage', argv: ['--help'], want: usage },
    { name: 'serve -h prints the serve usage', argv: ['-h'], want: usage },
    {
      name: "serve admission --help prints admission's own usage",
      argv: ['admission', '--help'],
      load: () => import('../../functions/admission/index.js'),
      want: admissionUsage,
    },
    {
      name: 'serve reconcile -h prints the serve usage (its module has no usage)',
      argv: ['reconcile', '-h'],
      load: async () => ({ default: aDefinition([aRoute()]) }),
      want: usage,
    },
  ])('$name', async ({ argv, load, want }) => {
    const fake = fakeProcess(load ?? (async () => ({ default: aDefinition([aRoute()]) })));

    expect(await run(argv, fake.deps)).toBe(0);
    expect(fake.output.join('')).toBe(`${want}\n`);
    expect(fake.errors).toEqual([]);
    expect(fake.logs).toEqual([]);
  });

  it('says a function this release lacks is not part of it, also for --help', async () => {
    const fake = fakeProcess(async (name) => {
      throw new FunctionNotImplementedError(name);
    });

    expect(await run(['profile', '--help'], fake.deps)).toBe(1);
    expect(fake.errors.join('')).toBe('dynamo-fn serve: function profile is not part of this release\n');
    expect(fake.output).toEqual([]);
  });
});

describe('dynamo-fn serve: start failures', () => {
  it('prints the whole cause chain when init fails', async () => {
    const definition = aDefinition([aRoute()], {
      init: async () => {
        throw new Error('cannot load kubeconfig /nonexistent', {
          cause: new Error("ENOENT: no such file or directory, open '/nonexistent'"),
        });
      },
    });
    const fake = fakeProcess(async () => ({ default: definition }));

    expect(await run(['reconcile', '--port', '0'], fake.deps)).toBe(1);
    expect(fake.errors.join('')).toBe(
      'dynamo-fn serve: cannot start function reconcile: cannot initialise function reconcile: ' +
        "cannot load kubeconfig /nonexistent: ENOENT: no such file or directory, open '/nonexistent'\n",
    );
  });

  const moduleUrl = new URL('file:///srv/functions/profile/index.js');
  it.each<{ name: string; error: unknown; want: boolean }>([
    {
      name: 'the module itself is missing',
      error: Object.assign(new Error('Cannot find module'), { code: 'ERR_MODULE_NOT_FOUND', url: moduleUrl.href }),
      want: true,
    },
    {
      name: 'a module it imports is missing',
      error: Object.assign(new Error('Cannot find module'), {
        code: 'ERR_MODULE_NOT_FOUND',
        url: 'file:///srv/functions/profile/helper.js',
      }),
      want: false,
    },
    {
      name: 'a package it imports is missing (no url)',
      error: Object.assign(new Error("Cannot find package 'x'"), { code: 'ERR_MODULE_NOT_FOUND' }),
      want: false,
    },
    {
      name: 'another error at the same url',
      error: Object.assign(new Error('syntax'), { code: 'ERR_INVALID_TYPESCRIPT_SYNTAX', url: moduleUrl.href }),
      want: false,
    },
    { name: 'a non-Error', error: 'ERR_MODULE_NOT_FOUND', want: false },
  ])('isMissingModule: $name -> $want', ({ error, want }) => {
    expect(isMissingModule(error, moduleUrl)).toBe(want);
  });

  /**
   * Runs `serve <name>` in a real Node process (tsx, as bin/dynamo-fn.js does) over `functionsDir`.
   * The kill timer only guards against a hang, inside the test's own 40 s.
   */
  async function serveInChild(functionsDir: string, name: string): Promise<{ code: number; stderr: string }> {
    const serveUrl = pathToFileURL(fileURLToPath(new URL('../cli/serve.ts', import.meta.url))).href;
    const script = `
      const { processServeDeps, run } = await import(${JSON.stringify(serveUrl)});
      process.exitCode = await run([${JSON.stringify(name)}], processServeDeps(new URL(${JSON.stringify(pathToFileURL(`${functionsDir}/`).href)})));
    `;
    const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
    return new Promise((resolve) => {
      execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, timeout: 35_000 }, (error, _stdout, stderr) => {
        resolve({ code: typeof error?.code === 'number' ? error.code : error === null ? 0 : -1, stderr });
      });
    });
  }

  it('says "not part of this release" only when the function module itself is missing (real imports)', { timeout: 40_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'serve-functions-'));
    try {
      await mkdir(join(dir, 'reconcile'));
      // ESM, as in the repository (package.json "type": "module").
      await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
      await writeFile(join(dir, 'reconcile', 'index.ts'), "import './missing-helper.js';\nexport default {};\n");

      const [missing, broken] = await Promise.all([serveInChild(dir, 'profile'), serveInChild(dir, 'reconcile')]);

      expect(missing).toEqual({ code: 1, stderr: 'dynamo-fn serve: function profile is not part of this release\n' });
      expect(broken.code).toBe(1);
      expect(broken.stderr).toMatch(/^dynamo-fn serve: function reconcile is not available: Cannot find module '.*\/reconcile\/missing-helper\.js' imported from .*\/reconcile\/index\.ts\n$/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
