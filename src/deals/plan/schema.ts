/**
 * The deals file (`eidkit deals plan|apply -f deals.yaml`) as zod schemas, and its JSON Schema for editors
 * (`eidkit deals schema > deals.schema.json`). Deal fields are the write fields (`dealWriteFields`); the
 * cross-field rules are checked by validateDeal when the file is planned.
 */
import { z } from 'zod';
import { DEAL_WRITE_FIELDS, dealWriteFields } from '../rules/index.js';

/** A deal key: 1–100 letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
export const DealKeySchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/)
  .describe(
    'Your stable name for this deal: 1-100 letters, digits, ".", "_" or "-". Stored in callerDealIds as "eidkit:<key>"; never rename it, or apply creates a new deal.',
  );

/** The deal write fields, each optional (a deal may take any of them from `defaults`). */
const optionalDealFields = Object.fromEntries(
  Object.entries(dealWriteFields).map(([name, schema]) => [name, (schema as z.ZodType).optional()]),
) as { [K in keyof typeof dealWriteFields]: z.ZodOptional<(typeof dealWriteFields)[K]> };

/** Names of fields whose live values apply leaves alone once the deal exists. */
export const UnmanagedFieldsSchema = z
  .array(z.enum(DEAL_WRITE_FIELDS as [string, ...string[]]))
  .describe(
    'Fields set only when the deal is created (if given), then left as they are live: changes made elsewhere are kept.',
  );

/** Shared field values, laid under every deal of the file. */
export const DealDefaultsSchema = z
  .strictObject(optionalDealFields)
  .describe('Field values every deal takes unless it sets them itself.');

/** One desired deal: its key, optionally its own unmanaged fields, and the deal write fields. */
export const DealEntrySchema = z.strictObject({
  key: DealKeySchema,
  unmanaged: UnmanagedFieldsSchema.optional(),
  ...optionalDealFields,
});

/** The whole deals file. */
export const DealsFileSchema = z
  .strictObject({
    $schema: z.string().optional().describe('Path or URL of this JSON Schema, for editors.'),
    namespace: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/)
      .optional()
      .describe(
        'Keys this file\'s deals as "<namespace>/<key>": plan and apply see only the deals of this namespace, so several files and scripts share one account.',
      ),
    defaults: DealDefaultsSchema.optional(),
    unmanaged: UnmanagedFieldsSchema.optional(),
    deals: z
      .array(DealEntrySchema)
      .describe(
        'The deals that should exist; every field a deal leaves out (and its defaults do not set) is reset to its default.',
      ),
  })
  .describe('eidkit deals file: the deals that should exist on the deal API (eidkit deals plan / apply).');

/** A deals file as written. */
export type DealsFileInput = z.input<typeof DealsFileSchema>;
/** One deal entry as written. */
export type DealEntryInput = z.input<typeof DealEntrySchema>;

/** The JSON Schema (draft 2020-12) of the deals file, for editors and CI checks. */
export function dealsFileJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(DealsFileSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return { ...schema, title: 'eidkit deals file' };
}
