/**
 * The enumerations of the deal API, as id → name tables and zod schemas.
 * See docs/deal-rules.md#enumerations.
 */
import { z } from 'zod';

/** Deal types (`typeId`, read-only): 1 PrivateAuction, 2 DirectDeal, 3 GuaranteedDeal. */
export const DEAL_TYPES = { 1: 'PrivateAuction', 2: 'DirectDeal', 3: 'GuaranteedDeal' } as const;
/** Deal priorities (`priorityId`, read-only): 1 Low, 2 Medium, 3 High. */
export const PRIORITIES = { 1: 'Low', 2: 'Medium', 3: 'High' } as const;
/** Deal criticalities (`dealCriticalityId`, read-only): 1 Standard, 2 High. */
export const DEAL_CRITICALITIES = { 1: 'Standard', 2: 'High' } as const;
/** Impression types (`impressionTypeIds`). */
export const IMPRESSION_TYPES = {
  0: 'Display',
  1: 'Native',
  2: 'In-Stream',
  3: 'Out-Stream',
  4: 'Audio',
  5: 'Unknown',
} as const;
/** Platforms (`platformIds`). */
export const PLATFORMS = {
  1: 'Desktop',
  2: 'Tablet',
  3: 'Smartphone',
  4: 'TV',
  5: 'SetTopBox',
  6: 'GameConsole',
} as const;
/** Pricing models (`pricingModel`): 0 variable floor, 1 fixed price, 2 custom floor, 3 guaranteed price. */
export const PRICING_MODELS = {
  0: 'Variable floor',
  1: 'Fixed price',
  2: 'Custom floor',
  3: 'Guaranteed price',
} as const;

/** Named pricing model ids, for readable code: `PricingModel.GuaranteedPrice === 3`. */
export const PricingModel = { VariableFloor: 0, FixedPrice: 1, CustomFloor: 2, GuaranteedPrice: 3 } as const;
/** Named deal type ids. */
export const DealType = { PrivateAuction: 1, DirectDeal: 2, GuaranteedDeal: 3 } as const;
/** Named impression type ids. */
export const ImpressionType = { Display: 0, Native: 1, InStream: 2, OutStream: 3, Audio: 4, Unknown: 5 } as const;

/** What a guaranteed deal may target (docs/deal-rules.md#guaranteed-deals): Display, In-Stream, Out-Stream. */
export const GUARANTEED_IMPRESSION_TYPE_IDS: readonly number[] = [
  ImpressionType.Display,
  ImpressionType.InStream,
  ImpressionType.OutStream,
];

/** Delivery pacing modes (`pacingMode`). */
export const PACING_MODES = ['Even', 'Asap'] as const;

function idsOf(table: Record<number, string>): [number, ...number[]] {
  return Object.keys(table).map(Number) as [number, ...number[]];
}

/** Schema of a deal type id. */
export const DealTypeIdSchema = z.literal(idsOf(DEAL_TYPES));
/** Schema of a priority id. */
export const PriorityIdSchema = z.literal(idsOf(PRIORITIES));
/** Schema of a deal criticality id. */
export const DealCriticalityIdSchema = z.literal(idsOf(DEAL_CRITICALITIES));
/** Schema of an impression type id. */
export const ImpressionTypeIdSchema = z.literal(idsOf(IMPRESSION_TYPES));
/** Schema of a platform id. */
export const PlatformIdSchema = z.literal(idsOf(PLATFORMS));
/** Schema of a pricing model id. */
export const PricingModelSchema = z.literal(idsOf(PRICING_MODELS));
/** Schema of a pacing mode. */
export const PacingModeSchema = z.enum(PACING_MODES);

/** A pricing model id: 0 variable floor, 1 fixed price, 2 custom floor, 3 guaranteed price. */
export type PricingModelId = 0 | 1 | 2 | 3;
/** A deal type id: 1 PrivateAuction, 2 DirectDeal, 3 GuaranteedDeal. */
export type DealTypeId = 1 | 2 | 3;
