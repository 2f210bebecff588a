/**
 * Extensions built into every copy of the tag: the consent reader, so every call carries the signals.
 * The core host installs each of these on load, before the command queue runs.
 */
import type { TagExtension } from './extension.js';
import { createConsentExtension } from './consent.js';

/**
 * The consent reader: `gdpr`, `gdpr_consent`, `gpp`, `gpp_sid`, `us_privacy` on every call; no eids without a legal
 * basis.
 */
export const builtinExtensions: TagExtension[] = [createConsentExtension()];
