/**
 * Extensions built into every copy of the tag (owned by issue #5: consent signals on every call).
 * The core host installs each of these on load, before the command queue runs.
 */
import type { TagExtension } from './extension.js';

export const builtinExtensions: TagExtension[] = [];
