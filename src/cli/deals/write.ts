/**
 * The writing commands on the deal API: `deals create|update|pause|resume|delete` and `deals domainlist
 * attach|detach`. Each is a handler that src/cli/deals.ts registers with its options; every one has a `--dry-run`
 * that validates and prints the request without sending it.
 */
import { EXIT } from '../exit-codes.js';
import { CliError, confirm, interactive, outJson, outText, say } from '../output.js';
import { fieldText } from '../format.js';
import { terminalSafe } from '../../core/terminal.js';
import type { DealWriteInput } from '../../deals/index.js';
import { printDryRun, printWritten, readJsonInput } from '../deals-io.js';
import { withSession, type ConnectionFlags } from '../deals-session.js';

/** The options of every writing command. */
export type WriteFlags = ConnectionFlags & { dryRun?: boolean; json?: boolean };

/** The options of the commands that read a deal or a patch: --file, --data, --set. */
export type DealInputFlags = WriteFlags & { file?: string; data?: string; set?: string[] };

/** `deals create`: validates the deal, creates it (or a copy of another with --copy-of); prints its id or JSON. */
export async function createDeal(flags: DealInputFlags & { copyOf?: string }): Promise<void> {
  // With --copy-of the body only changes fields of the copy; none copies the deal as it is.
  const deal = readJsonInput(flags, 'deal', { optional: flags.copyOf !== undefined });
  await withSession(flags, async (client) => {
    if (flags.dryRun) return printDryRun(await client.deals.dryRun.create(deal, { copyOf: flags.copyOf }), flags.json);
    // The client checks the deal's fields; with --copy-of they only change fields of the copy.
    const created =
      flags.copyOf === undefined
        ? await client.deals.create(deal as DealWriteInput)
        : await client.deals.create(deal as Partial<DealWriteInput>, { copyOf: flags.copyOf });
    // --json prints the deal as created (as get, update and pause do); the plain output is its id, for scripts.
    await (flags.json
      ? outJson(created.deal ?? (await client.deals.get(created.id)))
      : outText(`${fieldText(created.id)}\n`));
    say(`created deal ${created.id} (${created.location}${created.historyId ? `, history ${created.historyId}` : ''})`);
  });
}

/** `deals update <id>`: reads the deal, merges the patch, validates and PUTs it (nothing when nothing changes). */
export async function updateDeal(id: string, flags: DealInputFlags): Promise<void> {
  const patch = readJsonInput(flags, 'patch');
  await withSession(flags, async (client) => {
    if (flags.dryRun) return printDryRun(await client.deals.dryRun.update(id, patch), flags.json);
    // The client sends no PUT for a patch that changes nothing: say what happened, not "updated".
    let sent = false;
    client.on('request', (e) => {
      if (e.method === 'PUT') sent = true;
    });
    const deal = await client.deals.update(id, patch);
    await printWritten(
      deal,
      flags.json,
      sent ? `updated deal ${deal.id}` : `deal ${deal.id} already has these values; nothing changed`,
    );
  });
}

/** `deals pause <id>`: isActive false. */
export function pauseDeal(id: string, flags: WriteFlags): Promise<void> {
  return setActive('pause', id, flags);
}

/** `deals resume <id>`: isActive true. */
export function resumeDeal(id: string, flags: WriteFlags): Promise<void> {
  return setActive('resume', id, flags);
}

/** Pauses or resumes a deal; a deal already so is printed as it is, with no write. */
async function setActive(verb: 'pause' | 'resume', id: string, flags: WriteFlags): Promise<void> {
  const past = verb === 'pause' ? 'paused' : 'resumed';
  await withSession(flags, async (client) => {
    if (flags.dryRun) return printDryRun(await client.deals.dryRun[verb](id), flags.json);
    const stored = await client.deals.get(id);
    if (stored.isActive === (verb === 'resume')) {
      return printWritten(stored, flags.json, `deal ${stored.id} is already ${past}; nothing changed`);
    }
    const deal = await client.deals[verb](id, { stored });
    await printWritten(deal, flags.json, `${past} deal ${deal.id}`);
  });
}

/** `deals delete <id>`: asks first on a terminal; refuses without one unless --yes. */
export async function deleteDeal(id: string, flags: WriteFlags & { yes?: boolean }): Promise<void> {
  await withSession(flags, async (client) => {
    if (flags.dryRun) return printDryRun(await client.deals.dryRun.delete(id), flags.json);
    if (!flags.yes) {
      // Like `gh repo delete`: a deletion nobody can confirm is refused, never done silently.
      if (!interactive()) {
        throw new CliError(
          `deals delete ${id} needs --yes when it cannot ask (stdin or stderr is not a terminal); nothing was deleted`,
          EXIT.USAGE,
        );
      }
      const deal = await client.deals.get(id);
      if (!(await confirm(terminalSafe(`delete deal ${deal.id} ${JSON.stringify(deal.name)}?`))))
        throw new CliError(`deal ${deal.id} was not deleted`, EXIT.ERROR);
    }
    await client.deals.delete(id);
    say(`deleted deal ${id}`);
  });
}

/** `deals domainlist attach <id> <domainListId>`. */
export function attachDomainList(id: string, domainListId: number, flags: WriteFlags): Promise<void> {
  return changeDomainList('attach', id, domainListId, flags);
}

/** `deals domainlist detach <id> <domainListId>`. */
export function detachDomainList(id: string, domainListId: number, flags: WriteFlags): Promise<void> {
  return changeDomainList('detach', id, domainListId, flags);
}

/** Attaches a domain list to a deal or detaches it. */
async function changeDomainList(
  verb: 'attach' | 'detach',
  id: string,
  domainListId: number,
  flags: WriteFlags,
): Promise<void> {
  const method = verb === 'attach' ? 'attachDomainList' : 'detachDomainList';
  await withSession(flags, async (client) => {
    if (flags.dryRun) return printDryRun(await client.deals.dryRun[method](id, domainListId), flags.json);
    await client.deals[method](id, domainListId);
    say(
      verb === 'attach'
        ? `attached domain list ${domainListId} to deal ${id}`
        : `detached domain list ${domainListId} from deal ${id}`,
    );
  });
}
