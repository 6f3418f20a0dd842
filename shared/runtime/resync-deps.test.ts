/**
 * A function's `resyncDeps` (issue 17 item 3: "A resync reads in bulk: one paginated LIST per kind
 * it needs ... handed to the same pure decisions"): built once per resync, handed to `listKeys`
 * and to every object's handler of that resync, never to an API server event.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { HandlerDeps } from './contract.js';
import { aDefinition, aResyncEvent, anApiServerEvent, aRoute, DGD_KEY, sendEvent, startTestHost, type TestHost } from './test-support.js';

const hosts: TestHost[] = [];

afterEach(async () => {
  await Promise.all(hosts.splice(0).map((started) => started.server.close()));
});

describe('FunctionDefinition.resyncDeps', () => {
  it('is called once per resync; listKeys and every object of that resync get its deps; an API server event gets the function\'s own', async () => {
    const built: (() => Date)[] = [];
    const seen: { readonly step: string; readonly resyncIndex: number }[] = [];
    const indexOf = (deps: HandlerDeps) => built.indexOf(deps.now);
    const started = await startTestHost(
      aDefinition(
        [
          aRoute({
            listKeys: async (deps) => {
              seen.push({ step: 'listKeys', resyncIndex: indexOf(deps) });
              return [DGD_KEY, { ...DGD_KEY, name: 'other' }];
            },
            handle: async (event, deps) => {
              seen.push({ step: `handle ${event.key.name}`, resyncIndex: indexOf(deps) });
              return { kind: 'Done' };
            },
          }),
        ],
        {
          resyncDeps: (deps) => {
            const now = () => new Date(0);
            built.push(now);
            return { ...deps, now };
          },
        },
      ),
    );
    hosts.push(started);

    expect((await sendEvent(started.url, aResyncEvent(), 'binary')).status).toBe(204);
    expect((await sendEvent(started.url, aResyncEvent(), 'binary')).status).toBe(204);
    expect((await sendEvent(started.url, anApiServerEvent({ id: 'evt-1' }), 'binary')).status).toBe(204);

    expect(built).toHaveLength(2);
    expect([...seen].sort((a, b) => a.resyncIndex - b.resyncIndex || a.step.localeCompare(b.step))).toEqual([
      { step: `handle ${DGD_KEY.name}`, resyncIndex: -1 },
      { step: `handle ${DGD_KEY.name}`, resyncIndex: 0 },
      { step: 'handle other', resyncIndex: 0 },
      { step: 'listKeys', resyncIndex: 0 },
      { step: `handle ${DGD_KEY.name}`, resyncIndex: 1 },
      { step: 'handle other', resyncIndex: 1 },
      { step: 'listKeys', resyncIndex: 1 },
    ]);
  });
});
