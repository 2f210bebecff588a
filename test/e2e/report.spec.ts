// The receiving side end to end: the real built tag in Chromium, Firefox and WebKit sends ad calls to the demo
// server, which runs them through eidkit/adserver; /report.json must count exactly those calls, per provider, uid
// and pid, and the live report page must show them with the forwarded bid requests.
import { expect, test, type EnginePage } from './support/engines/fixture';
import { useFreshDemo } from './support/demo.js';

interface Row {
  date: string;
  networkId: number | null;
  calls: number;
  extendedIds: { providerId: number; providerName: string; calls: number }[];
  callsWithoutEids: number;
  hasUserUid: { with: number; without: number };
  hasUserPid: { with: number; without: number };
  userId: { uid: number; pid: number; none: number };
}
interface ReportJson {
  rows: Row[];
  lastCalls: {
    endpoint: string;
    eids: { source: string; providerId: number }[];
    bidRequests: { partner: { id: string }; request: { user?: { eids?: unknown[]; ext?: { eids?: unknown[] } } } }[];
  }[];
}

/** A bare publisher page: the documented snippet, the real tag from the demo server, nothing set up yet. */
const PAGE = `<!doctype html><html><head><meta charset="utf-8">
<script>window.sas = window.sas || {}; sas.cmd = sas.cmd || [];</script>
<script async src="/tag/1234/sas.js"></script></head><body>e2e publisher page</body></html>`;

// A fresh server per test (the report starts empty); only the page's HTML is supplied here, on the demo's origin:
// the tag and every ad call go to the real demo server.
const demo = useFreshDemo({ '/e2e-publisher-page': PAGE });

const EIDS = [
  { source: 'id5-sync.com', uids: [{ id: 'ID5*e2e', atype: 1, ext: { linkType: 2 } }] },
  { source: 'uidapi.com', uids: [{ id: 'uid2-e2e', atype: 3 }] },
  { source: 'euid.eu', uids: [{ id: 'euid-e2e', atype: 3 }] },
  { source: 'hemsha256', uids: [{ id: 'a'.repeat(64), atype: 3 }] },
  { source: 'partner.example', uids: [{ id: 'unknown-e2e' }] },
];

/** Loads the page on the demo server's origin and sends `types` one after the other via sas.call. */
async function sendCalls(page: EnginePage, setup: Record<string, unknown>, eids: unknown, types: string[]) {
  await page.goto(new URL('e2e-publisher-page', demo().url).href);
  return page.evaluate(
    ({ setup, eids, types }) =>
      new Promise<{ ok: boolean; status: number }[]>((resolve) => {
        const w = window as unknown as {
          sas: {
            cmd: (() => void)[];
            setup(o: unknown): void;
            setEids(e: unknown): void;
            call(t: string, o: unknown): Promise<{ ok: boolean; status: number }>;
          };
        };
        w.sas.cmd.push(async () => {
          w.sas.setup({ networkid: 1234, domain: location.origin, ...setup });
          w.sas.setEids(eids);
          const results = [];
          for (const t of types) {
            const options =
              t === 'onecall'
                ? { siteId: 7, pageId: 8, formats: [{ id: 9, tagId: 'top' }] }
                : { siteId: 7, pageId: 8, formatId: 9 };
            results.push(await w.sas.call(t, options));
          }
          resolve(results);
        });
      }),
    { setup, eids, types },
  );
}

async function report(): Promise<ReportJson> {
  return (await fetch(new URL('report.json', demo().url))).json() as Promise<ReportJson>;
}

test('report.json counts every call the tag made, with the right providers, uid and pid', async ({ web: page }) => {
  const results = await sendCalls(page, { uid: 'publisher-user-42' }, EIDS, ['std', 'video', 'generic', 'onecall']);
  expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);

  const { rows, lastCalls } = await report();
  expect(rows).toHaveLength(1);
  const [row] = rows;
  expect(row).toMatchObject({ networkId: 1234, calls: 4, callsWithoutEids: 0, hasUserUid: { with: 4, without: 0 } });
  expect(row.extendedIds.map((p) => [p.providerId, p.calls])).toEqual([
    [0, 4], // partner.example: Unknown
    [2, 4], // ID5
    [4, 4], // Unified ID 2.0, US source
    [5, 4], // European Unified ID
    [42, 4], // hemsha256
  ]);
  // The first call had no pid yet; its answer set the cookie, which the tag sends on the next calls.
  expect(row.hasUserPid).toEqual({ with: 3, without: 1 });
  expect(row.userId).toEqual({ uid: 4, pid: 0, none: 0 });
  expect(lastCalls.map((c) => c.endpoint)).toEqual(['call', 'genericpost', 'ac', 'ac']);

  // Every call is forwarded under the demo's policy: user.eids (OpenRTB 2.6), user.ext.eids (2.5) without the
  // hashed email (one buyer only), and the DMP's one provider.
  const forwarded = Object.fromEntries(lastCalls[0].bidRequests.map((b) => [b.partner.id, b.request.user]));
  expect(forwarded['dsp-ortb26']?.eids).toHaveLength(5);
  expect(forwarded['dsp-ortb25']?.ext?.eids).toEqual(EIDS.filter((e) => e.source !== 'hemsha256'));
  expect(forwarded['dmp-uid2']?.eids).toEqual([EIDS[1]]);
});

test('calls without uid or eids are counted as such, per network', async ({ web: page }) => {
  await sendCalls(page, {}, [], ['std', 'generic']);
  await sendCalls(page, { networkid: 4321 }, [EIDS[0]], ['std']);
  const { rows } = await report();
  const byNetwork = Object.fromEntries(rows.map((r) => [String(r.networkId), r]));
  expect(byNetwork['1234']).toMatchObject({
    calls: 2,
    callsWithoutEids: 2,
    extendedIds: [],
    hasUserUid: { with: 0, without: 2 },
    hasUserPid: { with: 1, without: 1 },
  });
  expect(byNetwork['4321']).toMatchObject({
    calls: 1,
    extendedIds: [{ providerId: 2, providerName: 'ID5', calls: 1 }],
    hasUserPid: { with: 1, without: 0 },
  });
});

test('the live report page shows the dimensions table, the chart and the last calls with their bid requests', async ({
  web: page,
}) => {
  await sendCalls(page, { uid: 'u-1' }, EIDS.slice(0, 2), ['std']);
  await page.goto(new URL('report', demo().url).href);
  const row = '#dimensions tbody tr[data-network="1234"]';
  await expect.poll(() => page.text(row)).toContain('ID5 (2): 1');
  expect(await page.text(row)).toContain('Unified ID 2.0 (4): 1');
  // ID5, UID2, with uid, all calls (the only call had no pid yet: an empty bar is not drawn).
  await expect.poll(() => page.count('#chart rect.bar')).toBe(4);
  await expect.poll(() => page.count('#calls .call')).toBe(1);
  expect(await page.text('#calls .call')).toContain('id5-sync.com');
  await page.click('#calls details summary');
  await expect.poll(() => page.text('#calls details pre')).toContain('"eids"');
  // Per partner, what it receives and what the policy removed, with the reason.
  expect(await page.text('#calls .call tr[data-partner="dsp-ortb26"]')).toContain('none');
  expect(await page.text('#calls .call tr[data-partner="dmp-uid2"]')).toContain(
    "id5-sync.com: a DMP receives only its preferred provider's eids (Unified ID 2.0)",
  );

  // The sample call carries a reference envelope: the page shows the ids it held.
  await page.click('#sample');
  await expect.poll(() => page.count('#calls .call')).toBe(2);
  expect(await page.text('#calls .call')).toContain(
    'From the envelope: liveramp.com, uidapi.com, euid.eu, epsilon.com, yahoo.com',
  );
  // The sealed envelope goes to no partner; the ids opened from it (inserter eidkit.demo) go to every DSP.
  const dsp = '#calls .call tr[data-partner="dsp-ortb26"]';
  expect(await page.text(dsp)).toContain('liveramp.com: permissions[2] (source liveramp.com) allows no partner');
  expect(await page.text(`${dsp} td:nth-child(2)`)).toContain('liveramp.com (inserter eidkit.demo)');
  expect(await page.errors()).toEqual([]);
});

test('the chart keeps provider bars together before the uid / pid bars, charts "no eids", and has a legend', async ({
  web: page,
}) => {
  // Network 1234 first, with ID5; then network 4321 with UID2 (a provider first seen in a later row), and one
  // call without eids.
  await sendCalls(page, { uid: 'u-1' }, [EIDS[0]], ['std']);
  await sendCalls(page, { networkid: 4321 }, [EIDS[1]], ['std']);
  await sendCalls(page, { networkid: 4321 }, [], ['std']);
  await page.goto(new URL('report', demo().url).href);
  await expect.poll(() => page.count('#chart rect.bar')).toBe(6);
  const labels = await page.evaluate(() =>
    [...document.querySelectorAll('#chart rect.bar')].map((r) => r.getAttribute('data-label')),
  );
  expect(labels).toEqual(['ID5 (2)', 'Unified ID 2.0 (4)', 'no eids', 'with uid', 'with pid', 'all ad calls']);
  const legend = await page.evaluate(() => [...document.querySelectorAll('#chart .legend')].map((e) => e.textContent));
  expect(legend).toEqual([
    "calls carrying the provider's eids",
    'calls without eids',
    'calls with a uid / pid, and all calls',
  ]);
});

test('the report page shows each experiment: split, revenue and fill per arm, lift, coverage, forwarded / withheld', async ({
  web: page,
}) => {
  await page.goto(new URL('report', demo().url).href);
  await expect.poll(() => page.text('#uplift tbody')).toContain('No call in an experiment yet.');
  // Ten sample calls: every fifth is in the held-out arm of `id5-demo` and carries no ID5 eid.
  await page.evaluate(async () => {
    for (let i = 0; i < 10; i++) {
      const body = (await (await fetch('/report/sample-call.json')).json()) as unknown;
      await fetch('/genericpost', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    }
  });
  const row = '#uplift tbody tr[data-experiment="id5-demo"]';
  await expect.poll(() => page.text(row)).toContain('2 / 8');
  const text = await page.text(row);
  expect(text).toContain('ID5');
  expect(text).toContain('20.0 % of 20.0 %');
  // Coverage: every control call carried ID5; its eids forwarded and withheld per partner, counted once each.
  expect(text).toContain('100.0 %');
  expect(await page.count('#uplift-chart rect.coverage')).toBe(1);
  const report = (await (await fetch(new URL('report.json', demo().url))).json()) as {
    uplift: { forwarding: { sent: number; withheld: Record<string, number> }; leakage: { calls: number } }[];
  };
  const { sent, withheld } = report.uplift[0].forwarding;
  // 8 control calls × 3 partners, each ID5 eid sent or withheld once.
  expect(sent + Object.values(withheld).reduce((a, b) => a + b, 0)).toBe(24);
  expect(report.uplift[0].leakage.calls).toBe(0);
  expect(await page.errors()).toEqual([]);
});
