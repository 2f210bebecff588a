/**
 * The browser tag's entry: the only file with top-level side effects. It installs `window.sas` with the
 * built-in extensions (the consent reader); everything else lives in importable, tested modules.
 */
import { builtinExtensions } from './builtins.js';
import { findScriptSrc, installTag } from './tag.js';

// Read while this script runs: `document.currentScript` is null once the script has finished.
let src: string | undefined;
try {
  src = findScriptSrc(document);
} catch {
  // A page that tampers with document APIs only costs us the network id from the script path.
}
installTag(window, src, builtinExtensions);
