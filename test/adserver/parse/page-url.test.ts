// The page URL of an ad call keeps no raw email on the receiving side, whoever sent the call: the Referer header,
// a Prebid body's `page`, an OpenRTB body's `site.page`; and `site.page` of every bid request built from it.
import { describe, expect, test } from 'vitest';
import { createHash } from 'node:crypto';
import {
  buildBidRequest,
  OptionsError,
  parseAdCall,
  parseIncomingMessage,
  scrubPageUrl,
  type AdCall,
} from '../../../src/adserver/index.js';
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const EMAIL = 'Jane.Doe@Example.com';
const HASH = sha256('jane.doe@example.com');
const RAW = /jane(\.doe)?(@|%40|%2540)/i;

describe('the parsed page URL', () => {
  test.each([
    [
      `https://news.example/welcome?email=${encodeURIComponent(EMAIL)}&utm=x`,
      'https://news.example/welcome?email=&utm=x',
    ],
    [`https://news.example/u/${EMAIL}/profile#top`, 'https://news.example/u//profile#top'],
    [
      `https://news.example/p?next=${encodeURIComponent(`/u?e=${encodeURIComponent(EMAIL)}`)}`,
      'https://news.example/p?next=',
    ],
    ['https://news.example/p#c=jane.doe%252540example.com', 'https://news.example/p#c='],
    ['https://jane.doe%40example.com:pw@news.example/a', 'https://news.example/a'],
  ])('from the Referer header %s is %s', (referer, clean) => {
    expect(parseAdCall({ url: '/ac?nwid=1', headers: { referer } }).referer).toBe(clean);
  });

  test('from every body that carries one: a Prebid body, an OpenRTB site.page, a generic call with page', () => {
    const page = `https://news.example/a?email=${encodeURIComponent(EMAIL)}`;
    const bodies = [
      { url: '/prebid/v1', body: { networkId: 1, units: [], page } },
      { url: '/genericpost', body: { imp: [{ id: '1' }], site: { page } } },
      { url: '/genericpost', body: { networkId: 1, page } },
    ];
    for (const { url, body } of bodies) {
      const call = parseAdCall({ url, method: 'POST', body: JSON.stringify(body) });
      expect(call.referer, url).toBe('https://news.example/a?email=');
    }
  });

  test('through the Node adapter too', async () => {
    const req = new IncomingMessage(new Socket());
    req.url = '/ac?nwid=1';
    req.method = 'GET';
    req.headers = { referer: `https://news.example/?m=${encodeURIComponent(EMAIL)}` };
    req.push(null);
    expect((await parseIncomingMessage(req)).referer).toBe('https://news.example/?m=');
  });

  test("hashed instead with pageUrl: { emails: 'hash' }: the SHA-256 of the normalised email takes its place", () => {
    const call = parseAdCall(
      {
        url: '/ac',
        headers: { referer: `https://news.example/u/${encodeURIComponent(EMAIL)}/x?e=JANE.DOE%2540EXAMPLE.COM` },
      },
      { pageUrl: { emails: 'hash' } },
    );
    expect(call.referer).toBe(`https://news.example/u/${HASH}/x?e=${HASH}`);
  });

  test('the named parameters go whatever they hold (email by default); emailParams names others', () => {
    const url = `https://news.example/a?email=amFuZUBleGFtcGxlLmNvbQ&uid=amFuZQ&EMail=x&ok=1`;
    expect(parseAdCall({ url: '/ac', headers: { referer: url } }).referer).toBe(
      'https://news.example/a?email=&uid=amFuZQ&EMail=&ok=1',
    );
    const named = parseAdCall({ url: '/ac', headers: { referer: url } }, { pageUrl: { emailParams: ['uid'] } });
    expect(named.referer).toBe('https://news.example/a?email=amFuZUBleGFtcGxlLmNvbQ&uid=&EMail=x&ok=1');
    const hashed = parseAdCall({ url: '/ac', headers: { referer: url } }, { pageUrl: { emails: 'hash' } });
    expect(hashed.referer).toBe(
      `https://news.example/a?email=${sha256('amfuzublegftcgxllmnvbq')}&uid=amFuZQ&EMail=${sha256('x')}&ok=1`,
    );
  });

  test('a page URL without an email is kept exactly as sent', () => {
    const referer = 'https://news.example/sport/@team?q=a%20b&tag=%E2%9C%93#top';
    expect(parseAdCall({ url: '/ac', headers: { referer } }).referer).toBe(referer);
  });

  test('options that are not rules fail at once, naming the field', () => {
    expect(() => parseAdCall({ url: '/ac' }, { pageUrl: { emails: 'drop' as never } })).toThrow(OptionsError);
    expect(() => parseAdCall({ url: '/ac' }, { pageUrl: { emails: 'drop' as never } })).toThrow('pageUrl.emails');
    expect(() => scrubPageUrl('x', { emailParams: [''] })).toThrow('pageUrl.emailParams');
  });
});

describe('site.page of a bid request', () => {
  const byHand = (referer: string): AdCall => ({
    endpoint: 'ac',
    formats: [{ id: 1 }],
    eids: [],
    consent: {},
    issues: [],
    referer,
  });

  test('a call built by hand, never parsed, still forwards no email; site.domain is its host', () => {
    const req = buildBidRequest(byHand(`https://news.example/a/${EMAIL}?x=${encodeURIComponent(EMAIL)}`), {
      id: 'dsp',
    });
    expect(req.site).toMatchObject({ page: 'https://news.example/a/?x=', domain: 'news.example' });
    expect(JSON.stringify(req)).not.toMatch(RAW);
    const hashed = buildBidRequest(
      byHand(`https://news.example/a?x=${EMAIL}`),
      { id: 'dsp' },
      { pageUrl: { emails: 'hash' } },
    );
    expect(hashed.site?.page).toBe(`https://news.example/a?x=${HASH}`);
  });

  test('a parsed call whose URL was hashed keeps its hashes: parameters are the parser’s job, not hashed twice', () => {
    const call = parseAdCall(
      { url: '/ac', headers: { referer: `https://news.example/a?email=${encodeURIComponent(EMAIL)}` } },
      { pageUrl: { emails: 'hash' } },
    );
    for (const options of [{}, { pageUrl: { emails: 'hash' as const } }])
      expect(buildBidRequest(call, { id: 'dsp' }, options).site?.page).toBe(`https://news.example/a?email=${HASH}`);
  });

  test('forwarding options that are not rules fail at once, naming the field', () => {
    expect(() =>
      buildBidRequest(byHand('https://x.example/'), { id: 'dsp' }, { pageUrl: { emails: 1 as never } }),
    ).toThrow('options.pageUrl.emails');
  });
});
