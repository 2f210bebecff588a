// Options objects are checked where they are created: plain JavaScript gets no types, so a mistake must fail at
// once with the field named, never do something else on every ad call.
import { describe, expect, test } from 'vitest';
import {
  buildBidRequest,
  createReport,
  OptionsError,
  parseAdCall,
  resolveLimits,
} from '../../../src/adserver/index.js';

const call = parseAdCall({ url: '/ac?nwid=1234&siteid=1&pgid=2&fmtid=3' });

describe('options are checked where they are given', () => {
  test('buildBidRequest refuses an OpenRTB version it does not write, and a partner without an id', () => {
    expect(() => buildBidRequest(call, { id: 'dsp-a', openrtb: '2.4' } as never)).toThrow(
      new OptionsError('partner.openrtb', "must be '2.5', '2.6' or 'both' (got \"2.4\")"),
    );
    expect(() => buildBidRequest(call, {} as never)).toThrow(
      /^partner\.id must name the partner, a non-empty string \(got undefined\)$/,
    );
    expect(() => buildBidRequest(call, undefined as never)).toThrow(/^partner must be an object/);
    expect(buildBidRequest(call, { id: 'dsp-a', openrtb: '2.5' }).imp).toHaveLength(1);
  });

  test('createReport refuses a negative or fractional retention, quoting what was given', () => {
    expect(() => createReport({ maxDays: -1 })).toThrow(
      new OptionsError('maxDays', 'must be a whole number > 0 (got -1)'),
    );
    expect(() => createReport({ maxHours: '3' as never })).toThrow(/^maxHours must be a whole number > 0 \(got "3"\)$/);
    expect(() => createReport({ maxNetworksPerDay: 1.5 })).toThrow(/maxNetworksPerDay/);
    expect(() => createReport({ dmps: {} as never })).toThrow(/^dmps must be an array/);
    expect(createReport({ maxDays: 7 })).toBeDefined();
  });

  test('limits: an unknown cap or a cap that is not a whole number > 0 is named', () => {
    expect(() => resolveLimits({ maxEid: 5 } as never)).toThrow(
      /^limits\.maxEid is not a cap \(known: maxEidsParamLength,/,
    );
    expect(() => resolveLimits({ maxEids: 0 })).toThrow(/^limits\.maxEids must be a whole number > 0 \(got 0\)$/);
    expect(resolveLimits({ maxEids: 5, maxUids: undefined }).maxEids).toBe(5);
  });

  test('the error is an OptionsError, a TypeError with the field', () => {
    try {
      createReport({ maxDays: -1 });
    } catch (e) {
      expect(e).toBeInstanceOf(OptionsError);
      expect(e).toBeInstanceOf(TypeError);
      expect((e as OptionsError).field).toBe('maxDays');
      expect((e as OptionsError).name).toBe('OptionsError');
    }
  });
});

describe('consent refusals read once', () => {
  test('a call where GDPR applies and no TC string came says so without repeating "GDPR applies"', async () => {
    const { createForwardingPolicy, explainForwarding } = await import('../../../src/adserver/index.js');
    const gdprCall = parseAdCall({
      url:
        '/ac?nwid=1&gdpr=1&eids=' +
        Buffer.from(JSON.stringify([{ source: 'id5-sync.com', uids: [{ id: 'x', atype: 1 }] }])).toString('base64url'),
    });
    const partner = { id: 'dsp-a', gvlVendorId: 45 };
    const policy = createForwardingPolicy({});
    const text = JSON.stringify(explainForwarding(gdprCall, [partner], policy));
    expect(text).toContain('GDPR applies and the call carries no TC string');
    expect(text).not.toContain('GDPR applies: GDPR applies');
  });
});

describe('capping messages quote what was given', () => {
  test('max given as the string "3" is quoted as a string; an array of providers says one per network', async () => {
    const { defineFrequencyCap, resolveAlternativeIds } = await import('../../../src/adserver/index.js');
    expect(() => defineFrequencyCap({ item: 'deal:1', max: '3' as never, per: 'day' })).toThrow(
      /max must be an integer >= 1 \(got "3"\)/,
    );
    expect(() => resolveAlternativeIds({ 1234: ['id5-sync.com', 'liveramp.com'] as never })).toThrow(
      'alternativeIds[1234]: one provider per network (a provider id or a source), got an array',
    );
    expect(() => resolveAlternativeIds({ 1234: 'nope.example' })).toThrow(
      'alternativeIds[1234]: "nope.example" is not a registered provider',
    );
  });
});
