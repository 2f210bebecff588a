/**
 * The OpenAPI document as served: the same for every request but its two server URLs, which name the origin the
 * request came to (in-process, loopback, a proxy's Host). So it is built and serialised once, and each request
 * only sets its origin into the text: a caller sending a new `Host` each time costs a string join, not a rebuild of
 * the whole document (188 KB) per origin (docs/simulator.md "The OpenAPI document").
 */
import { buildOpenApi } from './openapi.js';

/** Stands for the origin while the document is serialised; a reserved name that no schema or description holds. */
const ORIGIN = 'http://origin.invalid';

/** The document's JSON text for `origin`, from a document of `audience` built once. */
export function openApiText(audience: string): (origin: string) => string {
  const parts = JSON.stringify(buildOpenApi(audience, ORIGIN)).split(ORIGIN);
  return (origin) => parts.join(JSON.stringify(origin).slice(1, -1));
}
