// The script served at /tag/<network_id>/sas.js (extended-ids.md §4: the library is loaded with the network id
// in its path, and the automatic transfer is enabled per network by the operator). It is one response: the
// operator switches (`window.__sasop`), the built core, then the add-on of every module the operator enabled for
// that network in demo/networks.json (see demo/modules/compose.mjs). A network with no modules gets the core alone.
import { composeTag } from './modules/compose.mjs';

/**
 * The JS text served at `/tag/<networkId>/sas.js` (`debug: true` for `/tag/<networkId>/sas.debug.js`).
 * Reads the built files on each request, so a rebuild shows up without restarting the server.
 */
export async function tagScriptFor(networkId, { debug = false } = {}) {
  if (!/^\d{1,12}$/.test(String(networkId))) throw new RangeError(`not a network id: ${networkId}`);
  return composeTag(Number(networkId), { debug });
}
