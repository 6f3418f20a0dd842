import { describe, expect, it } from 'vitest';
import { goQuote, parseTopology, topologyReplicas } from './topology.js';

describe('parseTopology (upstream parse, topologyRe / legacyTopologyRe)', () => {
  it.each([
    {
      name: 'a `__` name carries its chips as <N>C; the compatibility key is the name without them',
      raw: 'URSA_V2_1__Q8__16C__G_106__KP_FEC__GHZ_1_0__NO_FPGA',
      want: { ok: true, topology: { raw: 'URSA_V2_1__Q8__16C__G_106__KP_FEC__GHZ_1_0__NO_FPGA', chipCount: 16, nodeCount: 2, compatibilityKey: 'URSA_V2_1__Q8__C__G_106__KP_FEC__GHZ_1_0__NO_FPGA' } },
    },
    {
      name: 'the optional trailing groups (__G_<g2>, __<e>) still match',
      raw: 'A__B__4C__G_1__C__GHZ_1_0__D__G_2__E',
      want: { ok: true, topology: { raw: 'A__B__4C__G_1__C__GHZ_1_0__D__G_2__E', chipCount: 4, nodeCount: 1, compatibilityKey: 'A__B__C__G_1__C__GHZ_1_0__D__G_2__E' } },
    },
    { name: 'a legacy name carries its chips as <N>_CHIP (no compatibility key)', raw: 'XT_32_CHIP_RING', want: { ok: true, topology: { raw: 'XT_32_CHIP_RING', chipCount: 32, nodeCount: 4 } } },
    { name: 'a legacy negative count parses (buildXTPartition refuses it)', raw: 'X_-8_CHIP', want: { ok: true, topology: { raw: 'X_-8_CHIP', chipCount: -8, nodeCount: 1 } } },
    { name: 'a `__` name off the pattern', raw: 'A__B', want: { ok: false, error: 'topology "A__B" does not match expected pattern' } },
    { name: 'an opaque name', raw: 'opaque-v3-topology', want: { ok: false, error: 'topology "opaque-v3-topology" does not match expected pattern' } },
    {
      name: 'a count beyond Go int is strconv.Atoi\'s range error',
      raw: 'A__B__99999999999999999999C__G_1__C__GHZ_1__D',
      want: { ok: false, error: 'parsing chip count from "A__B__99999999999999999999C__G_1__C__GHZ_1__D": strconv.Atoi: parsing "99999999999999999999": value out of range' },
    },
  ])('$name', ({ raw, want }) => {
    expect(parseTopology(raw)).toEqual(want);
  });
});

describe('topologyReplicas (upstream Topology.Replicas: "ChipCount / 8, one per node, floor of 1")', () => {
  it.each([
    [1, 1],
    [8, 1],
    [12, 1],
    [16, 2],
    [64, 8],
  ])('%i chips occupy %i nodes', (chips, nodes) => {
    expect(topologyReplicas(chips)).toBe(nodes);
  });
});

describe("goQuote (Go's %q)", () => {
  it('escapes quotes, backslashes, named controls and other control bytes as \\xNN', () => {
    expect(goQuote('a"b\\c\nd\x00e\x7f')).toBe('"a\\"b\\\\c\\nd\\x00e\\x7f"');
  });
});
