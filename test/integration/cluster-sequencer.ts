/**
 * The run's file order (vitest `sequence.sequencer`): vitest's own (slowest first once it has
 * timed a run, else largest first), except that the files of `integration-cluster` alternate
 * between `exclusive` ones and the others, so that its two workers rarely both wait for the
 * cluster lock (cluster-access.ts).
 * @module
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

import { clusterAccessOf } from './cluster-access.js';

export default class ClusterSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const inCluster = (spec: TestSpecification) => spec.project.name === 'integration-cluster';
    const exclusive = sorted.filter((spec) => inCluster(spec) && clusterAccessOf(spec.moduleId) === 'exclusive');
    const beside = sorted.filter((spec) => inCluster(spec) && clusterAccessOf(spec.moduleId) !== 'exclusive');
    const alternated: TestSpecification[] = [];
    while (exclusive.length > 0 || beside.length > 0) {
      const next = exclusive.shift();
      if (next !== undefined) alternated.push(next);
      const other = beside.shift();
      if (other !== undefined) alternated.push(other);
    }
    return [...sorted.filter((spec) => !inCluster(spec)), ...alternated];
  }
}
