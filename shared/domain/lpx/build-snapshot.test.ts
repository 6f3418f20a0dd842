import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildSnapshotAcquisitionError, buildSnapshotContentId, normalizeBuildInventory, selectBuildContract } from './build-snapshot.js';

describe('normalizeBuildInventory (upstream TestNormalizeBuildFilePathsCanonicalizesAndRejectsAmbiguity)', () => {
  it('"Canonicalize and sort an unambiguous build inventory"', () => {
    expect(normalizeBuildInventory(['z/file.gas', 'manifest.v2.capnp.bin', './a/file.gas'])).toEqual({ ok: true, paths: ['a/file.gas', 'manifest.v2.capnp.bin', 'z/file.gas'] });
  });

  it.each([
    { name: 'normalized duplicate', paths: ['a/file.gas', './a/file.gas'], error: 'build inventory repeats relative path "a/file.gas"' },
    { name: 'parent traversal', paths: ['../outside.gas'], error: 'build inventory contains invalid relative path "../outside.gas"' },
    { name: 'absolute path', paths: ['/outside.gas'], error: 'build inventory contains invalid relative path "/outside.gas"' },
    { name: 'empty path', paths: ['  '], error: 'build inventory contains invalid relative path "  "' },
  ])('"Reject the selected ambiguous or unsafe inventory path": $name', ({ paths, error }) => {
    expect(normalizeBuildInventory(paths)).toEqual({ ok: false, error });
  });
});

describe('buildSnapshotContentId (upstream AcquireBuildSnapshot: "Bind the stable inventory and manifest bytes into the snapshot identity")', () => {
  const manifest = Buffer.from('compiled manifest bytes');

  it('is sha256 over the length-prefixed fields of upstream writeBuildSnapshotField, in upstream\'s order', () => {
    // Spelled out field by field from build_snapshot.go: fmt.Fprintf(hash, "%d:", len(value)); hash.Write(value).
    const expected = createHash('sha256')
      .update('31:dynamo-lpx-compiler-snapshot/v3')
      .update('9:inventory')
      .update('1:2')
      .update('14:inventory-path').update('21:manifest.v2.capnp.bin')
      .update('14:inventory-path').update('17:part-0/chip-0.gas')
      .update('17:compiler-metadata')
      .update('1:1')
      .update('13:metadata-path').update('21:manifest.v2.capnp.bin')
      .update('14:metadata-bytes').update(`${manifest.length}:`).update(manifest)
      .digest('hex');
    expect(buildSnapshotContentId(['manifest.v2.capnp.bin', 'part-0/chip-0.gas'], manifest)).toBe(`sha256:${expected}`);
  });

  it('"Changing only a payload path changes snapshot identity"; "Changing only the manifest bytes changes identity again"', () => {
    const first = buildSnapshotContentId(['manifest.v2.capnp.bin', 'part-0/chip-0.gas'], manifest);
    const renamed = buildSnapshotContentId(['manifest.v2.capnp.bin', 'part-0/chip-1.gas'], manifest);
    const grown = buildSnapshotContentId(['manifest.v2.capnp.bin', 'part-0/chip-1.gas'], Buffer.concat([manifest, Buffer.from([0])]));
    expect(new Set([first, renamed, grown]).size).toBe(3);
  });
});

describe('selectBuildContract (upstream TestDeploymentContractSelectsOneFormat: "Select the unique binary entry point without a preference or fallback")', () => {
  it.each([
    { name: 'legacy', files: ['manifest.v2.capnp.bin'], want: { ok: true, format: 'manifestV2', file: 'manifest.v2.capnp.bin' } },
    { name: 'split', files: ['deployment.v1.capnp.bin', 'execution.v1.capnp.bin'], want: { ok: true, format: 'deploymentV1', file: 'deployment.v1.capnp.bin' } },
    { name: 'both', files: ['deployment.v1.capnp.bin', 'manifest.v2.capnp.bin'], want: { ok: false, error: 'ambiguous build contracts: both manifest.v2.capnp.bin and deployment.v1.capnp.bin' } },
    { name: 'JSON only', files: ['manifest.json'], want: { ok: false, error: 'missing build contract: require manifest.v2.capnp.bin or deployment.v1.capnp.bin' } },
  ])('$name', ({ files, want }) => {
    expect(selectBuildContract(files)).toEqual(want);
  });

  it('"Require revision-2 binary compiler metadata without fallback" (TestAcquireBuildSnapshotRejectsLegacyCompilerMetadata): revision-1 and JSON metadata select no contract', () => {
    expect(selectBuildContract(['allocation_metadata.json', 'compile_summary.json', 'gas_program_layout.json', 'manifest.capnp.bin']).ok).toBe(false);
  });
});

describe('the split contract\'s identity and the acquisition error', () => {
  it('binds the selected contract file as "metadata-path" (upstream AcquireBuildSnapshot at the split contract: writeBuildSnapshotField(hash, []byte(manifestPath)))', () => {
    const bytes = Buffer.from('deployment bytes');
    const expected = createHash('sha256')
      .update('31:dynamo-lpx-compiler-snapshot/v3')
      .update('9:inventory')
      .update('1:2')
      .update('14:inventory-path').update('23:deployment.v1.capnp.bin')
      .update('14:inventory-path').update('22:execution.v1.capnp.bin')
      .update('17:compiler-metadata')
      .update('1:1')
      .update('13:metadata-path').update('23:deployment.v1.capnp.bin')
      .update('14:metadata-bytes').update(`${bytes.length}:`).update(bytes)
      .digest('hex');
    expect(buildSnapshotContentId(['deployment.v1.capnp.bin', 'execution.v1.capnp.bin'], bytes, 'deployment.v1.capnp.bin')).toBe(`sha256:${expected}`);
  });

  it('names the component and the buildId as written (upstream "%w for model %q build %q: %w", ErrBuildSnapshotAcquisition)', () => {
    expect(buildSnapshotAcquisitionError('engine', 'llama/b1', 'cause')).toBe('acquiring immutable LPX build snapshot for model "engine" build "llama/b1": cause');
  });
});
