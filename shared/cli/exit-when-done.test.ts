import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** Runs `body` in a fresh node with main.ts's exitWhenDone imported; returns its status, stderr and wall time. */
function runChild(body: string): { status: number | null; stderr: string; ms: number } {
  const started = performance.now();
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `import { exitWhenDone } from ${JSON.stringify(new URL('./main.ts', import.meta.url).pathname)};\n${body}`], { encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stderr: result.stderr, ms: performance.now() - started };
}

describe('exitWhenDone (the CLI ends once its command returned)', () => {
  it('exits with the code as soon as nothing is left to run, saying nothing', () => {
    const { status, stderr } = runChild('exitWhenDone(3, 30_000);');
    expect(status).toBe(3);
    expect(stderr).toBe('');
  });

  it('a handle a command left open (an interval here) does not keep the process: after the grace it names what is open and exits with the code', () => {
    const { status, stderr, ms } = runChild('setInterval(() => undefined, 1000); exitWhenDone(4, 300);');
    expect(status).toBe(4);
    expect(stderr).toMatch(/^dynamo-fn: still running 0\.3 s after the command finished \(open: .*Timeout.*\); exiting with 4\n$/);
    expect(ms).toBeLessThan(30_000);
  });
});
