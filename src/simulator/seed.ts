/** Seeded deals and a small deterministic PRNG (for fault injection and generated data). */
import { dealWriteDefaults, type CompleteDealWrite } from '../deals/rules/index.js';
import type { ReferenceData } from './reference.js';

/** mulberry32: a tiny seeded PRNG returning floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const THEMES = [
  'Premium news',
  'Sports fans',
  'Cooking',
  'Travel',
  'Finance',
  'Auto intenders',
  'Gaming',
  'Family',
  'Luxury',
  'Tech',
];
const FORMATS = ['display', 'video', 'CTV', 'mobile app', 'outstream'];

/** Generates `count` valid, varied deal bodies (every write field present), deterministic for a seed. */
export function generateDeals(count: number, ref: ReferenceData, now: number, seed = 1): CompleteDealWrite[] {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)];
  const countries = ['FR', 'DE', 'GB', 'ES', 'IT', 'US', 'CA', 'BE', 'NL', 'CH'];
  const dsps = ref.dsps.filter((d) => !d.isMultiBuyerDealForbidden);
  const eligible = ref.buyers.filter((b) => b.isGuaranteedDealEligible);
  const out: CompleteDealWrite[] = [];
  for (let i = 0; i < count; i++) {
    const model = pick([0, 0, 1, 1, 2, 3] as const);
    const geo = pick(countries);
    const begin = now + Math.round((rnd() - 0.6) * 120) * 86_400_000;
    const end = begin + (7 + Math.floor(rnd() * 90)) * 86_400_000;
    const dated = model === 3 || rnd() < 0.7;
    const byDsp = model !== 3 && rnd() < 0.3;
    const price = Math.round((0.5 + rnd() * 14) * 100) / 100;
    const deal: CompleteDealWrite = {
      ...dealWriteDefaults(),
      name: `${pick(THEMES)} ${geo} ${pick(FORMATS)} #${i + 1}`,
      isActive: rnd() < 0.8,
      beginDate: dated ? new Date(begin).toISOString() : null,
      endDate: dated ? new Date(end).toISOString() : null,
      currency: geo === 'US' || geo === 'CA' ? 'USD' : geo === 'GB' ? 'GBP' : geo === 'CH' ? 'CHF' : 'EUR',
      pricingModel: model,
      price: model === 0 && rnd() < 0.4 ? 0 : price,
      buyerIds: byDsp ? [] : model === 3 ? [pick(eligible).id] : [pick(ref.buyers).id],
      dspIds: byDsp ? [pick(dsps).id] : [],
      countryCodes: [geo],
      platformIds: rnd() < 0.5 ? [1, 2, 3] : [],
      impressionTypeIds: model === 3 ? [0] : rnd() < 0.5 ? [0, 2] : [],
    };
    if (model === 0) {
      deal.companyVendorCostRate = deal.price === 0 ? 0.15 : 0;
    } else {
      deal.minCompanyVendorCost = Math.round(rnd() * 100) / 100;
    }
    if (rnd() < 0.2) deal.viewabilityTargetingPercentage = 50 + Math.floor(rnd() * 30);
    out.push(deal);
  }
  return out;
}
