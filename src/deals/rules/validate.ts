/**
 * validateDeal: every rule of docs/deal-rules.md#rules-a-deal-must-follow, collected as issues, never thrown.
 */
import { formatPath } from '../../core/path.js';
import type { z } from 'zod';
import { applyDealDefaults, type CompleteDealWrite } from './defaults.js';
import { GUARANTEED_IMPRESSION_TYPE_IDS, IMPRESSION_TYPES, PricingModel } from './enums.js';
import { DEAL_READ_ONLY_FIELDS, MANDATORY_DEAL_FIELDS, dealWriteFields, type DealWrite } from './schemas.js';

/**
 * The rules validateDeal checks beyond each field's own shape, by id: an issue that breaks one of them names it in
 * `rule`. The simulator's OpenAPI document lists them (JSON Schema cannot express them), so a body the document
 * accepts is refused only for one of these reasons (docs/simulator.md "The OpenAPI document").
 */
export const DEAL_RULES = {
  'buyers-or-dsps': 'exactly one of buyerIds and dspIds is non-empty',
  'multiple-buyer-dsp': 'a DSP in dspIds supports multiple-buyer deals (GET /dsps: isMultiBuyerDealForbidden false)',
  'known-ids': 'dspIds, buyerIds and identityProviderId name existing lookup items',
  'targeting-required':
    'at least one targeting criterion is set, e.g. countryCodes, platformIds or audienceSegmentsTargeting',
  'one-geo-type':
    'at most one of countryCodes, regionIds, cityIds, stateIds, dmaIds and countryCodesPostalCodes is set',
  'hyperlocal-needs-geo': 'hyperLocalTargeting and coordinates come with another geographic targeting field',
  'player-size-dimension': 'videoPlayerSizeDimension has minWidth or minHeight',
  'pricing-model-costs':
    'variable floor: price 0 with companyVendorCostRate above 0, or a price with no rate, and no minCompanyVendorCost; ' +
    'other models: price above 0 and no companyVendorCostRate',
  'guaranteed-deal':
    'a guaranteed-price deal has one eligible buyer, beginDate, endDate and impression types among Display, ' +
    'In-Stream and Out-Stream',
  'end-after-begin': 'endDate is after beginDate',
  'immutable-after-creation': 'currency and pricingModel never change; isDspSyncEnabled never returns to false',
  'guaranteed-flight':
    'a guaranteed deal in flight keeps its beginDate and may only extend endDate; an ended one keeps both',
  'budget-needs-dates':
    'a budget (budgetIds, publisherId, shareAllocation, adjustedTarget) needs beginDate and endDate',
  'frequency-capping-pair': 'timeFrameId and impressions come together',
  'matches-replaced-deal': 'in a PUT body, id and dealId, when given, are those of the deal replaced',
} as const;

/** The id of a rule of DEAL_RULES. */
export type DealRuleId = keyof typeof DEAL_RULES;

/**
 * One problem found in a deal: `path` names the field (`hyperLocalTargeting.coordinates[0].latitude`; `''` is the whole
 * deal).
 */
export interface DealIssue {
  path: string;
  message: string;
  /** The cross-field rule broken, when the field's own shape is fine (DEAL_RULES). */
  rule?: DealRuleId;
}

/** Reference data for one kind of lookup item: a map from id to item, or a plain list of items. */
export type ReferenceTable<T extends { id: number }> = ReadonlyMap<number, T> | readonly T[];

/**
 * Reference data the rules that depend on lookups read, synchronously. Every table is optional: when the table
 * or the entry for an id is absent, the rule for that id is skipped (unless `complete` is true).
 * The simulator passes full tables with `complete: true`; a client passes what it prefetched.
 */
export interface DealReference {
  /** DSPs by id (GET /dsps items); `isMultiBuyerDealForbidden: true` refuses the DSP in `dspIds`. */
  dsps?: ReferenceTable<{ id: number; isMultiBuyerDealForbidden: boolean }>;
  /** Buyer seats by id (GET /buyers items); `isGuaranteedDealEligible` allows a guaranteed deal. */
  buyers?: ReferenceTable<{ id: number; isGuaranteedDealEligible: boolean }>;
  /** Identity providers by id (GET /identityProviders items); without `isFrequencyCappingSupported`, no capping. */
  identityProviders?: ReferenceTable<{ id: number; isFrequencyCappingSupported: boolean }>;
  /**
   * True when the given tables hold every existing item, so an id missing from a given table is reported as unknown.
   */
  complete?: boolean;
}

/** What validateDeal needs besides the deal. */
export interface DealValidationContext {
  /** `create` (POST /deals) or `update` (PUT /deals/{id}: full replacement, omitted fields reset to defaults). */
  mode: 'create' | 'update';
  /**
   * In update mode, the deal as stored now (read or write shape); immutables and flight phases compare against it.
   * Skipped when absent.
   */
  stored?: Partial<CompleteDealWrite> & { id?: number; dealId?: string };
  /**
   * The current time (ms since the epoch or a Date) for the guaranteed-deal flight phases; defaults to `Date.now()`.
   */
  now?: number | Date;
  /** Lookup data for the DSP, buyer and identity provider rules. */
  reference?: DealReference;
}

/** The outcome of validateDeal. */
export interface DealValidationResult {
  /** True when there is no issue. */
  ok: boolean;
  /** When ok: the body to store, every optional field filled with its default (null, [], '' or false). */
  value?: CompleteDealWrite;
  /** Every problem, with the field path; empty when ok. */
  issues: DealIssue[];
  /** Accepted but noteworthy, e.g. frequency capping dropped for lack of a capable identity provider. */
  warnings: DealIssue[];
}

/** Parses a deal date-time to ms since the epoch; a date-time without an offset is read as UTC, as the API reads it. */
export function parseDealDate(value: string): number {
  const hasZone = /(Z|[+-]\d{2}:\d{2})$/i.test(value);
  return Date.parse(hasZone ? value : `${value}Z`);
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'object') return 'an object';
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'boolean') return String(v);
  return typeof v;
}

const EXPECTED: Record<string, string> = {
  int: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

/** zod error map giving short, field-level messages (schema-level custom messages take precedence). */
function messageFor(iss: z.core.$ZodRawIssue): string {
  switch (iss.code) {
    case 'invalid_type': {
      const exp = EXPECTED[iss.expected] ?? iss.expected;
      return `must be ${exp}, got ${typeName(iss.input)}`;
    }
    case 'too_small': {
      if (iss.origin === 'array') return `needs at least ${iss.minimum} item${Number(iss.minimum) === 1 ? '' : 's'}`;
      if (iss.origin === 'string')
        return Number(iss.minimum) <= 1 ? 'must not be empty' : `must be at least ${iss.minimum} characters`;
      return iss.inclusive === false ? `must be greater than ${iss.minimum}` : `must be at least ${iss.minimum}`;
    }
    case 'too_big': {
      if (iss.origin === 'array') return `takes at most ${iss.maximum} items`;
      if (iss.origin === 'string') return `must be at most ${iss.maximum} characters`;
      return iss.inclusive === false ? `must be less than ${iss.maximum}` : `must be at most ${iss.maximum}`;
    }
    case 'invalid_value':
      return `must be one of ${iss.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_union':
      return `must be a positive integer id or a non-empty string, got ${typeName(iss.input)}`;
    case 'unrecognized_keys':
      return `unknown field${iss.keys.length === 1 ? '' : 's'} ${iss.keys.map((k) => `"${k}"`).join(', ')}`;
    case 'invalid_format':
      return `has an invalid format (${iss.format})`;
    default:
      return 'is invalid';
  }
}

function zodIssues(field: string, issues: readonly z.core.$ZodIssue[]): DealIssue[] {
  const out: DealIssue[] = [];
  for (const iss of issues) {
    const base = [field, ...iss.path];
    if (iss.code === 'unrecognized_keys') {
      for (const key of iss.keys) out.push({ path: formatPath([...base, key]), message: `unknown field "${key}"` });
    } else {
      out.push({ path: formatPath(base), message: iss.message });
    }
  }
  return out;
}

function lookup<T extends { id: number }>(table: ReferenceTable<T> | undefined, id: number): T | undefined {
  if (!table) return undefined;
  if (Array.isArray(table)) return (table as readonly T[]).find((item) => item.id === id);
  return (table as ReadonlyMap<number, T>).get(id);
}

/** Fields that count as a targeting criterion (and the API's undefined targeting-like ones). */
const TARGETING_FIELDS = [
  'apiCompliance',
  'audienceSegmentsTargeting',
  'semanticSegmentsTargeting',
  'cityIds',
  'countryCodes',
  'creativeSizes',
  'ctvOttIds',
  'ctvCategoryIds',
  'ctvChannelIds',
  'ctvDistributorIds',
  'ctvNetworkIds',
  'dmaIds',
  'impressionTypeIds',
  'inventoryTypeIds',
  'isCTV',
  'platformIds',
  'networkIds',
  'regionIds',
  'stateIds',
  'videoAdBreakTypeIds',
  'videoCompletionTargetingPercentage',
  'videoPlacementTypeIds',
  'videoPlayerSizeDimension',
  'videoPlayerSizeBucketIds',
  'viewabilityTargetingPercentage',
  'hyperLocalTargeting',
  'coordinates',
  'countryCodesPostalCodes',
  'domains',
  'domainListId',
  'domainCategorySegmentsTargeting',
  'contentGenreNames',
  'contentCategoryNames',
  'contentContextIds',
  'contentIds',
  'contentLanguageIso6391Alpha2Codes',
  'contentChannelNames',
  'contentNetworkNames',
  'videoMaxAdDurationIds',
  'ctrTargetingPercentage',
  'isRewardedVideo',
  'skippable',
  'spoTargetingIds',
] as const;

/** Geographic targeting types, only one of which may be active. */
const GEO_FIELDS = ['countryCodes', 'regionIds', 'cityIds', 'stateIds', 'dmaIds', 'countryCodesPostalCodes'] as const;

function isSet(field: string, v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'string') return v.trim() !== '';
  if (field === 'isCTV') return v === true;
  if (field === 'apiCompliance') {
    const a = v as { isVpaidCompliant: boolean; isOmSdkCompliant: boolean };
    return a.isVpaidCompliant || a.isOmSdkCompliant;
  }
  return true;
}

const READ_ONLY = new Set<string>(DEAL_READ_ONLY_FIELDS);
const FIELDS = dealWriteFields as Record<string, z.ZodType>;

/**
 * Checks a deal write body against every rule of the deal API and returns all problems with their field
 * paths. Never throws. On success `value` is the body to store, with defaults filled in (PUT semantics).
 * @example
 * const r = validateDeal(body, { mode: 'update', stored, now: Date.now(), reference: { dsps } });
 * if (!r.ok) for (const i of r.issues) console.error(`${i.path}: ${i.message}`);
 */
export function validateDeal(deal: unknown, context: DealValidationContext): DealValidationResult {
  try {
    return check(deal, context);
  } catch (err) {
    // A rule must never throw into the caller; report it as an issue instead.
    return {
      ok: false,
      issues: [{ path: '', message: `the deal could not be validated: ${(err as Error)?.message ?? err}` }],
      warnings: [],
    };
  }
}

function check(deal: unknown, context: DealValidationContext): DealValidationResult {
  const issues: DealIssue[] = [];
  const warnings: DealIssue[] = [];
  if (deal === null || typeof deal !== 'object' || Array.isArray(deal)) {
    return {
      ok: false,
      issues: [{ path: '', message: `the deal must be a JSON object, got ${typeName(deal)}` }],
      warnings,
    };
  }
  const body = deal as Record<string, unknown>;
  const { mode, stored, reference } = context;
  const now = context.now === undefined ? Date.now() : +context.now;
  const parsed: Record<string, unknown> = {};
  const bad = new Set<string>();

  for (const [key, v] of Object.entries(body)) {
    if (key === 'partnerIds') {
      // partnerIds was removed from the API (docs/deal-rules.md#partnerids-is-gone); old deals are edited with dspIds.
      issues.push({
        path: 'partnerIds',
        message: 'partnerIds was removed from the API and is refused: use dspIds instead',
      });
      continue;
    }
    if (READ_ONLY.has(key)) {
      if (mode === 'create')
        issues.push({ path: key, message: `${key} is read-only and cannot be set when creating a deal` });
      else if (
        stored &&
        (key === 'id' || key === 'dealId') &&
        v !== undefined &&
        stored[key] !== undefined &&
        v !== stored[key]
      ) {
        issues.push({
          path: key,
          message: `does not match the deal being replaced (${key} ${JSON.stringify(stored[key])})`,
          rule: 'matches-replaced-deal',
        });
      }
      continue;
    }
    const schema = Object.hasOwn(FIELDS, key) ? FIELDS[key] : undefined;
    if (!schema) {
      issues.push({ path: key, message: `unknown field "${key}"` });
      continue;
    }
    if (v === undefined) continue;
    const r = schema.safeParse(v, { error: messageFor });
    if (r.success) parsed[key] = r.data;
    else {
      bad.add(key);
      issues.push(...zodIssues(key, r.error.issues));
    }
  }
  for (const field of MANDATORY_DEAL_FIELDS) {
    if (body[field] === undefined) {
      bad.add(field);
      issues.push({
        path: field,
        message: `is required${field === 'beginDate' || field === 'endDate' ? ' (null means no limit)' : ''}`,
      });
    }
  }

  const d = applyDealDefaults(parsed as DealWrite) as Record<string, unknown> & CompleteDealWrite;
  const ok = (...fields: string[]) => fields.every((f) => !bad.has(f));

  // Exactly one of buyerIds / dspIds non-empty (docs/deal-rules.md#buyers-or-dsps).
  if (ok('buyerIds', 'dspIds')) {
    if (d.buyerIds.length > 0 && d.dspIds.length > 0) {
      issues.push({ path: 'dspIds', message: 'set either buyerIds or dspIds, not both', rule: 'buyers-or-dsps' });
    } else if (d.buyerIds.length === 0 && d.dspIds.length === 0) {
      issues.push({ path: 'buyerIds', message: 'one of buyerIds or dspIds must be non-empty', rule: 'buyers-or-dsps' });
    }
  }
  // A DSP without multiple-buyer support is refused, with the DSP id after the message.
  d.dspIds.forEach((dspId, i) => {
    const dsp = lookup(reference?.dsps, dspId);
    if (dsp?.isMultiBuyerDealForbidden) {
      issues.push({
        path: `dspIds[${i}]`,
        message: `Deal cannot target DSPs that do not support multiple-buyer targeting: ${dspId}`,
        rule: 'multiple-buyer-dsp',
      });
    } else if (!dsp && reference?.complete && reference.dsps) {
      issues.push({ path: `dspIds[${i}]`, message: `unknown DSP ${dspId}`, rule: 'known-ids' });
    }
  });
  d.buyerIds.forEach((buyerId, i) => {
    if (!lookup(reference?.buyers, buyerId) && reference?.complete && reference.buyers) {
      issues.push({ path: `buyerIds[${i}]`, message: `unknown buyer ${buyerId}`, rule: 'known-ids' });
    }
  });

  // At least one targeting criterion (docs/deal-rules.md#targeting-is-required).
  if (ok(...TARGETING_FIELDS) && !TARGETING_FIELDS.some((f) => isSet(f, d[f]))) {
    issues.push({
      path: '',
      message:
        'at least one targeting criterion is required, e.g. countryCodes, platformIds or audienceSegmentsTargeting',
      rule: 'targeting-required',
    });
  }
  // One geographic targeting type at a time; hyperlocal needs another one (docs/deal-rules.md#one-kind-of-geography).
  const geo = GEO_FIELDS.filter((f) => isSet(f, d[f]));
  if (geo.length > 1) {
    for (const f of geo.slice(1)) {
      issues.push({
        path: f,
        message: `only one geographic targeting type may be used at a time: ${geo.join(' and ')} are all set`,
        rule: 'one-geo-type',
      });
    }
  }
  if (ok(...GEO_FIELDS) && geo.length === 0) {
    if (d.hyperLocalTargeting) {
      issues.push({
        path: 'hyperLocalTargeting',
        message: 'needs another geographic targeting field as well, e.g. countryCodes',
        rule: 'hyperlocal-needs-geo',
      });
    }
    if (d.coordinates.length > 0) {
      issues.push({
        path: 'coordinates',
        message: 'needs another geographic targeting field as well, e.g. countryCodes',
        rule: 'hyperlocal-needs-geo',
      });
    }
  }
  // A player size needs one of its two dimensions.
  const size = d.videoPlayerSizeDimension;
  if (size && (size.minWidth ?? null) === null && (size.minHeight ?? null) === null) {
    issues.push({
      path: 'videoPlayerSizeDimension',
      message: 'needs minWidth or minHeight',
      rule: 'player-size-dimension',
    });
  }

  // Pricing shapes per model (docs/deal-rules.md#pricing-fields).
  if (ok('pricingModel', 'price', 'companyVendorCostRate', 'minCompanyVendorCost')) {
    const cvr = d.companyVendorCostRate ?? 0;
    const minCost = d.minCompanyVendorCost ?? 0;
    if (d.pricingModel === PricingModel.VariableFloor) {
      if (d.price > 0 && cvr > 0) {
        issues.push({
          path: 'companyVendorCostRate',
          message:
            'must be 0 for a variable floor deal with a floor price (price above 0); use price 0 to sell on the publisher floor with a margin rate',
          rule: 'pricing-model-costs',
        });
      } else if (d.price === 0 && !(cvr > 0)) {
        issues.push({
          path: 'companyVendorCostRate',
          message: 'must be above 0 for a variable floor deal on the publisher floor (price 0)',
          rule: 'pricing-model-costs',
        });
      }
      if (minCost > 0) {
        issues.push({
          path: 'minCompanyVendorCost',
          message: 'applies to fixed price and custom floor deals only; variable floor deals use companyVendorCostRate',
          rule: 'pricing-model-costs',
        });
      }
    } else {
      if (!(d.price > 0)) {
        const label = { 1: 'fixed price', 2: 'custom floor', 3: 'guaranteed price' }[d.pricingModel];
        issues.push({ path: 'price', message: `must be above 0 for a ${label} deal`, rule: 'pricing-model-costs' });
      }
      if (cvr > 0) {
        issues.push({
          path: 'companyVendorCostRate',
          message: 'applies to variable floor deals only; use minCompanyVendorCost',
          rule: 'pricing-model-costs',
        });
      }
    }
  }

  // Guaranteed price (docs/deal-rules.md#guaranteed-deals).
  if (ok('pricingModel') && d.pricingModel === PricingModel.GuaranteedPrice) {
    if (ok('buyerIds') && d.buyerIds.length !== 1) {
      issues.push({
        path: 'buyerIds',
        message: `a guaranteed-price deal needs exactly one buyer in buyerIds, got ${d.buyerIds.length}`,
        rule: 'guaranteed-deal',
      });
    }
    if (ok('buyerIds') && d.buyerIds.length === 1) {
      const buyer = lookup(reference?.buyers, d.buyerIds[0]);
      if (buyer && !buyer.isGuaranteedDealEligible) {
        issues.push({
          path: 'buyerIds[0]',
          message: `buyer ${d.buyerIds[0]} is not eligible for guaranteed deals`,
          rule: 'guaranteed-deal',
        });
      }
    }
    if (ok('impressionTypeIds')) {
      const allowed = 'Display (0), In-Stream (2) and Out-Stream (3)';
      if (d.impressionTypeIds.length === 0) {
        issues.push({
          path: 'impressionTypeIds',
          message: `a guaranteed-price deal must name its impression types: only ${allowed} are allowed`,
          rule: 'guaranteed-deal',
        });
      }
      d.impressionTypeIds.forEach((t, i) => {
        if (!GUARANTEED_IMPRESSION_TYPE_IDS.includes(t)) {
          issues.push({
            path: `impressionTypeIds[${i}]`,
            message: `impression type ${t} (${IMPRESSION_TYPES[t as keyof typeof IMPRESSION_TYPES]}) is not allowed in a guaranteed-price deal: only ${allowed} are`,
            rule: 'guaranteed-deal',
          });
        }
      });
    }
    if (ok('beginDate') && d.beginDate === null)
      issues.push({ path: 'beginDate', message: 'a guaranteed-price deal needs a beginDate', rule: 'guaranteed-deal' });
    if (ok('endDate') && d.endDate === null)
      issues.push({ path: 'endDate', message: 'a guaranteed-price deal needs an endDate', rule: 'guaranteed-deal' });
  }

  // End after begin.
  if (
    ok('beginDate', 'endDate') &&
    d.beginDate &&
    d.endDate &&
    parseDealDate(d.endDate) <= parseDealDate(d.beginDate)
  ) {
    issues.push({ path: 'endDate', message: 'must be after beginDate', rule: 'end-after-begin' });
  }

  if (mode === 'update' && stored) {
    // currency and pricingModel are immutable (docs/deal-rules.md#fields-that-cannot-change).
    if (ok('currency') && stored.currency !== undefined && d.currency !== stored.currency) {
      issues.push({
        path: 'currency',
        message: `cannot change after creation (the deal is in ${stored.currency})`,
        rule: 'immutable-after-creation',
      });
    }
    if (ok('pricingModel') && stored.pricingModel !== undefined && d.pricingModel !== stored.pricingModel) {
      issues.push({
        path: 'pricingModel',
        message: `cannot change after creation (the deal has pricingModel ${stored.pricingModel})`,
        rule: 'immutable-after-creation',
      });
    }
    // isDspSyncEnabled never returns to false; an omitted value keeps true, as it cannot reset.
    if (stored.isDspSyncEnabled === true && ok('isDspSyncEnabled')) {
      if (body.isDspSyncEnabled === false) {
        issues.push({
          path: 'isDspSyncEnabled',
          message: 'cannot be set back to false once enabled',
          rule: 'immutable-after-creation',
        });
      }
      d.isDspSyncEnabled = true;
    }
    // Guaranteed deal flight phases (docs/deal-rules.md#flight-phases-of-a-guaranteed-deal).
    if (
      stored.pricingModel === PricingModel.GuaranteedPrice &&
      stored.beginDate &&
      stored.endDate &&
      ok('beginDate', 'endDate')
    ) {
      const begin = parseDealDate(stored.beginDate);
      const end = parseDealDate(stored.endDate);
      const newBegin = d.beginDate === null ? NaN : parseDealDate(d.beginDate);
      const newEnd = d.endDate === null ? NaN : parseDealDate(d.endDate);
      if (now >= begin && now <= end) {
        if (newBegin !== begin)
          issues.push({
            path: 'beginDate',
            message: `cannot change while the guaranteed deal is in flight (it began ${stored.beginDate})`,
            rule: 'guaranteed-flight',
          });
        if (!(newEnd >= end))
          issues.push({
            path: 'endDate',
            message: `can only be extended while the guaranteed deal is in flight (it ends ${stored.endDate})`,
            rule: 'guaranteed-flight',
          });
      } else if (now > end) {
        if (newBegin !== begin)
          issues.push({
            path: 'beginDate',
            message: `cannot change after the guaranteed deal has ended (${stored.endDate})`,
            rule: 'guaranteed-flight',
          });
        if (newEnd !== end)
          issues.push({
            path: 'endDate',
            message: `cannot change after the guaranteed deal has ended (${stored.endDate})`,
            rule: 'guaranteed-flight',
          });
      }
    }
  }

  // Budgets (delivery capping by budgetIds / allocations) need both dates
  // (docs/deal-rules.md#capping-and-budget-rules).
  const budget =
    d.budgetIds.length > 0 || d.publisherId !== null || d.shareAllocation !== null || d.adjustedTarget !== null;
  if (budget && ok('beginDate', 'endDate')) {
    for (const f of ['beginDate', 'endDate'] as const) {
      if (d[f] === null)
        issues.push({
          path: f,
          message: 'is required when a budget (budgetIds) is configured',
          rule: 'budget-needs-dates',
        });
    }
  }

  // Frequency capping needs a capable identity provider, otherwise it is ignored
  // (docs/deal-rules.md#capping-and-budget-rules).
  if (ok('timeFrameId', 'impressions', 'identityProviderId')) {
    const tf = d.timeFrameId;
    const imp = d.impressions;
    if ((tf === null) !== (imp === null)) {
      issues.push({
        path: tf === null ? 'timeFrameId' : 'impressions',
        message: 'frequency capping needs both timeFrameId and impressions',
        rule: 'frequency-capping-pair',
      });
    }
    const idp = d.identityProviderId === null ? undefined : lookup(reference?.identityProviders, d.identityProviderId);
    if (d.identityProviderId !== null && !idp && reference?.complete && reference.identityProviders) {
      issues.push({
        path: 'identityProviderId',
        message: `unknown identity provider ${d.identityProviderId}`,
        rule: 'known-ids',
      });
    } else if (tf !== null && imp !== null) {
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
  }

  if (issues.length > 0) return { ok: false, issues, warnings };
  return { ok: true, value: d, issues, warnings };
}
