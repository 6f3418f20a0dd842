/**
 * `install` and `dev --chart` use a helm 3 already on PATH before building one (issue 21
 * item 3). The candidates here are shell scripts that answer `helm version --template
 * {{.Version}}` as helm does, so the lookup is tested without a helm on this machine.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findHelmOnPath } from '../harness/helm.js';

const dirs: string[] = [];
async function fakeHelm(version: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'helm-on-path-'));
  dirs.push(dir);
  const script = `#!/bin/sh\nif [ "$1" = version ] && [ "$2" = --template ]; then printf '%s' '${version}'; exit 0; fi\nexit 1\n`;
  await writeFile(path.join(dir, 'helm'), script);
  await chmod(path.join(dir, 'helm'), 0o755);
  return dir;
}

afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('findHelmOnPath', () => {
  it('finds the first helm 3 on PATH, with its version', async () => {
    const dir = await fakeHelm('v3.15.4');
    expect(await findHelmOnPath({ PATH: ['/nonexistent', dir].join(path.delimiter) })).toEqual({ helm: path.join(dir, 'helm'), version: 'v3.15.4' });
  });

  it('passes over a helm that is not helm 3 (helm 2 cannot install an apiVersion v2 chart)', async () => {
    const old = await fakeHelm('v2.17.0');
    const current = await fakeHelm('v3.20.2');
    expect(await findHelmOnPath({ PATH: [old, current].join(path.delimiter) })).toEqual({ helm: path.join(current, 'helm'), version: 'v3.20.2' });
  });

  it('is undefined when no helm 3 is on PATH', async () => {
    const old = await fakeHelm('v2.17.0');
    expect(await findHelmOnPath({ PATH: old })).toBeUndefined();
    expect(await findHelmOnPath({ PATH: '' })).toBeUndefined();
  });
});
