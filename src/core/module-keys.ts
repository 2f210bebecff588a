/**
 * What the tag's provider modules keep on the device (docs/tag.md#what-modules-store-and-when-it-goes): each
 * module's own keys, which it writes as a localStorage entry or a cookie of that name (path `/`), the expiry inside
 * the value (no companion key). Never the providers' own first-party entries (`_lr_env`, `cto_bidid`), which
 * belong to the providers' scripts. The tag and the operator's script composer both read this table.
 */

/** The identity-link module's SHA-256 email hash (`storageType`: localStorage or a cookie). */
export const HASH_KEY = '_sas_hem';
/** The identifier-linking module's cached answer (localStorage). */
export const CACHE_KEY = '_sas_idl';

/** The experiments' first-party random id (localStorage), which decides this browser's arms. */
export const XID_KEY = '_sas_xid';

/** The keys each module stores, by module name; a module not listed stores nothing. */
export const MODULE_KEYS: Readonly<Record<string, readonly string[]>> = {
  identityLink: [HASH_KEY],
  idLinking: [CACHE_KEY],
};
