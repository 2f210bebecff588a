/**
 * Reading a deals file (YAML via npm `yaml`, or JSON): its structure is checked here, every problem collected with
 * its path (`deals[3].key`, `defaults.price`); the deal fields themselves are checked by validateDeal when planned.
 */
import { ConfigurationError } from '../../core/config-error.js';
import { readFile } from 'node:fs/promises';
import { parseDocument } from 'yaml';
import { DEAL_WRITE_FIELDS, type DealIssue } from '../rules/index.js';
import { isDealKey, isDealKeyNamespace, parseDealKeyMarker } from '../client/keyed.js';
import { fileErrorText } from '../../core/file-error.js';

/** One desired deal of a file. */
export interface DealsFileEntry {
  /** The user's stable key (may be invalid: then `issues` says so). */
  key: string;
  /** Position in the file's `deals` list. */
  index: number;
  /** The deal fields: the file's defaults with the entry's own fields laid over them. */
  fields: Record<string, unknown>;
  /** The fields the entry itself sets (the others came from defaults). */
  own: ReadonlySet<string>;
  /** Fields whose live values are kept once the deal exists (file-level and entry-level lists). */
  unmanaged: readonly string[];
  /** Problems of the entry itself (key, meta fields), before the deal rules run. */
  issues: DealIssue[];
}

/** A parsed deals file. */
export interface DealsFile {
  /** Where it was read from (for messages); `<input>` when parsed from text. */
  source: string;
  /**
   * The file's namespace: its deals are keyed `<namespace>/<key>` on the service, so files with different
   * namespaces (and scripts' own keys) share one account without seeing each other's deals. Absent: keys as written.
   */
  namespace?: string;
  entries: DealsFileEntry[];
  /** Problems of the file as a whole (syntax, top-level shape); when present, `entries` may be incomplete. */
  issues: DealIssue[];
}

/** A deals file that cannot be read or parsed at all. */
export class DealsFileError extends ConfigurationError {
  override name = 'DealsFileError';
  declare readonly issues: readonly DealIssue[];
  constructor(message: string, issues: readonly DealIssue[] = []) {
    super(message, issues);
  }
}

const TOP_LEVEL = new Set(['$schema', 'namespace', 'defaults', 'unmanaged', 'deals']);
const FIELDS = new Set<string>(DEAL_WRITE_FIELDS);

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function unmanagedList(value: unknown, path: string, issues: DealIssue[]): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    issues.push({ path, message: 'must be a list of deal field names' });
    return [];
  }
  const out: string[] = [];
  value.forEach((f, i) => {
    if (typeof f === 'string' && FIELDS.has(f)) out.push(f);
    else issues.push({ path: `${path}[${i}]`, message: `${JSON.stringify(f)} is not a deal field` });
  });
  return out;
}

/** Parses the text of a deals file: JSON when `source` ends in `.json`, YAML otherwise (YAML also reads JSON). */
export function parseDealsFile(text: string, source = '<input>'): DealsFile {
  let data: unknown;
  if (/\.json$/i.test(source)) {
    try {
      data = JSON.parse(text);
    } catch (err) {
      throw new DealsFileError(`${source} is not valid JSON: ${(err as Error).message}`);
    }
  } else {
    const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
    if (doc.errors.length > 0) {
      const first = doc.errors[0];
      const where = first.linePos ? ` (line ${first.linePos[0].line}, column ${first.linePos[0].col})` : '';
      throw new DealsFileError(
        `${source} is not valid YAML${where}: ${first.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`,
      );
    }
    data = doc.toJS({ maxAliasCount: 100 });
  }
  const issues: DealIssue[] = [];
  if (!isObject(data)) throw new DealsFileError(`${source} must hold an object with a "deals" list`);
  for (const k of Object.keys(data))
    if (!TOP_LEVEL.has(k))
      issues.push({
        path: k,
        message: `unknown top-level field "${k}" (expected deals, namespace, defaults, unmanaged or $schema)`,
      });
  const defaults = data.defaults ?? {};
  if (!isObject(defaults)) issues.push({ path: 'defaults', message: 'must be an object of deal fields' });
  else {
    for (const k of Object.keys(defaults))
      if (!FIELDS.has(k)) issues.push({ path: `defaults.${k}`, message: `unknown deal field "${k}"` });
    if (defaults.callerDealIds !== undefined)
      issues.push({ path: 'defaults.callerDealIds', message: 'callerDealIds identify one deal; set them per deal' });
  }
  const namespace = data.namespace;
  if (namespace !== undefined && !isDealKeyNamespace(namespace)) {
    issues.push({
      path: 'namespace',
      message: `must be 1-100 letters, digits, ".", "_" or "-" starting with a letter or digit, got ${JSON.stringify(namespace)}`,
    });
  }
  const ns = isDealKeyNamespace(namespace) ? { namespace } : {};
  const shared = unmanagedList(data.unmanaged, 'unmanaged', issues);
  if (!Array.isArray(data.deals)) {
    issues.push({ path: 'deals', message: 'is required: a list of deals, each with a key' });
    return { source, ...ns, entries: [], issues };
  }
  const seen = new Map<string, number>();
  const entries = data.deals.map((raw, index): DealsFileEntry => {
    const entryIssues: DealIssue[] = [];
    const at = `deals[${index}]`;
    if (!isObject(raw)) {
      return {
        key: `#${index}`,
        index,
        fields: {},
        own: new Set(),
        unmanaged: [],
        issues: [{ path: '', message: `${at} must be an object with a key and deal fields` }],
      };
    }
    const { key, unmanaged, ...own } = raw;
    let name = typeof key === 'string' ? key : `#${index}`;
    if (key === undefined)
      entryIssues.push({ path: 'key', message: 'is required: your stable name for this deal, e.g. "fr-display-q3"' });
    else if (!isDealKey(key) || key.includes('/'))
      entryIssues.push({
        path: 'key',
        message: `must be 1-100 letters, digits, ".", "_" or "-" starting with a letter or digit, got ${JSON.stringify(key)}`,
      });
    else if (seen.has(key)) {
      entryIssues.push({ path: 'key', message: `duplicate key: deals[${seen.get(key)}] has it too` });
      name = `${key}#${index}`;
    } else seen.set(key, index);
    const ids = own.callerDealIds;
    if (Array.isArray(ids)) {
      ids.forEach((id, i) => {
        if (parseDealKeyMarker(id) || (typeof id === 'string' && id.startsWith('eidkit:'))) {
          entryIssues.push({
            path: `callerDealIds[${i}]`,
            message: 'entries starting with "eidkit:" are reserved for the key marker, which apply writes itself',
          });
        }
      });
    }
    const fields = { ...(isObject(defaults) ? defaults : {}), ...own };
    return {
      key: name,
      index,
      fields,
      own: new Set(Object.keys(own)),
      unmanaged: [...new Set([...shared, ...unmanagedList(unmanaged, 'unmanaged', entryIssues)])],
      issues: entryIssues,
    };
  });
  return { source, ...ns, entries, issues };
}

/** Reads and parses a deals file; `-` reads it from stdin. */
export async function loadDealsFile(path: string): Promise<DealsFile> {
  let text: string;
  try {
    text = path === '-' ? await readStdin() : await readFile(path, 'utf8');
  } catch (err) {
    throw new DealsFileError(`cannot read ${path}: ${fileErrorText(err)}`);
  }
  return parseDealsFile(text, path === '-' ? '<stdin>' : path);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
