/**
 * `eidkit/operator`: per-network tag delivery for the service operator: the networks
 * configuration, composing a network's script, building static files for a CDN, and a hono app that serves them.

 * @packageDocumentation
 */
export {
  MODULES,
  NETWORK_ID,
  NetworksConfigError,
  enabledModules,
  loadNetworksConfig,
  networkExperiments,
  parseNetworksConfig,
} from './config.js';
export type { ConfigIssue, ModuleName, NetworksConfig } from './config.js';
export { composeModules, composeTag, defaultDistDir, loadTagFiles } from './compose.js';
export type { ComposeOptions, TagFiles } from './compose.js';
export { encodeScript, versionedFileName } from './encode.js';
export type { EncodedScript } from './encode.js';
export { buildTags, DEFAULT_NETWORK, TAG_FILES } from './build.js';
export type { BuildOptions, BuildResult, Manifest, ManifestEntry } from './build.js';
export { createTagApp, negotiateEncoding, TAG_CACHE_CONTROL, VERSIONED_CACHE_CONTROL } from './serve.js';
export type { TagAppOptions } from './serve.js';
