/** `eidkit login`: a user token obtained now and cached for the later commands (src/cli/deals.ts registers it). */
import { say } from '../output.js';
import { defaultTokenPath } from '../../deals/index.js';
import { withSession, type ConnectionFlags } from '../deals-session.js';

/** Logs in and says where the token went. */
export async function login(flags: ConnectionFlags): Promise<void> {
  await withSession(flags, async (client) => {
    await client.authenticate();
    const where = flags.simulator
      ? 'not cached: the in-process simulator lives only as long as this command'
      : flags.cache === false
        ? 'not cached (--no-cache)'
        : `cached in ${flags.tokenFile ?? defaultTokenPath()}`;
    say(`logged in to ${client.baseUrl.href}; token ${where}`);
  });
}
