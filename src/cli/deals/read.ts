/**
 * The reading commands on the deal API: `deals list`, `deals get`, `deals count` and `lookups <resource>`. Each is a
 * handler that src/cli/deals.ts registers with its options; rows go to stdout through ../deals-io.ts.
 */
import { InvalidArgumentError } from 'commander';
import { out, outJson, outText } from '../output.js';
import { closestName } from '../suggest.js';
import { formatTable } from '../format.js';
import { csvRow } from '../../core/csv.js';
import { LOOKUP_RESOURCES, type DealListFilters } from '../../deals/index.js';
import {
  columnsOf,
  printRecord,
  printRows,
  progressReporter,
  type ListingFlags,
  type OutputFlags,
} from '../deals-io.js';
import { withSession, type ConnectionFlags } from '../deals-session.js';

/** Default columns of `deals list`. */
const DEAL_COLUMNS = ['id', 'dealId', 'name', 'isActive', 'pricingModel', 'price', 'currency', 'beginDate', 'endDate'];
/** Default columns of `lookups`. */
const LOOKUP_COLUMNS = ['id', 'name', 'isArchived'];
/** The columns of `deals count`. */
const COUNT_COLUMNS = ['status', 'count'];

/** The options of a reading command, as commander hands them over (after each option's own parser). */
type ReadFlags = ConnectionFlags & OutputFlags;

/** The options of `deals list`. */
export type DealListFlags = ReadFlags &
  ListingFlags & {
    archived?: boolean;
    soonExpired?: boolean;
    parent?: boolean;
    since?: string;
    sortBy?: string;
    asc?: boolean;
    desc?: boolean;
    buyerIds?: number[];
    dspIds?: number[];
    platformIds?: number[];
    formatIds?: number[];
    limit?: number;
    offset?: number;
    concurrency?: number;
    progress?: boolean;
  };

/** The options of `lookups`. */
export type LookupFlags = ReadFlags & ListingFlags & { ids?: string; search?: string; limit?: number; offset?: number };

/** `deals list`: every page of deals matching the filters, as a table, CSV or JSON. */
export async function listDeals(flags: DealListFlags): Promise<void> {
  await withSession(flags, async (client) => {
    const filters: DealListFilters = {
      isArchived: flags.archived,
      isSoonExpired: flags.soonExpired,
      isParentDeal: flags.parent,
      createdOrModifiedSince: flags.since,
      sortBy: flags.sortBy,
      sortAsc: flags.asc ? true : flags.desc ? false : undefined,
      buyerIds: flags.buyerIds,
      dspIds: flags.dspIds,
      platformIds: flags.platformIds,
      formatIds: flags.formatIds,
      offset: flags.offset,
    };
    const list = client.deals.list({
      ...filters,
      concurrency: flags.concurrency,
      limit: flags.limit,
      maxItems: flags.maxItems,
      maxPages: flags.maxPages,
      onProgress: progressReporter('deals', flags.progress),
    });
    await printRows(
      list as AsyncIterable<unknown> as AsyncIterable<Record<string, unknown>>,
      flags,
      DEAL_COLUMNS,
      'deals',
    );
  });
}

/** `deals get <id>`: one deal. */
export async function getDeal(id: string, flags: ReadFlags): Promise<void> {
  await withSession(flags, async (client) => {
    const deal = (await client.deals.get(id)) as unknown as Record<string, unknown>;
    await printRecord(deal, flags);
  });
}

/** `deals count`: the count breakdown, nested counts as dotted status rows. */
export async function countDeals(flags: ReadFlags): Promise<void> {
  await withSession(flags, async (client) => {
    const columns = columnsOf(flags, COUNT_COLUMNS) ?? COUNT_COLUMNS;
    const counts = await client.deals.countBreakdown();
    if (flags.json) return outJson(counts);
    const rows = flatten(counts).map(([status, count]) => ({ status, count }));
    await (flags.csv
      ? out(csvRow(columns) + rows.map((r) => csvRow(columns.map((c) => r[c as keyof typeof r]))).join(''))
      : outText(formatTable(rows, columns)));
  });
}

/** `lookups <resource>`: every page of one reference resource. */
export async function listLookups(resource: string, flags: LookupFlags): Promise<void> {
  await withSession(flags, async (client) => {
    const ids = flags.ids
      ? String(flags.ids)
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : undefined;
    const list = client.lookups.list<Record<string, unknown>>(resource, {
      ids,
      search: flags.search,
      limit: flags.limit,
      offset: flags.offset,
      maxItems: flags.maxItems,
      maxPages: flags.maxPages,
    });
    await printRows(list, flags, LOOKUP_COLUMNS, resource);
  });
}

/** The `lookups` resource argument: a known name (any case), else a usage error suggesting the closest one. */
export function lookupResource(value: string): string {
  const known = LOOKUP_RESOURCES.find((r) => r.toLowerCase() === value.toLowerCase());
  if (known) return known;
  const hint = closestName(value, LOOKUP_RESOURCES);
  throw new InvalidArgumentError(
    `no lookup resource ${JSON.stringify(value)}; ${hint ? `did you mean ${hint}?` : `known: ${LOOKUP_RESOURCES.join(', ')}`}`,
  );
}

/** Nested counts as dotted rows: `{ byType: { DirectDeal: 2 } }` → `byType.DirectDeal 2`. */
function flatten(value: Record<string, unknown>, prefix = ''): [string, unknown][] {
  return Object.entries(value).flatMap(([k, v]) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? flatten(v as Record<string, unknown>, `${prefix}${k}.`)
      : [[`${prefix}${k}`, v] as [string, unknown]],
  );
}
