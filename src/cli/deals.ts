/**
 * `eidkit` commands on the deal API (src/deals), registered on the program by ./index.ts:
 * `deals list|get|create|update|pause|resume|delete|count`, `deals domainlist attach|detach`, `lookups <resource>`,
 * `login` (and `deals plan|apply|schema` from ./deals-plan.ts). Each is a row of {@link DEAL_COMMANDS}; the handlers
 * live in ./deals/ by what they do. Data goes to stdout, messages to stderr (./output.ts); exit codes are documented in
 * docs/deals.md ("CLI exit codes").
 */
import type { Command } from 'commander';
import { LOOKUP_RESOURCES } from '../deals/index.js';
import { idList, intArg, isoDateArg, listingOptions, outputOptions } from './deals-io.js';
import { connectionOptions } from './deals-session.js';
import { registerPlanCommands } from './deals-plan.js';
import {
  dealInputOptions,
  option,
  registerCommands,
  writeOptions,
  type CommandDef,
  type GroupDef,
} from './deals/table.js';
import { countDeals, getDeal, listDeals, listLookups, lookupResource } from './deals/read.js';
import {
  attachDomainList,
  createDeal,
  deleteDeal,
  detachDomainList,
  pauseDeal,
  resumeDeal,
  updateDeal,
} from './deals/write.js';
import { login } from './deals/login.js';

const ID = { name: '<id>', description: 'the service-side deal id' };
const DOMAIN_LIST_ID = {
  name: '<domainListId>',
  description: 'the domain list id',
  parse: intArg('<domainListId>', 1),
};

/** The deal commands, in the order their groups' help lists them. */
const DEAL_COMMANDS: readonly (CommandDef | GroupDef)[] = [
  { path: ['deals'], summary: 'manage deals on the deal API (docs/deals.md)', then: registerPlanCommands },
  {
    path: ['deals', 'list'],
    summary: 'list deals across every page',
    examples: [
      'eidkit deals list --simulator',
      'eidkit deals list --no-archived --sort-by name --asc --csv > deals.csv',
      "eidkit deals list --since 2025-01-01 --json | jq '.[].name'",
    ],
    groups: [connectionOptions, outputOptions, listingOptions],
    options: [
      option('--archived', 'only archived deals'),
      option('--no-archived', 'only deals that are not archived'),
      option('--soon-expired', 'only deals expiring soon'),
      option('--parent', 'only parent deals'),
      option(
        '--since <datetime>',
        'created or modified after (ISO 8601 date or date-time, UTC)',
        isoDateArg('--since'),
      ),
      option('--sort-by <field>', 'sort field'),
      option('--asc', 'ascending').conflicts('desc'),
      option('--desc', 'descending'),
      option('--buyer-ids <ids>', 'comma-separated buyer ids', idList('--buyer-ids')),
      option('--dsp-ids <ids>', 'comma-separated DSP ids', idList('--dsp-ids')),
      option('--platform-ids <ids>', 'comma-separated platform ids', idList('--platform-ids')),
      option('--format-ids <ids>', 'comma-separated format ids', idList('--format-ids')),
      option('--limit <n>', 'at most this many deals', intArg('--limit')),
      option('--offset <n>', 'skip this many deals', intArg('--offset')),
      option(
        '--concurrency <n>',
        'pages fetched at once (1 follows Link one page at a time)',
        intArg('--concurrency', 1),
      ),
      option('--progress', 'report progress on stderr even when it is not a terminal'),
      option('--no-progress', 'never report progress'),
    ],
    handler: listDeals,
  },
  {
    path: ['deals', 'get'],
    summary: 'show one deal',
    examples: ['eidkit deals get 100001 --simulator', 'eidkit deals get 100001 --columns id,name,price --csv'],
    arguments: [ID],
    groups: [connectionOptions, outputOptions],
    handler: getDeal,
  },
  {
    path: ['deals', 'create'],
    summary: 'create a deal (validated first; never retried once it may have reached the service)',
    examples: [
      'eidkit deals create --file deal.json',
      'eidkit deals create --simulator --copy-of 100001 --data \'{"name":"Copy of spring"}\'',
      'eidkit deals create --file deal.json --dry-run',
    ],
    groups: [writeOptions, dealInputOptions],
    options: [
      option(
        '--copy-of <id>',
        'create a copy of this deal (X-CopyOfDealId); --data/--file/--set then only change fields of the copy',
      ),
    ],
    handler: createDeal,
  },
  {
    path: ['deals', 'update'],
    summary: 'change some fields of a deal: read, merge, validate, PUT (omitted fields keep their values)',
    examples: [
      'eidkit deals update 100001 --simulator --set name="Spring sale" --set price=3',
      'eidkit deals update 100001 --file patch.json --dry-run',
    ],
    arguments: [ID],
    groups: [writeOptions, dealInputOptions],
    handler: updateDeal,
  },
  {
    path: ['deals', 'pause'],
    summary: 'pause a deal (isActive false)',
    examples: ['eidkit deals pause 100001 --simulator', 'eidkit deals pause 100001 --json'],
    arguments: [ID],
    groups: [writeOptions],
    handler: pauseDeal,
  },
  {
    path: ['deals', 'resume'],
    summary: 'resume a deal (isActive true)',
    examples: ['eidkit deals resume 100001 --simulator', 'eidkit deals resume 100001 --json'],
    arguments: [ID],
    groups: [writeOptions],
    handler: resumeDeal,
  },
  {
    path: ['deals', 'delete'],
    summary: 'delete a deal (asks first on a terminal; without a terminal, refuses unless --yes)',
    examples: [
      'eidkit deals delete 100001 --simulator',
      'eidkit deals delete 100001 --yes   # no question, e.g. in a script',
    ],
    arguments: [ID],
    groups: [writeOptions],
    options: [option('-y, --yes', 'do not ask for confirmation (required when stdin is not a terminal)')],
    handler: deleteDeal,
  },
  {
    path: ['deals', 'count'],
    summary: 'count deals by status (countBreakdown)',
    examples: ['eidkit deals count --simulator', 'eidkit deals count --json'],
    groups: [connectionOptions, outputOptions],
    handler: countDeals,
  },
  { path: ['deals', 'domainlist'], summary: 'attach a domain list to a deal, or detach it' },
  {
    path: ['deals', 'domainlist', 'attach'],
    summary: 'attach a domain list to a deal (refused to DSP callers)',
    examples: ['eidkit deals domainlist attach 100001 2 --simulator'],
    arguments: [ID, DOMAIN_LIST_ID],
    groups: [writeOptions],
    handler: attachDomainList,
  },
  {
    path: ['deals', 'domainlist', 'detach'],
    summary: 'detach a domain list from a deal (refused to DSP callers)',
    examples: ['eidkit deals domainlist detach 100001 2 --simulator'],
    arguments: [ID, DOMAIN_LIST_ID],
    groups: [writeOptions],
    handler: detachDomainList,
  },
  {
    path: ['lookups'],
    summary: `list reference items: ${LOOKUP_RESOURCES.join(', ')}`,
    examples: ['eidkit lookups dsps --simulator --search amazon', 'eidkit lookups countries --csv > countries.csv'],
    arguments: [{ name: '<resource>', description: 'lookup resource (case-insensitive)', parse: lookupResource }],
    groups: [connectionOptions, outputOptions, listingOptions],
    options: [
      option('--ids <ids>', 'only these comma-separated ids'),
      option('--search <text>', 'search in the names (extendedSearch)'),
      option('--limit <n>', 'at most this many items', intArg('--limit')),
      option('--offset <n>', 'skip this many items', intArg('--offset')),
    ],
    handler: listLookups,
  },
  {
    path: ['login'],
    summary: 'obtain a user token and cache it in a file only you can read',
    examples: [
      'eidkit login   # with EIDKIT_BASE_URL, EIDKIT_AUTH_URL, EIDKIT_AUDIENCE and the credentials set',
      'eidkit deals list   # later: reuses the cached token',
    ],
    groups: [connectionOptions],
    handler: login,
  },
];

/** Adds `deals …`, `lookups` and `login` to the program. */
export function registerDealsCommands(program: Command): void {
  registerCommands(program, DEAL_COMMANDS);
}
