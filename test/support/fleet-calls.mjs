// Deterministic ad calls for the fleet tests: call i has a network, user ids, eids and an hour derived from i,
// so a test can rebuild exactly what each process sent.
const SOURCES = ['id5-sync.com', 'uidapi.com', 'euid.eu', 'liveramp.com', 'example.org'];

/** 20:00 UTC yesterday: six hours from there span a UTC midnight, well within the reports' retention. */
export function fleetStart(now = Date.now()) {
  const d = new Date(now - 86_400_000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), 20);
}

/** The i-th call and the time it is counted at (within six hours after `start`). */
export function fleetCall(i, start) {
  const eids = SOURCES.filter((_, k) => (i >> k) % 3 === 0).map((source) => ({
    source,
    uids: [{ id: `${source}-${i % 97}`, atype: 1 }],
  }));
  const call = {
    endpoint: 'ac',
    networkId: i % 4 === 3 ? undefined : 1000 + (i % 3),
    formats: [],
    eids,
    consent: {},
    issues: [],
  };
  if (i % 5 === 0) call.uid = `u${i % 50}`;
  if (i % 2 === 0) call.pid = `p${i % 70}`;
  return { call, at: new Date(start + ((i * 7919) % (6 * 3_600_000))) };
}

/**
 * The i-th call of {@link fleetCall} in holdout experiments (two per network, both arms, sticky or not; some calls
 * of the held-out arm leak the source), and the outcome the ad server feeds back for it: an impression every third
 * call, with revenue in whole millionths so that every sum is exact.
 */
export function fleetExperimentCall(i, start) {
  const { call, at } = fleetCall(i, start);
  call.experiments = [
    {
      id: 'id5-q3',
      arm: i % 10 === 0 ? 'holdout' : 'control',
      share: 0.1,
      sources: ['id5-sync.com'],
      sticky: i % 7 !== 0,
    },
    { id: 'uid2', arm: i % 2 ? 'holdout' : 'control', share: 0.5, sources: ['uidapi.com', 'euid.eu'], sticky: true },
  ];
  const outcome = i % 3 === 0 ? { impression: true, revenue: ((i * 7919) % 5000) / 1e6 } : { impression: false };
  return { call, at, outcome };
}
