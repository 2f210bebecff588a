/**
 * The read view of a stored deal: the cross-platform deal id, the computed type and states (archived,
 * parent, expiration) and the defaulted read-only fields the API returns beside the write fields.
 */
import { PricingModel, parseDealDate, type DealRead } from '../deals/rules/index.js';
import type { ReferenceData } from './reference.js';
import type { StoredDeal } from './store.js';

const DAY_MS = 86_400_000;
/** How close an expiration must be for a deal to count as expiring soon. */
export const SOON_MS = 7 * DAY_MS;
/** Deals whose end passed this long ago are returned as archived. */
const ARCHIVE_AFTER_MS = 30 * DAY_MS;

/** A cross-platform deal id, distinct from the numeric id. */
export function makeDealId(companyId: number, id: number): string {
  const mix = ((id * 2_654_435_761) ^ (companyId * 40_503)) >>> 0;
  return `EDK-${companyId.toString(36).toUpperCase()}-${mix.toString(36).toUpperCase().padStart(7, '0')}`;
}

/** The deal type a stored deal reads as: guaranteed, direct (fixed price, one buyer) or private auction. */
export function dealTypeId(w: StoredDeal['write']): 1 | 2 | 3 {
  return w.pricingModel === PricingModel.GuaranteedPrice
    ? 3
    : w.pricingModel === PricingModel.FixedPrice && w.buyerIds.length === 1
      ? 2
      : 1;
}

/** The computed states list filters need, without building the whole read view. */
export function dealFacts(
  d: StoredDeal,
  now: number,
): { expiration: number | null; isArchived: boolean; isParentDeal: boolean } {
  const w = d.write;
  const end = w.endDate ? parseDealDate(w.endDate) : null;
  const expiration = w.expirationDate ? parseDealDate(w.expirationDate) : end;
  return {
    expiration,
    isArchived: end !== null && end < now - ARCHIVE_AFTER_MS,
    isParentDeal: w.childrenDealIds.length > 0,
  };
}

/** The read shape of a stored deal at time `now`: write fields plus computed read-only fields. */
export function toRead(d: StoredDeal, ref: ReferenceData, now: number): DealRead {
  const w = d.write;
  const { expiration, isArchived, isParentDeal } = dealFacts(d, now);
  const typeId = dealTypeId(w);
  const segmentCost = (expr: string, table: ReferenceData['audienceSegments']) => {
    const ids = expr
      .split(/[;,]/)
      .map((t) => Number(t.replace(/^\s*NOT\s+/i, '').trim()))
      .filter(Number.isInteger);
    return Math.max(0, ...ids.map((id) => table.find((s) => s.id === id)?.cpm ?? 0));
  };
  return {
    id: d.id,
    dealId: d.dealId,
    ...w,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
    expirationDateUtc: expiration === null ? null : new Date(expiration).toISOString(),
    isDisabledByRegulator: false,
    isParentDeal,
    isArchived,
    isEditable: !isArchived,
    isExclusive: w.buyerIds.length === 1 || w.dspIds.length === 1,
    isDealPlus: false,
    typeId,
    priorityId: typeId === 3 ? 3 : typeId === 2 ? 2 : 1,
    dealCriticalityId: typeId === 3 ? 2 : 1,
    throttlingRate: 0,
    customVendorCost: w.minCompanyVendorCost ?? 0,
    keywordTargeting: '',
    keywordIdsTargeting: '',
    semanticSegmentsDataCost: segmentCost(w.semanticSegmentsTargeting, ref.semanticSegments),
    audienceSegmentsDataCost: segmentCost(w.audienceSegmentsTargeting, ref.audienceSegments),
    viewabilityDataCost: w.viewabilityTargetingPercentage === null ? 0 : 0.05,
    videoCompletionDataCost: w.videoCompletionTargetingPercentage === null ? 0 : 0.05,
  };
}
