// The script served at /tag/<network_id>/sas.js (extended-ids.md §4: the library is loaded with the network id
// in its path). Today every network gets the built core; per-network add-ons (issue #5) plug in here.
import { readFile } from 'node:fs/promises';

const dist = new URL('../dist/', import.meta.url);

/**
 * The JS text served at `/tag/<networkId>/sas.js` (`debug: true` for `/tag/<networkId>/sas.debug.js`).
 * Reads the built files on each request, so a rebuild shows up without restarting the server.
 */
export async function tagScriptFor(networkId, { debug = false } = {}) {
  if (!/^\d{1,12}$/.test(String(networkId))) throw new RangeError(`not a network id: ${networkId}`);
  return readFile(new URL(debug ? 'sas.debug.js' : 'sas.js', dist), 'utf8');
}
