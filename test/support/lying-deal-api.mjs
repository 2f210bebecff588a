// A deal API that lies about its pages, on a free loopback port: what `eidkit deals list` must survive (a clear
// error, what was listed so far kept, and an exit within seconds). It logs any client in and serves GET /deals
// in one of these ways (`mode`):
//   huge-total   X-Pagination-Total-Count 1,000,000,000,000, every offset a full page of new deals
//   self-next    no total; Link rel="next" to the very URL asked for, the same page each time
//   same-page    no total; Link rel="next" to a new URL each time (a cursor, no offset), the same 100 deals
//   back-next    no total; Link rel="next" to offset 100 from the first page, then back to 0
//   endless      no total; Link rel="next" to the next offset forever, a page of new deals each time
import { createServer } from 'node:http';

const deal = (id) => ({ id, dealId: `D${id}`, name: `deal ${id}`, isActive: true, price: 1, currency: 'EUR' });
const page = (from) => Array.from({ length: 100 }, (_, i) => deal(from + i + 1));

/** Starts the server; resolves with its base URL, the requests to GET /deals so far, and `close`. */
export async function startLyingDealApi(mode) {
  let requests = 0;
  let counter = 0;
  const server = createServer((req, res) => {
    const url = new URL(req.url, `http://${req.headers.host}`);
    const send = (status, body, headers = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    };
    if (url.pathname.endsWith('/oauth/token')) return send(200, { access_token: 'at', expires_in: 36000 });
    if (url.pathname.endsWith('/authorize')) return send(200, 'ut', { 'content-type': 'text/plain' });
    if (!url.pathname.endsWith('/deals')) return send(404, { message: 'no route' });
    requests++;
    const offset = Number(url.searchParams.get('offset') ?? 0);
    const next = new URL(url);
    const link = (to) => ({ link: `<${to.href}>; rel="next"` });
    switch (mode) {
      case 'huge-total':
        return send(200, page(offset), { 'x-pagination-total-count': '1000000000000' });
      case 'self-next':
        return send(200, page(0), link(url));
      case 'same-page':
        next.searchParams.delete('offset');
        next.searchParams.set('cursor', String(++counter));
        return send(200, page(0), link(next));
      case 'back-next':
        next.searchParams.set('offset', offset === 0 ? '100' : '0');
        next.searchParams.set('from', String(++counter));
        return send(200, page(offset), link(next));
      case 'endless':
        next.searchParams.set('offset', String(offset + 100));
        return send(200, page(offset), link(next));
      default:
        return send(500, { message: `unknown mode ${mode}` });
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    requests: () => requests,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
