// @vitest-environment happy-dom
// The render add-on (dist/addons/render.js): how it reads answers and refuses bad ones. Writing creatives into
// iframes needs a real browser: test/e2e/render.spec.ts.
import { beforeEach, describe, expect, test } from 'vitest';
import { answerAds, installRender, render } from '../../src/tag/addons/render.js';

const ok = (body: unknown) => ({
  ok: true,
  status: 200,
  url: 'https://ads.example/call',
  eids: [],
  response: JSON.stringify(body),
});

beforeEach(() => {
  document.body.innerHTML = '<div id="banner"><p>placeholder</p></div><div id="sky"></div>';
});

describe('sas.render', () => {
  test('bad answers become outcomes with a reason, never a throw', () => {
    expect(
      render(ok({ ads: [{ tagId: 'nowhere', html: '<b>x</b>' }, { tagId: 'banner' }, { html: '<b>x</b>' }, null] })),
    ).toEqual([
      { tagId: 'nowhere', ok: false, reason: 'no element with id "nowhere" on the page' },
      { tagId: 'banner', ok: false, reason: 'the ad has no html' },
      { ok: false, reason: 'the ad names no tagId and none was given' },
    ]);
    expect(render({ ok: true, response: 'not json' })).toEqual([]);
    expect(render({ ok: false, status: 0, error: 'Failed to fetch' })).toEqual([]);
    expect(render(undefined)).toEqual([]);
    expect(render(ok({ ads: [{ tagId: 'banner', html: 'x'.repeat(1_000_001) }] }))[0].reason).toMatch(
      /over 1000000 characters/,
    );
    expect(document.querySelector('#banner p')).not.toBeNull();
  });

  test('an empty answer (no fill) is no ad', () => {
    expect(answerAds('')).toEqual([]);
    expect(answerAds('{"ads":[]}')).toEqual([]);
    expect(render({ ok: true, status: 204, response: '' })).toEqual([]);
  });

  test('installs sas.render beside a queue the core has not run yet, and keeps an existing one', () => {
    const win = { sas: { cmd: [] } } as unknown as Window & { sas: Record<string, unknown> };
    installRender(win);
    expect(win.sas.render).toBe(render);
    const mine = () => [];
    const other = { sas: { render: mine } } as unknown as Window & { sas: Record<string, unknown> };
    installRender(other);
    expect(other.sas.render).toBe(mine);
  });
});
