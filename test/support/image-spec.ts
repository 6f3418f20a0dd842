/**
 * The two descriptions of our OCI image, read for the tests that hold them equal:
 * `infra/image/image.json` (what infra/image/build.sh builds from: OCI image-config field names,
 * plus the repository files copied into /app and the arguments of `scripts/build.mjs`) and the `Dockerfile`, parsed
 * with dockerfile-ast (the parser of the VS Code Docker language server).
 * @module
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { Copy, DockerfileParser, JSONInstruction, PropertyInstruction, type Instruction } from 'dockerfile-ast';

import { repoRoot } from './paths.js';

/** infra/image/image.json. */
export interface ImageSpec {
  readonly User: string;
  readonly WorkingDir: string;
  readonly Entrypoint: readonly string[];
  readonly Cmd: readonly string[];
  readonly Env: readonly string[];
  readonly ExposedPorts: readonly string[];
  readonly Labels: Readonly<Record<string, string>>;
  /** Repository paths copied into WorkingDir at the same relative path. */
  readonly appFiles: readonly string[];
  /** The arguments `node scripts/build.mjs` gets besides `--outdir` (the bundles in WorkingDir/dist). */
  readonly buildArgs: readonly string[];
}

export async function readImageSpec(): Promise<ImageSpec> {
  return JSON.parse(await readFile(path.join(repoRoot, 'infra', 'image', 'image.json'), 'utf8')) as ImageSpec;
}

/** One build stage of a Dockerfile: its base image, name and instructions, in order. */
export interface DockerfileStage {
  readonly image: string;
  readonly name: string | undefined;
  readonly instructions: readonly Instruction[];
}

/** What the Dockerfile says, in the terms of {@link ImageSpec} where they apply. */
export interface DockerfileImage {
  readonly stages: readonly DockerfileStage[];
  /** The final stage's USER, WORKDIR, ENTRYPOINT, CMD, ENV (NAME=value), EXPOSE (port/proto), LABEL. */
  readonly user: string | undefined;
  readonly workingDir: string | undefined;
  readonly entrypoint: readonly string[];
  readonly cmd: readonly string[];
  readonly env: readonly string[];
  readonly exposedPorts: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  /**
   * The repository files copied into any stage (COPY without --from), each with where it lands
   * (WORKDIR-relative destinations resolved; with a destination ending in "/" or several sources,
   * each source keeps its base name).
   */
  readonly copies: readonly { readonly stage: string; readonly source: string; readonly destination: string }[];
  /** The final stage's `COPY --from=<stage>` instructions. */
  readonly copiesFromStages: readonly { readonly stage: string; readonly source: string; readonly destination: string }[];
  /** Every RUN instruction's words, with its stage's name ("" for the final stage). */
  readonly runs: readonly { readonly stage: string; readonly words: readonly string[] }[];
}

function words(instruction: Instruction): string[] {
  return instruction.getArguments().map((argument) => argument.getValue());
}

function last<T>(values: readonly T[]): T | undefined {
  return values[values.length - 1];
}

/** Parses a Dockerfile's text. */
export function parseDockerfile(text: string): DockerfileImage {
  const dockerfile = DockerfileParser.parse(text);
  const stages: { image: string; name: string | undefined; instructions: Instruction[] }[] = [];
  for (const instruction of dockerfile.getInstructions()) {
    if (instruction.getKeyword() === 'FROM') {
      const [image = '', as, name] = words(instruction);
      stages.push({ image, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else {
      last(stages)?.instructions.push(instruction);
    }
  }
  const final = last(stages)?.instructions ?? [];
  const lastOf = (keyword: string) => last(final.filter((i) => i.getKeyword() === keyword));
  const firstWord = (keyword: string) => {
    const instruction = lastOf(keyword);
    return instruction === undefined ? undefined : words(instruction)[0];
  };
  const json = (keyword: string): string[] => {
    const instruction = lastOf(keyword);
    return instruction instanceof JSONInstruction ? instruction.getJSONStrings().map((s) => s.getJSONValue()) : [];
  };
  const properties = (keyword: string): [string, string][] =>
    final
      .filter((i): i is PropertyInstruction => i.getKeyword() === keyword && i instanceof PropertyInstruction)
      .flatMap((i) => i.getProperties().map((p): [string, string] => [p.getName(), p.getValue() ?? '']));

  const copies: { stage: string; source: string; destination: string }[] = [];
  const copiesFromStages: { stage: string; source: string; destination: string }[] = [];
  for (const stage of stages) {
    let workdir = '/';
    for (const instruction of stage.instructions) {
      if (instruction.getKeyword() === 'WORKDIR') workdir = path.posix.resolve(workdir, words(instruction)[0] ?? '');
      if (!(instruction instanceof Copy)) continue;
      const fromStage = instruction.getFromFlag()?.getValue() ?? undefined;
      const args = words(instruction);
      const destination = args.at(-1) ?? '';
      const sources = args.slice(0, -1);
      for (const source of sources) {
        const target = path.posix.resolve(workdir, destination.endsWith('/') || sources.length > 1 ? path.posix.join(destination, path.posix.basename(source)) : destination);
        if (fromStage === undefined) copies.push({ stage: stage.name ?? '', source, destination: target });
        else if (stage === last(stages)) copiesFromStages.push({ stage: fromStage, source, destination: target });
      }
    }
  }
  return {
    stages,
    user: firstWord('USER'),
    workingDir: firstWord('WORKDIR'),
    entrypoint: json('ENTRYPOINT'),
    cmd: json('CMD'),
    env: properties('ENV').map(([name, value]) => `${name}=${value}`),
    exposedPorts: final.filter((i) => i.getKeyword() === 'EXPOSE').flatMap(words).map((port) => (port.includes('/') ? port : `${port}/tcp`)),
    labels: Object.fromEntries(properties('LABEL')),
    copies,
    copiesFromStages,
    // A RUN in exec form (JSON) gives its strings; in shell form, its words.
    runs: stages.flatMap((stage) =>
      stage.instructions
        .filter((i) => i.getKeyword() === 'RUN')
        .map((i) => ({ stage: stage.name ?? '', words: i instanceof JSONInstruction && i.getJSONStrings().length > 0 ? i.getJSONStrings().map((s) => s.getJSONValue()) : words(i) })),
    ),
  };
}

export async function readDockerfile(): Promise<DockerfileImage> {
  return parseDockerfile(await readFile(path.join(repoRoot, 'Dockerfile'), 'utf8'));
}
