/** Deal fixtures shared by the rules, simulator and client tests. */

/** A valid fixed-price deal for one buyer and one country, with `overrides` laid over it. */
export function validDeal(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Premium FR display',
    isActive: true,
    beginDate: null,
    endDate: null,
    currency: 'EUR',
    pricingModel: 1,
    price: 2.5,
    buyerIds: [101],
    countryCodes: ['FR'],
    ...overrides,
  };
}
