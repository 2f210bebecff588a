/**
 * The deal rules across fields (docs/deal-rules.md#rules-a-deal-must-follow), one function each, by rule id in
 * {@link RULE_CHECKS}: validateDeal (./validate.ts) runs them, in the order of DEAL_RULES, on a deal whose fields each
 * passed their own schema.
 */
import type { CompleteDealWrite } from './defaults.js';
import { GUARANTEED_IMPRESSION_TYPE_IDS, IMPRESSION_TYPES, PricingModel } from './enums.js';
import { GEO_FIELDS, TARGETING_FIELDS, isSet } from './targeting.js';
import type { DealIssue, DealRuleId, DealValidationContext, ReferenceTable } from './validation-types.js';

/** Parses a deal date-time to ms since the epoch; a date-time without an offset is read as UTC, as the API reads it. */
export function parseDealDate(value: string): number {
  const hasZone = /(Z|[+-]\d{2}:\d{2})$/i.test(value);
  return Date.parse(hasZone ? value : `${value}Z`);
}

function lookup<T extends { id: number }>(table: ReferenceTable<T> | undefined, id: number): T | undefined {
  if (!table) return undefined;
  if (Array.isArray(table)) return (table as readonly T[]).find((item) => item.id === id);
  return (table as ReadonlyMap<number, T>).get(id);
}

/** What a rule reads: the deal with its defaults (`d`, which a rule may settle), the body as sent, the context. */
export interface RuleInput {
  d: Record<string, unknown> & CompleteDealWrite;
  body: Record<string, unknown>;
  mode: DealValidationContext['mode'];
  stored: DealValidationContext['stored'];
  reference: DealValidationContext['reference'];
  now: number;
  /** True when none of the fields failed its own schema (a rule on a broken field would only repeat the problem). */
  ok: (...fields: string[]) => boolean;
  issues: DealIssue[];
  warnings: DealIssue[];
}

/** Exactly one of buyerIds / dspIds non-empty (docs/deal-rules.md#buyers-or-dsps). */
function buyersOrDsps({ d, ok, issues }: RuleInput): void {
  if (!ok('buyerIds', 'dspIds')) return;
  if (d.buyerIds.length > 0 && d.dspIds.length > 0) {
    issues.push({ path: 'dspIds', message: 'set either buyerIds or dspIds, not both', rule: 'buyers-or-dsps' });
  } else if (d.buyerIds.length === 0 && d.dspIds.length === 0) {
    issues.push({ path: 'buyerIds', message: 'one of buyerIds or dspIds must be non-empty', rule: 'buyers-or-dsps' });
  }
}

/** A DSP without multiple-buyer support is refused, with the DSP id after the message. */
function multipleBuyerDsp({ d, reference, issues }: RuleInput): void {
  d.dspIds.forEach((dspId, i) => {
    if (lookup(reference?.dsps, dspId)?.isMultiBuyerDealForbidden) {
      issues.push({
        path: `dspIds[${i}]`,
        message: `Deal cannot target DSPs that do not support multiple-buyer targeting: ${dspId}`,
        rule: 'multiple-buyer-dsp',
      });
    }
  });
}

/** DSPs, buyers and the identity provider name existing lookup items, when the reference data is complete. */
function knownIds({ d, reference, ok, issues }: RuleInput): void {
  if (!reference?.complete) return;
  if (reference.dsps) {
    d.dspIds.forEach((dspId, i) => {
      if (!lookup(reference.dsps, dspId))
        issues.push({ path: `dspIds[${i}]`, message: `unknown DSP ${dspId}`, rule: 'known-ids' });
    });
  }
  if (reference.buyers) {
    d.buyerIds.forEach((buyerId, i) => {
      if (!lookup(reference.buyers, buyerId))
        issues.push({ path: `buyerIds[${i}]`, message: `unknown buyer ${buyerId}`, rule: 'known-ids' });
    });
  }
  const idp = d.identityProviderId;
  if (reference.identityProviders && idp !== null && ok('timeFrameId', 'impressions', 'identityProviderId')) {
    if (!lookup(reference.identityProviders, idp))
      issues.push({ path: 'identityProviderId', message: `unknown identity provider ${idp}`, rule: 'known-ids' });
  }
}

/** At least one targeting criterion (docs/deal-rules.md#targeting-is-required). */
function targetingRequired({ d, ok, issues }: RuleInput): void {
  if (ok(...TARGETING_FIELDS) && !TARGETING_FIELDS.some((f) => isSet(f, d[f]))) {
    issues.push({
      path: '',
      message:
        'at least one targeting criterion is required, e.g. countryCodes, platformIds or audienceSegmentsTargeting',
      rule: 'targeting-required',
    });
  }
}

/** One geographic targeting type at a time (docs/deal-rules.md#one-kind-of-geography). */
function oneGeoType({ d, issues }: RuleInput): void {
  const geo = GEO_FIELDS.filter((f) => isSet(f, d[f]));
  for (const f of geo.slice(1)) {
    issues.push({
      path: f,
      message: `only one geographic targeting type may be used at a time: ${geo.join(' and ')} are all set`,
      rule: 'one-geo-type',
    });
  }
}

/** Hyperlocal targeting and coordinates need another geographic targeting field. */
function hyperlocalNeedsGeo({ d, ok, issues }: RuleInput): void {
  if (!ok(...GEO_FIELDS) || GEO_FIELDS.some((f) => isSet(f, d[f]))) return;
  for (const path of ['hyperLocalTargeting', 'coordinates'] as const) {
    const set = path === 'coordinates' ? d.coordinates.length > 0 : Boolean(d.hyperLocalTargeting);
    if (set) {
      issues.push({
        path,
        message: 'needs another geographic targeting field as well, e.g. countryCodes',
        rule: 'hyperlocal-needs-geo',
      });
    }
  }
}

/** A player size needs one of its two dimensions. */
function playerSizeDimension({ d, issues }: RuleInput): void {
  const size = d.videoPlayerSizeDimension;
  if (size && (size.minWidth ?? null) === null && (size.minHeight ?? null) === null) {
    issues.push({
      path: 'videoPlayerSizeDimension',
      message: 'needs minWidth or minHeight',
      rule: 'player-size-dimension',
    });
  }
}

/** Pricing shapes per model (docs/deal-rules.md#pricing-fields). */
function pricingModelCosts({ d, ok, issues }: RuleInput): void {
  if (!ok('pricingModel', 'price', 'companyVendorCostRate', 'minCompanyVendorCost')) return;
  const push = (path: string, message: string) => issues.push({ path, message, rule: 'pricing-model-costs' });
  const cvr = d.companyVendorCostRate ?? 0;
  const minCost = d.minCompanyVendorCost ?? 0;
  if (d.pricingModel === PricingModel.VariableFloor) {
    if (d.price > 0 && cvr > 0) {
      push(
        'companyVendorCostRate',
        'must be 0 for a variable floor deal with a floor price (price above 0); use price 0 to sell on the publisher floor with a margin rate',
      );
    } else if (d.price === 0 && !(cvr > 0)) {
      push('companyVendorCostRate', 'must be above 0 for a variable floor deal on the publisher floor (price 0)');
    }
    if (minCost > 0) {
      push(
        'minCompanyVendorCost',
        'applies to fixed price and custom floor deals only; variable floor deals use companyVendorCostRate',
      );
    }
    return;
  }
  if (!(d.price > 0)) {
    const label = { 1: 'fixed price', 2: 'custom floor', 3: 'guaranteed price' }[d.pricingModel];
    push('price', `must be above 0 for a ${label} deal`);
  }
  if (cvr > 0) push('companyVendorCostRate', 'applies to variable floor deals only; use minCompanyVendorCost');
}

/** Guaranteed price (docs/deal-rules.md#guaranteed-deals). */
function guaranteedDeal({ d, reference, ok, issues }: RuleInput): void {
  if (!ok('pricingModel') || d.pricingModel !== PricingModel.GuaranteedPrice) return;
  const push = (path: string, message: string) => issues.push({ path, message, rule: 'guaranteed-deal' });
  if (ok('buyerIds') && d.buyerIds.length !== 1) {
    push('buyerIds', `a guaranteed-price deal needs exactly one buyer in buyerIds, got ${d.buyerIds.length}`);
  }
  if (ok('buyerIds') && d.buyerIds.length === 1) {
    const buyer = lookup(reference?.buyers, d.buyerIds[0]);
    if (buyer && !buyer.isGuaranteedDealEligible)
      push('buyerIds[0]', `buyer ${d.buyerIds[0]} is not eligible for guaranteed deals`);
  }
  if (ok('impressionTypeIds')) {
    const allowed = 'Display (0), In-Stream (2) and Out-Stream (3)';
    if (d.impressionTypeIds.length === 0) {
      push('impressionTypeIds', `a guaranteed-price deal must name its impression types: only ${allowed} are allowed`);
    }
    d.impressionTypeIds.forEach((t, i) => {
      if (!GUARANTEED_IMPRESSION_TYPE_IDS.includes(t)) {
        push(
          `impressionTypeIds[${i}]`,
          `impression type ${t} (${IMPRESSION_TYPES[t as keyof typeof IMPRESSION_TYPES]}) is not allowed in a guaranteed-price deal: only ${allowed} are`,
        );
      }
    });
  }
  if (ok('beginDate') && d.beginDate === null) push('beginDate', 'a guaranteed-price deal needs a beginDate');
  if (ok('endDate') && d.endDate === null) push('endDate', 'a guaranteed-price deal needs an endDate');
}

/** End after begin. */
function endAfterBegin({ d, ok, issues }: RuleInput): void {
  if (
    ok('beginDate', 'endDate') &&
    d.beginDate &&
    d.endDate &&
    parseDealDate(d.endDate) <= parseDealDate(d.beginDate)
  ) {
    issues.push({ path: 'endDate', message: 'must be after beginDate', rule: 'end-after-begin' });
  }
}

/** currency and pricingModel are immutable; isDspSyncEnabled never returns to false (#fields-that-cannot-change). */
function immutableAfterCreation({ d, body, mode, stored, ok, issues }: RuleInput): void {
  if (mode !== 'update' || !stored) return;
  const push = (path: string, message: string) => issues.push({ path, message, rule: 'immutable-after-creation' });
  if (ok('currency') && stored.currency !== undefined && d.currency !== stored.currency) {
    push('currency', `cannot change after creation (the deal is in ${stored.currency})`);
  }
  if (ok('pricingModel') && stored.pricingModel !== undefined && d.pricingModel !== stored.pricingModel) {
    push('pricingModel', `cannot change after creation (the deal has pricingModel ${stored.pricingModel})`);
  }
  // An omitted isDspSyncEnabled keeps true, as it cannot reset.
  if (stored.isDspSyncEnabled === true && ok('isDspSyncEnabled')) {
    if (body.isDspSyncEnabled === false) push('isDspSyncEnabled', 'cannot be set back to false once enabled');
    d.isDspSyncEnabled = true;
  }
}

/** Guaranteed deal flight phases (docs/deal-rules.md#flight-phases-of-a-guaranteed-deal). */
function guaranteedFlight({ d, mode, stored, now, ok, issues }: RuleInput): void {
  if (mode !== 'update' || stored?.pricingModel !== PricingModel.GuaranteedPrice) return;
  if (!stored.beginDate || !stored.endDate || !ok('beginDate', 'endDate')) return;
  const push = (path: string, message: string) => issues.push({ path, message, rule: 'guaranteed-flight' });
  const begin = parseDealDate(stored.beginDate);
  const end = parseDealDate(stored.endDate);
  const newBegin = d.beginDate === null ? NaN : parseDealDate(d.beginDate);
  const newEnd = d.endDate === null ? NaN : parseDealDate(d.endDate);
  if (now >= begin && now <= end) {
    if (newBegin !== begin)
      push('beginDate', `cannot change while the guaranteed deal is in flight (it began ${stored.beginDate})`);
    if (!(newEnd >= end))
      push('endDate', `can only be extended while the guaranteed deal is in flight (it ends ${stored.endDate})`);
  } else if (now > end) {
    if (newBegin !== begin) push('beginDate', `cannot change after the guaranteed deal has ended (${stored.endDate})`);
    if (newEnd !== end) push('endDate', `cannot change after the guaranteed deal has ended (${stored.endDate})`);
  }
}

/** Budgets (delivery capping by budgetIds / allocations) need both dates (#capping-and-budget-rules). */
function budgetNeedsDates({ d, ok, issues }: RuleInput): void {
  const budget =
    d.budgetIds.length > 0 || d.publisherId !== null || d.shareAllocation !== null || d.adjustedTarget !== null;
  if (!budget || !ok('beginDate', 'endDate')) return;
  for (const f of ['beginDate', 'endDate'] as const) {
    if (d[f] === null)
      issues.push({
        path: f,
        message: 'is required when a budget (budgetIds) is configured',
        rule: 'budget-needs-dates',
      });
  }
}

/**
 * Frequency capping comes as a pair, and needs a capable identity provider, otherwise it is ignored with a warning
 * (docs/deal-rules.md#capping-and-budget-rules).
 */
function frequencyCappingPair({ d, reference, ok, issues, warnings }: RuleInput): void {
  if (!ok('timeFrameId', 'impressions', 'identityProviderId')) return;
  const tf = d.timeFrameId;
  const imp = d.impressions;
  if ((tf === null) !== (imp === null)) {
    issues.push({
      path: tf === null ? 'timeFrameId' : 'impressions',
      message: 'frequency capping needs both timeFrameId and impressions',
      rule: 'frequency-capping-pair',
    });
  }
  if (tf === null || imp === null) return;
  const idp = d.identityProviderId === null ? undefined : lookup(reference?.identityProviders, d.identityProviderId);
  // An unknown provider is the known-ids rule's issue.
  if (d.identityProviderId !== null && !idp && reference?.complete && reference.identityProviders) return;
  const why =
    d.identityProviderId === null
      ? 'no identityProviderId is set'
      : idp && !idp.isFrequencyCappingSupported
        ? `identity provider ${d.identityProviderId} does not support frequency capping`
        : null;
  if (why) {
    warnings.push({ path: 'timeFrameId', message: `frequency capping ignored: ${why}` });
    d.timeFrameId = null;
    d.impressions = null;
  }
}

/**
 * The check of each cross-field rule, by rule id; the rules met while reading the fields (a read-only id that does
 * not match, a missing mandatory field, two decimal places) are checked there and have no entry.
 */
export const RULE_CHECKS: Partial<Record<DealRuleId, (input: RuleInput) => void>> = {
  'buyers-or-dsps': buyersOrDsps,
  'multiple-buyer-dsp': multipleBuyerDsp,
  'known-ids': knownIds,
  'targeting-required': targetingRequired,
  'one-geo-type': oneGeoType,
  'hyperlocal-needs-geo': hyperlocalNeedsGeo,
  'player-size-dimension': playerSizeDimension,
  'pricing-model-costs': pricingModelCosts,
  'guaranteed-deal': guaranteedDeal,
  'end-after-begin': endAfterBegin,
  'immutable-after-creation': immutableAfterCreation,
  'guaranteed-flight': guaranteedFlight,
  'budget-needs-dates': budgetNeedsDates,
  'frequency-capping-pair': frequencyCappingPair,
};
