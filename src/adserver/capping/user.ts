/**
 * The user a frequency cap counts against: the publisher `uid` when present (it overrides `pid`), else the `pid`
 * cookie, else, only when the network activated one provider and the call carries neither, that provider's id.
 * See docs/wire-format.md#frequency-capping-by-an-alternative-id.
 */
import { providerById, providerForSource } from '../../core/index.js';
import type { Provider } from '../../core/index.js';
import type { AdCall } from '../parse/index.js';
import { given } from '../common/index.js';

/** Which id identified the user for capping. */
export type CappingUserKind = 'uid' | 'pid' | 'alternative' | 'none';

/** The user a cap is counted against. `key` is absent when no id was available (`kind: 'none'`). */
export interface CappingUser {
  kind: CappingUserKind;
  /** Store key prefix: `uid:<network>:<uid>`, `pid:<pid>` or `alt:<provider id>:<id>`. */
  key?: string;
  /** The alternative provider used, for `kind: 'alternative'`. */
  provider?: Provider;
}

/** Per network, the one provider activated as the alternative to the cookie (network id → provider id or source). */
export type AlternativeIdConfig = Readonly<Record<number, number | string>>;

/** Resolves and checks the alternative-id configuration; throws a TypeError naming the bad entry. */
export function resolveAlternativeIds(config: AlternativeIdConfig = {}): Map<number, Provider> {
  const out = new Map<number, Provider>();
  for (const [network, ref] of Object.entries(config)) {
    // Only canonical network ids: '01234' or ' 1234' would otherwise land on network 1234 as a second provider,
    // silently replacing the first (a network has one provider for capping, no more).
    if (!/^[1-9]\d{0,9}$/.test(network)) throw new TypeError(`alternativeIds: "${network}" is not a network id`);
    if (typeof ref !== 'number' && typeof ref !== 'string') {
      // An array or object here usually means several providers for one network: the service allows one.
      throw new TypeError(
        `alternativeIds[${network}]: one provider per network (a provider id or a source), got ${given(ref)}`,
      );
    }
    const provider = typeof ref === 'number' ? providerById(ref) : providerForSource(ref);
    if (provider.id === 0)
      throw new TypeError(`alternativeIds[${network}]: ${given(ref)} is not a registered provider`);
    out.set(Number(network), provider);
  }
  return out;
}

/**
 * The user capping counts against: `uid` (scoped to its network) > `pid` cookie >
 * the network's one activated alternative provider's first id, used only when the call has neither > none.
 */
export function cappingUserOf(call: AdCall, alternatives: ReadonlyMap<number, Provider> = new Map()): CappingUser {
  if (call.uid !== undefined) return { kind: 'uid', key: `uid:${call.networkId ?? ''}:${call.uid}` };
  if (call.pid !== undefined) return { kind: 'pid', key: `pid:${call.pid}` };
  const provider = call.networkId !== undefined ? alternatives.get(call.networkId) : undefined;
  if (provider) {
    const eid = call.eids.find((e) => providerForSource(e.source).id === provider.id);
    const id = eid?.uids[0]?.id;
    if (id) return { kind: 'alternative', key: `alt:${provider.id}:${id}`, provider };
  }
  return { kind: 'none' };
}
