/**
 * What a new user's mistakes look like on the command line: a missing file or kubeconfig is one
 * line on stderr naming the path and its cause, with exit 1, never a Node.js stack trace
 * (developers' guide: "Bad input gets a clear error naming the field path ... never crash on input").
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { run as renderRun } from './render.js';
import { run as statusRun } from './status.js';

function captureStderr(): { text: () => string } {
  const chunks: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    chunks.push(String(chunk));
    return true;
  });
  vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  return { text: () => chunks.join('') };
}

describe('CLI input errors', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });

  it('render: a FILE that does not exist is an error naming the file and "no such file or directory", exit 1', async () => {
    const stderr = captureStderr();
    await expect(renderRun(['/nonexistent/dgd.yaml'])).resolves.toBe(1);
    expect(stderr.text()).toBe("error: /nonexistent/dgd.yaml: cannot read: ENOENT: no such file or directory, open '/nonexistent/dgd.yaml'\n");
  });

  it('status: a KUBECONFIG that does not exist is an error naming it, exit 1, not a thrown ENOENT', async () => {
    vi.stubEnv('KUBECONFIG', '/nonexistent/kubeconfig');
    const stderr = captureStderr();
    await expect(statusRun([])).resolves.toBe(1);
    expect(stderr.text()).toBe("dynamo-fn status: cannot load the kubeconfig (KUBECONFIG=/nonexistent/kubeconfig): ENOENT: no such file or directory, open '/nonexistent/kubeconfig'\n");
  });
});
