/**
 * Consent platforms for the e2e tests, as a top page loads them: the IAB stubs (the locator frame and the
 * postMessage handler a tag in a child frame talks to, queueing calls until the CMP is there), and real CMPs
 * built from npm (@iabtcf/cmpapi through demo/modules/cmp-entry.mjs, @iabgpp/cmpapi through gpp-cmp-entry.mjs).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { rollup } from 'rollup';
import { nodeResolve } from '@rollup/plugin-node-resolve';
// @ts-expect-error: plain JS demo helper
import { cmpBundle } from '../../../demo/modules/cmp-bundle.mjs';

/** The official IAB TCF stub (npm @iabtcf/stub): `__tcfapi` queue, `__tcfapiLocator` frame, message handler. */
export const tcfStub = (): string =>
  readFileSync(fileURLToPath(new URL('../../../node_modules/@iabtcf/stub/lib/stub.js', import.meta.url)), 'utf8');

/**
 * The GPP stub every GPP CMP puts inline in the page (IAB GPP "CMP API" §stub; npm has no package for it): a
 * `__gpp` that queues calls until @iabgpp/cmpapi replaces it (and hands it the queue), the `__gppLocator` frame,
 * and a handler that answers `__gppCall` messages through whichever `__gpp` is current.
 */
export const gppStub = (): string => `(function () {
  var queue = [];
  window.__gpp = function () {
    if (!arguments.length) return queue;
    var a = [].slice.call(arguments);
    if (a[0] === 'ping') return a[1]({ gppVersion: '1.1', cmpStatus: 'stub', cmpDisplayStatus: 'hidden', signalStatus: 'not ready', supportedAPIs: [], cmpId: 0, sectionList: [], applicableSections: [-1], gppString: '', parsedSections: {} }, true);
    queue.push(a);
  };
  (function addLocator() {
    if (!document.body) return setTimeout(addLocator, 5);
    var f = document.createElement('iframe');
    f.style.display = 'none';
    f.name = '__gppLocator';
    document.body.appendChild(f);
  })();
  window.addEventListener('message', function (e) {
    var d = e.data;
    var call = d && typeof d === 'object' ? d.__gppCall : null;
    if (!call) return;
    window.__gpp(call.command, function (value, success) {
      e.source.postMessage({ __gppReturn: { returnValue: value, success: success, callId: call.callId } }, '*');
    }, call.parameter, call.version);
  });
})();`;

/** The real TCF CMP (demo/modules/cmp-entry.mjs). */
export const tcfCmp = (): Promise<string> => cmpBundle();

let gpp: Promise<string> | undefined;
/** The real GPP CMP with only the EU TCF section (gpp-cmp-entry.mjs). */
export function gppCmp(): Promise<string> {
  gpp ??= (async () => {
    const bundle = await rollup({
      input: fileURLToPath(new URL('./gpp-cmp-entry.mjs', import.meta.url)),
      plugins: [nodeResolve({ browser: true })],
      onwarn: () => {},
    });
    const { output } = await bundle.generate({ format: 'iife' });
    return output[0].code;
  })();
  return gpp;
}
