/** `eidkit decode`: the eids of an ad call, read with src/adserver's parser; registered by ./index.ts. */
import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { decodeBase64Json, validateEids } from '../core/index.js';
import { fileErrorText } from '../core/file-error.js';
import type { Eid, Issue } from '../core/index.js';
import { EXIT } from './exit-codes.js';
import { examples, outJson, outText } from './output.js';
import { fieldText } from './format.js';
import { DEFAULT_LIMITS, parseAdCall, providerHits, type AdCall } from '../adserver/index.js';
import { isOrtbBody } from '../adserver/parse/index.js';
import { formatForwarding, forwardingOf, readPartnersFile } from './decode-partners.js';
import type { DecodedForwarding } from './decode-partners.js';

/** What `eidkit decode --json` prints. */
export interface DecodeOutput {
  /** How the input was read. */
  input: 'url' | 'body' | 'base64' | 'json';
  /** True when the eids payload could be read (exit code 0). */
  decoded: boolean;
  /** The ad call's other fields, for URL and POST body input. */
  call?: Omit<AdCall, 'eids' | 'issues'>;
  /** The valid eids, each with its provider (and its provenance fields and ext, when present). */
  eids: ({ source: string; providerId: number; providerName: string } & Omit<Eid, 'source'>)[];
  /** Every issue found. */
  issues: Issue[];
  /** With `--partners`: what each partner would receive, and why. */
  forwarding?: DecodedForwarding[];
}

/** An error carrying the exit code the CLI's top level uses. */
class DecodeError extends Error {
  readonly exitCode = EXIT.VALIDATION;
  override readonly name = 'DecodeError';
}

/** A --post-body file's text; one that cannot be read is named in words (`no such file`), exit 3. */
function readBody(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new DecodeError(`cannot read ${path}: ${fileErrorText(e)}`);
  }
}

const isUrlLike = (s: string) => /^(https?:\/\/|\/)/i.test(s);

/**
 * Why an ad-call URL has no `eids` payload (first occurrence, as the parser reads it), or undefined when it has one.
 * Never throws.
 */
function urlWithoutEids(url: string): string | undefined {
  const noHash = url.split('#')[0];
  const q = noHash.indexOf('?');
  const value = q >= 0 ? new URLSearchParams(noHash.slice(q + 1)).get('eids') : null;
  return value === null
    ? 'the URL has no eids parameter'
    : value.trim() === ''
      ? 'the eids parameter is empty'
      : undefined;
}

/**
 * Whether a POST body's JSON holds eids in any place the parser reads (`eids`, OpenRTB `user.eids`,
 * `user.ext.eids`), and the endpoint it was posted to: the Prebid adapter's (`units`), an OpenRTB request's, else
 * the tag's `/genericpost`. No eids for text that is not JSON.
 */
function bodyShape(body: string): { hasEids: boolean; path: string } {
  try {
    const b = JSON.parse(body) as {
      eids?: unknown;
      units?: unknown;
      user?: { eids?: unknown; ext?: { eids?: unknown } };
    } | null;
    const eids = b?.eids ?? b?.user?.eids ?? b?.user?.ext?.eids;
    const path = Array.isArray(b?.units)
      ? '/prebid/v1'
      : b && typeof b === 'object' && isOrtbBody(b)
        ? '/openrtb2/auction'
        : '/genericpost';
    return { hasEids: eids !== undefined && eids !== null && eids !== '', path };
  } catch {
    return { hasEids: false, path: '/genericpost' };
  }
}

/**
 * Decodes an ad-call URL (its `eids` parameter), a POST ad-call body (JSON object with `eids`), a Base64 eids
 * string, or a JSON eids array.
 * `decoded` is false when there is no readable eids payload.
 */
export function decodeInput(text: string): DecodeOutput {
  const input = text.trim();
  let eids: Eid[];
  let issues: Issue[];
  let decoded: boolean;
  let call: DecodeOutput['call'];
  let kind: DecodeOutput['input'];
  if (isUrlLike(input) || input.startsWith('{')) {
    kind = input.startsWith('{') ? 'body' : 'url';
    const shape = kind === 'body' ? bodyShape(input) : undefined;
    const parsed = !shape
      ? parseAdCall({ url: input, method: 'GET' })
      : parseAdCall({ url: shape.path, method: 'POST', body: input });
    ({ eids, issues } = parsed);
    const { eids: _e, issues: _i, ...rest } = parsed;
    call = rest;
    const missing = !shape ? urlWithoutEids(input) : shape.hasEids ? undefined : 'the body has no eids field';
    const hasEids = missing === undefined;
    // A body that is not JSON already has its issue; "no eids field" would only add noise.
    if (missing && !issues.some((i) => i.path === 'body')) issues = [...issues, { path: 'eids', message: missing }];
    // Issues at `eids` itself (not `eids[2]…`) mean the whole payload was dropped, except a count cap that kept some,
    // and a second place of eids left aside because another one wins (an OpenRTB 2.6 body with user.ext.eids too).
    const unreadable = issues.some(
      (i) =>
        i.path === 'body' ||
        (/^(user\.(ext\.)?)?eids$/.test(i.path) && !/^(more than \d+ eids|ignored: )/.test(i.message)),
    );
    decoded = hasEids && !unreadable;
  } else {
    kind = input.startsWith('[') ? 'json' : 'base64';
    let value: unknown;
    if (kind === 'json') {
      try {
        value = JSON.parse(input);
        issues = [];
      } catch {
        issues = [{ path: 'eids', message: 'not valid JSON' }];
      }
    } else if (input.length > DEFAULT_LIMITS.maxEidsParamLength) {
      issues = [{ path: 'eids', message: `longer than ${DEFAULT_LIMITS.maxEidsParamLength} characters` }];
    } else ({ value, issues } = decodeBase64Json(input));
    decoded = issues.length === 0 && Array.isArray(value);
    const v = issues.length === 0 ? validateEids(value, DEFAULT_LIMITS) : { value: [], issues: [] };
    eids = v.value;
    issues = [...issues, ...v.issues];
  }
  return {
    input: kind,
    decoded,
    ...(call ? { call } : {}),
    eids: providerHits(eids).map((h, i) => ({
      ...eids[i],
      source: h.source,
      providerId: h.provider.id,
      providerName: h.provider.name,
    })),
    issues,
  };
}

/** The human-readable form of a decode result; every field from the input is terminal-safe ({@link fieldText}). */
export function formatDecodeOutput(out: DecodeOutput): string {
  const lines: string[] = [];
  if (out.call) {
    const c = out.call;
    const fields = [
      ['endpoint', c.endpoint],
      ['network', c.networkId],
      ['site', c.siteId],
      ['page', c.pageId],
      // "format ids": an OpenRTB imp without a format id reads as id 0, which must not look like a count.
      ['format ids', c.formats.map((f) => f.id).join(', ') || undefined],
      ['uid', c.uid],
    ].filter(([, v]) => v !== undefined);
    lines.push(fields.map(([k, v]) => `${k}: ${fieldText(v)}`).join('  '));
  }
  lines.push(`${out.eids.length} eid${out.eids.length === 1 ? '' : 's'}`);
  const sources = out.eids.map((e) => fieldText(e.source));
  const width = Math.max(6, ...sources.map((s) => s.length));
  out.eids.forEach((e, n) => {
    const provenance = (['inserter', 'matcher', 'mm'] as const)
      .filter((k) => e[k] !== undefined)
      .map((k) => `${k} ${fieldText(e[k])}`);
    lines.push(
      `  ${sources[n].padEnd(width)}  ${String(e.providerId).padStart(2)}  ${fieldText(e.providerName)}${provenance.length ? `  (${provenance.join(', ')})` : ''}`,
    );
    for (const u of e.uids)
      lines.push(
        `      ${fieldText(u.id)}${u.atype !== undefined ? `  atype ${fieldText(u.atype)}` : ''}${u.ext ? `  ext ${fieldText(u.ext)}` : ''}`,
      );
  });
  lines.push(`${out.issues.length} issue${out.issues.length === 1 ? '' : 's'}`);
  for (const i of out.issues) lines.push(`  ${fieldText(i.path)}: ${fieldText(i.message)}`);
  return lines.join('\n') + '\n' + (out.forwarding ? formatForwarding(out.forwarding) : '');
}

/** Adds this part's commands to the program. */
export function registerDecodeCommand(program: Command): void {
  examples(
    program.command('decode'),
    "eidkit decode 'https://ads.example/ac?nwid=1234&siteid=1&pgid=2&fmtid=3&eids=W3sic291cmNlIjoiaWQ1LXN5bmMuY29tIiwidWlkcyI6W3siaWQiOiJJRDUqYWJjIiwiYXR5cGUiOjF9XX1d'",
    'eidkit decode --json W3sic291cmNlIjoiaWQ1LXN5bmMuY29tIiwidWlkcyI6W3siaWQiOiJJRDUqYWJjIiwiYXR5cGUiOjF9XX1d',
    'echo "$EIDS" | eidkit decode -',
    'eidkit decode --post-body openrtb-request.json',
  )
    .description(
      'decode the eids of an ad-call URL, a POST ad-call body (eidkit, Prebid adapter, OpenRTB), a Base64 eids string or a JSON array ("-" reads stdin)',
    )
    .argument(
      '[input]',
      'ad-call URL (https://…/ac?…eids=… or /ac?…), POST body JSON, Base64 eids, JSON array, or - for stdin',
    )
    .option(
      '--post-body <file>',
      'read a POST ad-call body (eidkit, Prebid adapter /prebid/v1, OpenRTB 2.5/2.6) from a file, or - for stdin',
    )
    .option('--json', 'print machine-readable JSON')
    .option(
      '--partners <file>',
      'JSON partners list or forwarding policy: print what each partner would receive, and why',
    )
    .action(
      async (
        inputArg: string | undefined,
        opts: { json?: boolean; postBody?: string; partners?: string },
        cmd: Command,
      ) => {
        const source = opts.postBody ?? inputArg;
        if (source === undefined)
          return cmd.error("error: missing argument 'input' (or --post-body <file>)", { exitCode: EXIT.USAGE });
        const forwarding = opts.partners ? readPartnersFile(opts.partners) : undefined;
        const text = source === '-' ? readFileSync(0, 'utf8') : opts.postBody !== undefined ? readBody(source) : source;
        if (opts.postBody !== undefined && !text.trim().startsWith('{'))
          throw new DecodeError('the --post-body input is not a JSON object');
        const result = decodeInput(text);
        if (forwarding) {
          const eids = result.eids.map(({ providerId: _id, providerName: _name, ...eid }) => eid);
          result.forwarding = forwardingOf(
            { endpoint: 'unknown', formats: [], consent: {}, ...result.call, eids, issues: [] },
            forwarding.policy,
            forwarding.partners,
          );
        }
        await (opts.json ? outJson(result) : outText(formatDecodeOutput(result)));
        if (!result.decoded) {
          const why =
            result.issues.find((i) => i.path === 'eids' || i.path === 'body')?.message ?? 'no eids could be read';
          throw new DecodeError(`could not decode the eids: ${why}`);
        }
      },
    );
}
