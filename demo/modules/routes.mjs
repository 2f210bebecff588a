// Demo routes for the provider modules, mounted by demo/server.mjs with one call:
//   /modules/<page>.html      demo pages in this folder
//   /modules/cmp.js           a real TCF CMP (@iabtcf/core + @iabtcf/cmpapi), see cmp-entry.mjs
//   /modules/prebid.js        a real Prebid.js (userId + SharedID) from the npm package, see prebid-bundle.mjs
//   POST /idlink/g/v2/102.json  a local stand-in for the identifier-linking provider's endpoint
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { cmpBundle } from './cmp-bundle.mjs';
import { prebidBundle } from './prebid-bundle.mjs';

const dir = new URL('./', import.meta.url);

/** The stand-in's answer: a stable id per `pd` (as the real service links ids across sites by it). */
export function idLinkingAnswer(body) {
  const pd = typeof body?.pd === 'string' ? body.pd : '';
  const id =
    'ID5*demo-' +
    createHash('sha256')
      .update(pd || 'no-pd')
      .digest('hex')
      .slice(0, 24);
  return {
    universal_uid: id,
    signature: 'demo-signature',
    ext: { linkType: pd ? 2 : 1, abTestingControlGroup: false },
    cache_control: { max_age_sec: 7200 },
  };
}

const send = (res, status, type, body, headers = {}) => {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', ...headers });
  res.end(body);
};

/**
 * Answers the module routes; returns true when it handled the request (plain node:http req/res).
 * `onIdLinking(body)` lets the server log or record the stand-in's requests.
 */
export async function handleModuleRoute(req, res, { onIdLinking } = {}) {
  const url = new URL(req.url, 'http://localhost');
  const path = url.pathname;
  if (path.startsWith('/idlink/')) {
    const cors = {
      'Access-Control-Allow-Origin': req.headers.origin || '*',
      'Access-Control-Allow-Credentials': 'true',
      'Access-Control-Allow-Headers': 'Content-Type',
    };
    if (req.method === 'OPTIONS') return (send(res, 204, 'text/plain', '', cors), true);
    if (req.method !== 'POST' || path !== '/idlink/g/v2/102.json')
      return (send(res, 404, 'application/json', '{"error":"partner 102 only"}', cors), true);
    let text = '';
    for await (const chunk of req) text += chunk;
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      return (send(res, 400, 'application/json', '{"error":"bad json"}', cors), true);
    }
    onIdLinking?.(body);
    return (send(res, 200, 'application/json', JSON.stringify(idLinkingAnswer(body)), cors), true);
  }
  if (path === '/modules/cmp.js') return (send(res, 200, 'text/javascript', await cmpBundle()), true);
  if (path === '/modules/prebid.js') return (send(res, 200, 'text/javascript', prebidBundle()), true);
  const page = /^\/modules\/([\w-]+\.html)$/.exec(path);
  if (page) {
    try {
      return (send(res, 200, 'text/html; charset=utf-8', await readFile(new URL(page[1], dir))), true);
    } catch {
      return false;
    }
  }
  return false;
}
