// A small Global Vendor List (the real list's format, v3) holding the vendors eidkit cares about, so the demo
// and the tests can build real TC strings with @iabtcf/core offline.
const purpose = (id) => ({ id, name: `Purpose ${id}`, description: '', illustrations: [] });
const vendor = (id, name) => ({
  id,
  name,
  purposes: [1, 2, 3, 4, 7],
  legIntPurposes: [10],
  flexiblePurposes: [2, 7],
  specialPurposes: [1],
  features: [],
  specialFeatures: [],
  cookieMaxAgeSeconds: 31536000,
  usesCookies: true,
  cookieRefresh: true,
  usesNonCookieAccess: true,
  dataRetention: { stdRetention: 365, purposes: {}, specialPurposes: {} },
  urls: [{ langId: 'en', privacy: 'https://example.com/privacy', legIntClaim: 'https://example.com/li' }],
  dataDeclaration: [1, 2, 3],
});
export const vendorList = {
  gvlSpecificationVersion: 3,
  vendorListVersion: 100,
  tcfPolicyVersion: 5,
  lastUpdated: '2025-01-01T00:00:00Z',
  purposes: Object.fromEntries([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map((i) => [i, purpose(i)])),
  specialPurposes: { 1: purpose(1), 2: purpose(2), 3: purpose(3) },
  features: { 1: purpose(1), 2: purpose(2), 3: purpose(3) },
  specialFeatures: { 1: purpose(1), 2: purpose(2) },
  stacks: {},
  dataCategories: {
    1: { id: 1, name: 'IP addresses', description: '' },
    2: { id: 2, name: 'Device characteristics', description: '' },
    3: { id: 3, name: 'Device identifiers', description: '' },
  },
  vendors: {
    21: vendor(21, 'The Trade Desk'),
    45: vendor(45, 'Equativ'),
    91: vendor(91, 'Criteo'),
    97: vendor(97, 'LiveRamp'),
    131: vendor(131, 'ID5'),
  },
};
