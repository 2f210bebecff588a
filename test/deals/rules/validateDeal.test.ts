import { describe, expect, test } from 'vitest';
import {
  applyDealDefaults,
  dealWriteDefaults,
  DealWriteSchema,
  validateDeal,
  type DealValidationContext,
  type DealIssue,
} from '../../../src/deals/rules/index.js';
import { validDeal } from '../fixtures.js';

/** A valid deal every test starts from. */
const deal = validDeal;

const create: DealValidationContext = { mode: 'create' };
const paths = (issues: DealIssue[]) => issues.map((i) => i.path);
const issueAt = (body: unknown, path: string, ctx: DealValidationContext = create) =>
  validateDeal(body, ctx).issues.find((i) => i.path === path);

function expectValid(body: unknown, ctx: DealValidationContext = create) {
  const r = validateDeal(body, ctx);
  expect(r.issues).toEqual([]);
  expect(r.ok).toBe(true);
  return r;
}

describe('shape', () => {
  test('accepts a minimal valid deal and fills defaults', () => {
    const r = expectValid(deal());
    expect(r.value?.dspIds).toEqual([]);
    expect(r.value?.audienceSegmentsTargeting).toBe('');
    expect(r.value?.identityProviderId).toBeNull();
  });

  test('refuses a body that is not an object', () => {
    for (const body of [null, 42, 'x', [deal()]]) {
      const r = validateDeal(body, create);
      expect(r.ok).toBe(false);
      expect(r.issues[0].path).toBe('');
    }
  });

  test('reports every missing mandatory field by name', () => {
    const r = validateDeal({ buyerIds: [1], countryCodes: ['FR'] }, create);
    expect(paths(r.issues)).toEqual(
      expect.arrayContaining(['name', 'isActive', 'beginDate', 'endDate', 'currency', 'pricingModel', 'price']),
    );
    expect(issueAt({}, 'name')?.message).toMatch(/required/);
  });

  test('names the field and the received value for wrong types', () => {
    expect(issueAt(deal({ price: '2.5' }), 'price')?.message).toBe('must be a number, got a string');
    expect(issueAt(deal({ isActive: 'yes' }), 'isActive')?.message).toMatch(/true or false/);
    expect(issueAt(deal({ buyerIds: [1.5] }), 'buyerIds[0]')?.message).toBe('must be an integer, got 1.5');
    expect(issueAt(deal({ buyerIds: 'x' }), 'buyerIds')?.message).toMatch(/array/);
  });

  test('refuses unknown fields by name, also nested ones', () => {
    expect(issueAt(deal({ colour: 'red' }), 'colour')?.message).toBe('unknown field "colour"');
    const nested = deal({ apiCompliance: { isVpaidCompliant: true, isOmSdkCompliant: false, extra: 1 } });
    expect(issueAt(nested, 'apiCompliance.extra')?.message).toBe('unknown field "extra"');
  });

  test('refuses partnerIds with a message pointing to dspIds', () => {
    expect(issueAt(deal({ partnerIds: [5] }), 'partnerIds')?.message).toMatch(/removed.*dspIds/);
    expect(issueAt(deal({ partnerIds: [] }), 'partnerIds')).toBeDefined();
  });

  test('refuses read-only fields on create but ignores them on update', () => {
    expect(issueAt(deal({ createdAt: '2025-01-01T00:00:00Z' }), 'createdAt')?.message).toMatch(/read-only/);
    expectValid(deal({ id: 7, dealId: 'EQ-7', createdAt: 'x', typeId: 1 }), {
      mode: 'update',
      stored: { id: 7, dealId: 'EQ-7' },
    });
  });

  test('refuses an id or dealId that differs from the stored deal on update', () => {
    const ctx: DealValidationContext = { mode: 'update', stored: { id: 7, dealId: 'EQ-7' } };
    expect(issueAt(deal({ id: 8 }), 'id', ctx)?.message).toMatch(/does not match/);
    expect(issueAt(deal({ dealId: 'EQ-8' }), 'dealId', ctx)?.message).toMatch(/does not match/);
  });

  test('requires ISO 8601 date-times and reads offset-less ones as UTC', () => {
    expectValid(deal({ beginDate: '2030-01-01T00:00:00', endDate: '2030-02-01T00:00:00+02:00' }));
    expect(issueAt(deal({ beginDate: '01/02/2030' }), 'beginDate')?.message).toMatch(/ISO 8601/);
  });

  test('requires an ISO 4217 currency code', () => {
    expectValid(deal({ currency: 'USD' }));
    expect(issueAt(deal({ currency: 'euro' }), 'currency')?.message).toMatch(/ISO 4217/);
  });

  test('requires a non-empty name', () => {
    expect(issueAt(deal({ name: '  ' }), 'name')?.message).toMatch(/empty/);
  });

  test('accepts real ISO 3166 country codes only', () => {
    expectValid(deal({ countryCodes: ['DE', 'GB', 'US'] }));
    expect(issueAt(deal({ countryCodes: ['UK'] }), 'countryCodes[0]')?.message).toMatch(/ISO 3166/);
    expect(issueAt(deal({ countryCodes: ['fr'] }), 'countryCodes[0]')).toBeDefined();
  });

  test('accepts prices with at most two decimals', () => {
    expectValid(deal({ price: 1.23 }));
    expect(issueAt(deal({ price: 1.234 }), 'price')?.message).toMatch(/2 decimal/);
    expect(issueAt(deal({ price: -1 }), 'price')?.message).toMatch(/at least 0/);
  });

  test('accepts percentages from 0 to 100 only', () => {
    expectValid(deal({ viewabilityTargetingPercentage: 0, videoCompletionTargetingPercentage: 100 }));
    expect(issueAt(deal({ viewabilityTargetingPercentage: 101 }), 'viewabilityTargetingPercentage')?.message).toBe(
      'must be at most 100',
    );
    expect(
      issueAt(deal({ videoCompletionTargetingPercentage: -1 }), 'videoCompletionTargetingPercentage')?.message,
    ).toBe('must be at least 0');
  });

  test('checks enumerations: impression types, platforms, pricing model, pacing mode', () => {
    expectValid(deal({ impressionTypeIds: [0, 5], platformIds: [1, 6], pacingMode: 'Even' }));
    expect(issueAt(deal({ impressionTypeIds: [6] }), 'impressionTypeIds[0]')?.message).toMatch(/one of/);
    expect(issueAt(deal({ platformIds: [0] }), 'platformIds[0]')).toBeDefined();
    expect(issueAt(deal({ pricingModel: 4 }), 'pricingModel')).toBeDefined();
    expect(issueAt(deal({ pacingMode: 'Fast' }), 'pacingMode')).toBeDefined();
  });

  test('checks segment expressions and creative sizes', () => {
    expectValid(deal({ audienceSegmentsTargeting: '12,34;NOT 56', creativeSizes: ['300*250'] }));
    expect(issueAt(deal({ audienceSegmentsTargeting: '12,,34' }), 'audienceSegmentsTargeting')).toBeDefined();
    expect(issueAt(deal({ creativeSizes: ['300x250'] }), 'creativeSizes[0]')?.message).toMatch(/300\*250/);
  });

  test('the exported write schema is strict', () => {
    expect(DealWriteSchema.safeParse({ ...deal(), nope: 1 }).success).toBe(false);
    expect(DealWriteSchema.safeParse(deal()).success).toBe(true);
  });
});

describe('buyers and DSPs', () => {
  test('accepts buyerIds alone or dspIds alone', () => {
    expectValid(deal({ buyerIds: [1] }));
    expectValid(deal({ buyerIds: [], dspIds: [3] }));
  });

  test('refuses both buyerIds and dspIds', () => {
    expect(issueAt(deal({ buyerIds: [1], dspIds: [3] }), 'dspIds')?.message).toMatch(/not both/);
  });

  test('refuses neither buyerIds nor dspIds', () => {
    expect(issueAt(deal({ buyerIds: [] }), 'buyerIds')?.message).toMatch(/must be non-empty/);
    expect(issueAt(deal({ buyerIds: undefined }), 'buyerIds')).toBeDefined();
  });

  test('refuses a DSP without multiple-buyer support with the API message followed by the DSP id', () => {
    const reference = {
      dsps: [
        { id: 3, isMultiBuyerDealForbidden: false },
        { id: 4, isMultiBuyerDealForbidden: true },
      ],
    };
    expectValid(deal({ buyerIds: [], dspIds: [3] }), { mode: 'create', reference });
    const issue = issueAt(deal({ buyerIds: [], dspIds: [3, 4] }), 'dspIds[1]', { mode: 'create', reference });
    expect(issue?.message).toBe('Deal cannot target DSPs that do not support multiple-buyer targeting: 4');
  });

  test('skips the DSP rule when the reference for the id is absent, unless the reference is complete', () => {
    const reference = { dsps: new Map([[3, { id: 3, isMultiBuyerDealForbidden: false }]]) };
    expectValid(deal({ buyerIds: [], dspIds: [9] }), { mode: 'create', reference });
    expect(
      issueAt(deal({ buyerIds: [], dspIds: [9] }), 'dspIds[0]', {
        mode: 'create',
        reference: { ...reference, complete: true },
      })?.message,
    ).toBe('unknown DSP 9');
  });

  test('reports unknown buyers only against complete reference data', () => {
    const reference = { buyers: [{ id: 101, isGuaranteedDealEligible: false }] };
    expectValid(deal({ buyerIds: [102] }), { mode: 'create', reference });
    expect(
      issueAt(deal({ buyerIds: [102] }), 'buyerIds[0]', { mode: 'create', reference: { ...reference, complete: true } })
        ?.message,
    ).toBe('unknown buyer 102');
  });
});

describe('targeting and hyperlocal targeting', () => {
  test('needs at least one targeting criterion', () => {
    expect(issueAt(deal({ countryCodes: [] }), '')?.message).toMatch(/targeting criterion/);
    expectValid(deal({ countryCodes: [], platformIds: [1] }));
    expectValid(deal({ countryCodes: [], isCTV: true }));
    expect(issueAt(deal({ countryCodes: [], isCTV: false, audienceSegmentsTargeting: '' }), '')).toBeDefined();
  });

  test('allows only one geographic targeting type', () => {
    expectValid(deal({ countryCodes: [], cityIds: [1, '2'] }));
    expect(issueAt(deal({ cityIds: [1] }), 'cityIds')?.message).toMatch(/only one geographic targeting type/);
    expect(issueAt(deal({ countryCodes: [], regionIds: [1], dmaIds: [501] }), 'dmaIds')).toBeDefined();
  });

  test('needs another geographic field with hyperLocalTargeting', () => {
    const hyper = { precision: 2, coordinates: [{ latitude: 48.85, longitude: 2.35, radius: 500 }] };
    expectValid(deal({ hyperLocalTargeting: hyper }));
    expect(
      issueAt(deal({ countryCodes: [], platformIds: [1], hyperLocalTargeting: hyper }), 'hyperLocalTargeting')?.message,
    ).toMatch(/another geographic/);
    expect(
      issueAt(deal({ countryCodes: [], platformIds: [1], coordinates: hyper.coordinates }), 'coordinates'),
    ).toBeDefined();
  });

  test('accepts hyperlocal precision 1 or 2 only', () => {
    const hyper = (precision: number) => ({ precision, coordinates: [{ latitude: 0, longitude: 0, radius: 10 }] });
    expectValid(deal({ hyperLocalTargeting: hyper(1) }));
    expect(issueAt(deal({ hyperLocalTargeting: hyper(3) }), 'hyperLocalTargeting.precision')).toBeDefined();
  });

  test('checks latitude and longitude ranges', () => {
    const at = (latitude: number, longitude: number) =>
      deal({ hyperLocalTargeting: { precision: 1, coordinates: [{ latitude, longitude, radius: 10 }] } });
    expectValid(at(-90, 180));
    expect(issueAt(at(90.5, 0), 'hyperLocalTargeting.coordinates[0].latitude')?.message).toBe(
      'must be between -90 and 90',
    );
    expect(issueAt(at(0, -180.1), 'hyperLocalTargeting.coordinates[0].longitude')?.message).toBe(
      'must be between -180 and 180',
    );
  });

  test('needs minWidth or minHeight in a player size dimension', () => {
    expectValid(deal({ videoPlayerSizeDimension: { minWidth: 640, minHeight: null } }));
    expect(
      issueAt(deal({ videoPlayerSizeDimension: { minWidth: null, minHeight: null } }), 'videoPlayerSizeDimension')
        ?.message,
    ).toMatch(/minWidth or minHeight/);
  });
});

describe('pricing shapes', () => {
  test('variable floor with a floor price takes companyVendorCostRate 0', () => {
    expectValid(deal({ pricingModel: 0, price: 1.5, companyVendorCostRate: 0 }));
    expect(
      issueAt(deal({ pricingModel: 0, price: 1.5, companyVendorCostRate: 0.1 }), 'companyVendorCostRate'),
    ).toBeDefined();
  });

  test('variable floor on the publisher floor needs companyVendorCostRate above 0', () => {
    expectValid(deal({ pricingModel: 0, price: 0, companyVendorCostRate: 0.15 }));
    expect(issueAt(deal({ pricingModel: 0, price: 0 }), 'companyVendorCostRate')?.message).toMatch(/above 0/);
  });

  test('variable floor refuses minCompanyVendorCost', () => {
    expect(
      issueAt(deal({ pricingModel: 0, price: 1, minCompanyVendorCost: 0.5 }), 'minCompanyVendorCost'),
    ).toBeDefined();
  });

  test('companyVendorCostRate is a fraction', () => {
    expect(
      issueAt(deal({ pricingModel: 0, price: 0, companyVendorCostRate: 15 }), 'companyVendorCostRate')?.message,
    ).toMatch(/fraction/);
  });

  test('fixed price and custom floor need a price above 0 and use minCompanyVendorCost', () => {
    expectValid(deal({ pricingModel: 1, price: 3, minCompanyVendorCost: 0.5 }));
    expectValid(deal({ pricingModel: 2, price: 1.2, minCompanyVendorCost: 0.2 }));
    expect(issueAt(deal({ pricingModel: 2, price: 0 }), 'price')?.message).toMatch(/custom floor/);
    expect(
      issueAt(deal({ pricingModel: 1, price: 3, companyVendorCostRate: 0.2 }), 'companyVendorCostRate'),
    ).toBeDefined();
  });
});

describe('guaranteed price and flight phases', () => {
  const guaranteed = (o: Record<string, unknown> = {}) =>
    deal({
      pricingModel: 3,
      price: 10,
      impressionTypeIds: [0, 2],
      beginDate: '2030-01-01T00:00:00Z',
      endDate: '2030-02-01T00:00:00Z',
      ...o,
    });
  const reference = {
    buyers: [
      { id: 101, isGuaranteedDealEligible: true },
      { id: 102, isGuaranteedDealEligible: false },
      { id: 103, isGuaranteedDealEligible: true },
    ],
  };

  test('needs exactly one buyer', () => {
    expectValid(guaranteed(), { mode: 'create', reference });
    expect(issueAt(guaranteed({ buyerIds: [101, 103] }), 'buyerIds', { mode: 'create', reference })?.message).toMatch(
      /exactly one buyer/,
    );
  });

  test('needs a buyer eligible for guaranteed deals', () => {
    expect(issueAt(guaranteed({ buyerIds: [102] }), 'buyerIds[0]', { mode: 'create', reference })?.message).toBe(
      'buyer 102 is not eligible for guaranteed deals',
    );
  });

  test('allows impression types Display, In-Stream and Out-Stream only', () => {
    expectValid(guaranteed({ impressionTypeIds: [0, 2, 3] }));
    expect(issueAt(guaranteed({ impressionTypeIds: [0, 1] }), 'impressionTypeIds[1]')?.message).toMatch(/Native/);
    expect(issueAt(guaranteed({ impressionTypeIds: [] }), 'impressionTypeIds')).toBeDefined();
  });

  test('needs both dates', () => {
    expect(issueAt(guaranteed({ endDate: null }), 'endDate')?.message).toMatch(/needs an endDate/);
  });

  const stored = {
    pricingModel: 3 as const,
    currency: 'EUR',
    beginDate: '2030-01-01T00:00:00Z',
    endDate: '2030-02-01T00:00:00Z',
  };
  const at = (iso: string): DealValidationContext => ({ mode: 'update', stored, now: Date.parse(iso) });

  test('pre-flight: both dates can change', () => {
    expectValid(
      guaranteed({ beginDate: '2029-12-01T00:00:00Z', endDate: '2030-01-15T00:00:00Z' }),
      at('2029-06-01T00:00:00Z'),
    );
  });

  test('in flight: beginDate cannot change and endDate can only be extended', () => {
    const ctx = at('2030-01-10T00:00:00Z');
    expectValid(guaranteed({ endDate: '2030-03-01T00:00:00Z' }), ctx);
    expect(issueAt(guaranteed({ beginDate: '2030-01-02T00:00:00Z' }), 'beginDate', ctx)?.message).toMatch(/in flight/);
    expect(issueAt(guaranteed({ endDate: '2030-01-20T00:00:00Z' }), 'endDate', ctx)?.message).toMatch(
      /only be extended/,
    );
  });

  test('post-flight: neither date can change', () => {
    const ctx = at('2030-03-01T00:00:00Z');
    expectValid(guaranteed(), ctx);
    expect(issueAt(guaranteed({ endDate: '2030-04-01T00:00:00Z' }), 'endDate', ctx)?.message).toMatch(/ended/);
    expect(issueAt(guaranteed({ beginDate: '2029-01-01T00:00:00Z' }), 'beginDate', ctx)).toBeDefined();
  });
});

describe('dates, immutables and sync', () => {
  test('endDate must come after beginDate', () => {
    expectValid(deal({ beginDate: '2030-01-01T00:00:00Z', endDate: '2030-01-02T00:00:00Z' }));
    expect(
      issueAt(deal({ beginDate: '2030-01-02T00:00:00Z', endDate: '2030-01-01T00:00:00Z' }), 'endDate')?.message,
    ).toBe('must be after beginDate');
  });

  test('currency cannot change on update', () => {
    const ctx: DealValidationContext = { mode: 'update', stored: { currency: 'EUR', pricingModel: 1 } };
    expectValid(deal(), ctx);
    expect(issueAt(deal({ currency: 'USD' }), 'currency', ctx)?.message).toMatch(/cannot change/);
  });

  test('pricingModel cannot change on update', () => {
    const ctx: DealValidationContext = { mode: 'update', stored: { currency: 'EUR', pricingModel: 1 } };
    expect(issueAt(deal({ pricingModel: 2 }), 'pricingModel', ctx)?.message).toMatch(/cannot change/);
  });

  test('isDspSyncEnabled can turn on but never back off; omitted keeps it on', () => {
    expectValid(deal({ isDspSyncEnabled: true }), { mode: 'update', stored: { isDspSyncEnabled: false } });
    const ctx: DealValidationContext = { mode: 'update', stored: { isDspSyncEnabled: true } };
    expect(issueAt(deal({ isDspSyncEnabled: false }), 'isDspSyncEnabled', ctx)?.message).toMatch(
      /cannot be set back to false/,
    );
    expect(expectValid(deal(), ctx).value?.isDspSyncEnabled).toBe(true);
  });
});

describe('capping and budgets', () => {
  test('a budget needs both dates', () => {
    expectValid(deal({ budgetIds: [4], beginDate: '2030-01-01T00:00:00Z', endDate: '2030-02-01T00:00:00Z' }));
    const r = validateDeal(deal({ budgetIds: [4] }), create);
    expect(paths(r.issues)).toEqual(['beginDate', 'endDate']);
  });

  test('frequency capping is kept with a capable identity provider', () => {
    const reference = { identityProviders: [{ id: 5, isFrequencyCappingSupported: true }] };
    const r = expectValid(deal({ identityProviderId: 5, timeFrameId: 1, impressions: 3 }), {
      mode: 'create',
      reference,
    });
    expect(r.value).toMatchObject({ timeFrameId: 1, impressions: 3 });
    expect(r.warnings).toEqual([]);
  });

  test('frequency capping is ignored without an identity provider or with one that cannot cap', () => {
    const reference = { identityProviders: [{ id: 6, isFrequencyCappingSupported: false }] };
    for (const extra of [{}, { identityProviderId: 6 }]) {
      const r = expectValid(deal({ ...extra, timeFrameId: 1, impressions: 3 }), { mode: 'create', reference });
      expect(r.value).toMatchObject({ timeFrameId: null, impressions: null });
      expect(r.warnings[0].message).toMatch(/frequency capping ignored/);
    }
  });

  test('frequency capping needs both timeFrameId and impressions', () => {
    expect(issueAt(deal({ timeFrameId: 1 }), 'impressions')?.message).toMatch(/both/);
  });
});

describe('defaults', () => {
  test('dealWriteDefaults covers every optional field with a fresh object', () => {
    const a = dealWriteDefaults();
    expect(a.countryCodes).toEqual([]);
    expect(a.isCTV).toBe(false);
    expect(a.hyperLocalTargeting).toBeNull();
    expect('name' in a).toBe(false);
    a.countryCodes.push('FR');
    expect(dealWriteDefaults().countryCodes).toEqual([]);
  });

  test('applyDealDefaults keeps given values and resets the rest', () => {
    const full = applyDealDefaults({ ...(deal() as never), platformIds: [1] });
    expect(full.platformIds).toEqual([1]);
    expect(full.regionIds).toEqual([]);
    expect(full.name).toBe('Premium FR display');
  });

  test('validateDeal never throws on hostile input', () => {
    const hostile = [
      undefined,
      Symbol('x'),
      { toString: null },
      Object.create(null),
      { __proto__: { name: 'x' } },
      { buyerIds: [1n] },
    ];
    for (const body of hostile) expect(() => validateDeal(body, create)).not.toThrow();
  });
});

describe('dates', () => {
  test('a date alone is midnight UTC that day, sent as a date-time', () => {
    const r = expectValid(deal({ beginDate: '2030-01-01', endDate: '2030-02-01' }), {
      mode: 'create',
      now: Date.parse('2029-12-01T00:00:00Z'),
    });
    expect(r.value).toMatchObject({ beginDate: '2030-01-01T00:00:00Z', endDate: '2030-02-01T00:00:00Z' });
  });

  test('anything else that is not a date-time is refused saying what to write', () => {
    expect(issueAt(deal({ beginDate: '01/02/2030' }), 'beginDate')?.message).toMatch(
      /e\.g\. 2025-01-31T00:00:00Z, or a date, 2025-01-31/,
    );
  });
});
