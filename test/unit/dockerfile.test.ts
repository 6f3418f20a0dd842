/**
 * The Dockerfile cannot be built on this machine: there is no container engine, and the
 * registries its FROM lines name cannot be reached (only package registries can), so no base
 * image could be pulled even with Debian's docker.io installed. What is built and run here is
 * the registry-free image of infra/image/build.sh (test/image/, DYNAMO_FN_IMAGE_TEST=1), from
 * infra/image/image.json. This test holds the Dockerfile to the same image.json, so the image a
 * user builds with `docker build` runs the same entrypoint as the same user in the same working
 * directory, with the same files, command, environment, ports and labels (issue 9 part 2: "a
 * Dockerfile for users with a registry, and a build that works on this machine ... producing an
 * OCI image whose entrypoint runs dynamo-fn"; "Non-root user, read-only root filesystem
 * compatible"). Only the base images differ, and with them the node binary's path and PATH.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

import { repoRoot } from '../support/paths.js';
import { readDockerfile, readImageSpec, type DockerfileImage, type ImageSpec } from '../support/image-spec.js';

let dockerfile: DockerfileImage;
let spec: ImageSpec;

beforeAll(async () => {
  dockerfile = await readDockerfile();
  spec = await readImageSpec();
});

/** The interpreter is the first Entrypoint word; the base image decides where node is. */
const script = (entrypoint: readonly string[]) => entrypoint.slice(1);
/** PATH is the base image's (distroless sets its own); everything else is ours. */
const withoutPath = (env: readonly string[]) => env.filter((e) => !e.startsWith('PATH='));

describe('the Dockerfile and infra/image/image.json (the registry-free build) describe the same image', () => {
  it('has a build stage (the bundles), a snapshots stage (the blobs, built by the runtime image\'s node) and a final stage', () => {
    expect(dockerfile.stages.map((stage) => stage.name ?? '')).toEqual(['build', 'snapshots', '']);
    expect(dockerfile.stages[1]?.image).toBe(dockerfile.stages[2]?.image);
  });

  it('runs as the same non-root user, 65532:65532 (the chart\'s runAsUser)', () => {
    expect(dockerfile.user).toBe(spec.User);
    expect(spec.User).toBe('65532:65532');
  });

  it('has the same working directory', () => {
    expect(dockerfile.workingDir).toBe(spec.WorkingDir);
  });

  it('has the same entrypoint: node running the CLI bundle /app/dist/bundles/dynamo-fn.mjs (prebuilt JavaScript, no transpiler)', () => {
    expect(script(dockerfile.entrypoint)).toEqual(script(spec.Entrypoint));
    expect(script(spec.Entrypoint)).toEqual([path.posix.join(spec.WorkingDir, 'dist', 'bundles', 'dynamo-fn.mjs')]);
    // distroless/nodejs keeps node in /nodejs/bin; build.sh puts the node package's binary in /usr/local/bin.
    expect(dockerfile.entrypoint[0]).toBe('/nodejs/bin/node');
    expect(spec.Entrypoint[0]).toBe('/usr/local/bin/node');
  });

  it('has the same command (--help)', () => {
    expect(dockerfile.cmd).toEqual(spec.Cmd);
  });

  it('has the same environment apart from PATH', () => {
    expect(dockerfile.env).toEqual(withoutPath(spec.Env));
  });

  it('exposes the same ports', () => {
    expect(dockerfile.exposedPorts).toEqual(spec.ExposedPorts);
  });

  it('has the same labels (build.sh adds org.opencontainers.image.version from the tag)', () => {
    expect(dockerfile.labels).toEqual(spec.Labels);
  });

  it('copies the same repository files to the same places under the working directory, and no TypeScript sources', () => {
    expect(dockerfile.copies.filter(({ stage, destination }) => stage === '' && destination.startsWith(`${spec.WorkingDir}/`))).toEqual(spec.appFiles.map((file) => ({ stage: '', source: file, destination: path.posix.join(spec.WorkingDir, file) })));
    for (const file of spec.appFiles) expect(existsSync(path.join(repoRoot, file)), file).toBe(true);
    expect(spec.appFiles.filter((file) => ['shared', 'functions', 'bin'].includes(file.split('/')[0] ?? ''))).toEqual([]);
  });

  // build.sh: `scripts/build.mjs <buildArgs> --outdir "$root/app/dist"` with the repository's node_modules.
  it('builds the bundles with the same arguments of scripts/build.mjs and puts them where build.sh does, in /app/dist', () => {
    // The blobs are built in the snapshots stage, by the node that runs them (build.sh builds
    // them in scripts/build.mjs, whose node is the image's).
    expect(dockerfile.runs.filter(({ stage, words }) => stage === 'build' && words[0] === 'node').map(({ words }) => words)).toEqual([['node', 'scripts/build.mjs', ...spec.buildArgs, '--outdir', '/out', '--no-snapshot-blobs']]);
    expect(dockerfile.runs.filter(({ stage }) => stage === 'snapshots').map(({ words }) => words)).toEqual([['/nodejs/bin/node', '/build-snapshot-blobs.mjs', path.posix.join(spec.WorkingDir, 'dist', 'bundles')]]);
    expect(dockerfile.copies.filter(({ stage }) => stage === 'snapshots')).toEqual([{ stage: 'snapshots', source: 'scripts/build-snapshot-blobs.mjs', destination: '/build-snapshot-blobs.mjs' }]);
    expect(dockerfile.copiesFromStages).toEqual([{ stage: 'snapshots', source: path.posix.join(spec.WorkingDir, 'dist'), destination: path.posix.join(spec.WorkingDir, 'dist') }]);
  });

  it('compiles the bundles from the sources esbuild reaches (scripts, shared, functions) after a full npm ci (esbuild is a devDependency)', () => {
    expect(dockerfile.copies.filter(({ stage }) => stage === 'build').map(({ source }) => source)).toEqual(['package.json', 'package-lock.json', 'scripts', 'shared', 'functions']);
    expect(dockerfile.runs.filter(({ stage, words }) => stage === 'build' && words[0] === 'npm').map(({ words }) => words)).toEqual([['npm', 'ci', '--ignore-scripts', '--no-audit', '--no-fund']]);
  });

  it('installs /dgd-apply-overrides where build.sh does (the override tool\'s bundle, /app/dist/dgd-apply-overrides.mjs, comes with the other bundles)', () => {
    expect(dockerfile.copies.filter(({ stage, destination }) => stage === '' && !destination.startsWith(`${spec.WorkingDir}/`))).toEqual([{ stage: '', source: 'infra/image/dgd-apply-overrides', destination: '/dgd-apply-overrides' }]);
    expect(readFileSync(path.join(repoRoot, 'infra', 'image', 'dgd-apply-overrides'), 'utf8')).toContain("import('/app/dist/dgd-apply-overrides.mjs')");
  });

  it('bases every stage on the Node.js major version every npm script runs on (the node devDependency)', () => {
    const devDependencies = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies;
    const major = /(\d+)\./.exec(devDependencies['node'] ?? '')?.[1];
    expect(major).toBe('24');
    expect(dockerfile.stages.map((stage) => /node(?:js)?:?(\d+)/.exec(stage.image)?.[1])).toEqual([major, major, major]);
  });
});
