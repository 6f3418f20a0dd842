/**
 * Writes the sample LPX build dev's examples use (examples/lpx/builds/llama-lpx/), as the
 * file:// model registry expects a build (functions/reconcile/lpx-build.ts): the compiler's
 * `manifest.v2.capnp.bin`, encoded by the project's own encoder (test/support/gbuild-manifest.ts,
 * one 8-chip XT partition, upstream's test topology), and the partition's part directory.
 * Not a real model: enough for the reconcile function to read a build contract.
 * Run: `npx tsx scripts/generate-lpx-sample-build.ts`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { anXtLpuOnlyFixture, encodeGbuildManifestV2 } from '../test/support/gbuild-manifest.js';

const dir = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'examples', 'lpx', 'builds', 'llama-lpx');
await mkdir(path.join(dir, 'part-0'), { recursive: true });
await writeFile(path.join(dir, 'manifest.v2.capnp.bin'), encodeGbuildManifestV2(anXtLpuOnlyFixture()));
await writeFile(path.join(dir, 'part-0', 'chip-0.gas'), 'gas');
process.stdout.write(`Wrote ${dir}\n`);
