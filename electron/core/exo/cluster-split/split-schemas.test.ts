/** The addresses exo publishes for its Macs, read from the real two-node capture and from what must be skipped. */
import { describe, expect, it } from 'vitest';
import { readReal, snakeCaseKeys } from '../../../../test/support/fake-exo';
import { parseNodeAddresses } from './split-schemas';

describe('parseNodeAddresses', () => {
  it("reads each Mac's interfaces from the real two-node capture (camelCase and snake_case)", () => {
    const state = readReal('two-node/state-ring-node-a.json');
    const ids = Object.fromEntries(Object.entries(state.nodeIdentities as Record<string, { friendlyName: string }>).map(([id, v]) => [v.friendlyName, id]));
    const expected = new Map([
      [ids['studio-b'], ['127.0.0.2']],
      [ids['studio-a'], ['127.0.0.1']],
    ]);
    expect(parseNodeAddresses(state.nodeNetwork)).toEqual(expected);
    expect(parseNodeAddresses((snakeCaseKeys(state) as { nodeNetwork: unknown }).nodeNetwork)).toEqual(expected);
  });

  it('skips what cannot be probed and what is not an interface, and answers nothing for a wrong shape', () => {
    const value = {
      n1: {
        interfaces: [
          { name: 'en0', ipAddress: '192.168.1.20' },
          { name: 'awdl0', ipAddress: 'fe80::1' },
          { name: 'en5', ipAddress: '169.254.3.4' },
          { name: 'bad' },
          { name: 'en1', ipAddress: '192.168.1.20' },
          { name: 'en2', ipAddress: '2001:db8::42' },
        ],
      },
      n2: {},
    };
    expect(parseNodeAddresses(value)).toEqual(
      new Map([
        ['n1', ['192.168.1.20', '2001:db8::42']],
        ['n2', []],
      ]),
    );
    expect(parseNodeAddresses(['not', 'a', 'record'])).toEqual(new Map());
  });
});
