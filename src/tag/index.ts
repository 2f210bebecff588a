/**
 * The browser tag's entry: it installs `window.sas` with the built-in extensions (the consent reader). The other
 * files with a top-level side effect are the add-on scripts concatenated after it: each provider module in
 * modules/ registers itself on import (`registerExtension`), and addons/render.ts installs the renderer.
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
