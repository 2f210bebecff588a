// The 10 eids of a typical ad call, shared by the benchmarks: known and unknown sources, ext, vendor atype.
/** Ten eids as the tag sends them. */
export const eids = [
  {
    source: 'id5-sync.com',
    uids: [
      {
        id: 'ID5*Kj3Ld9s8FJwe0_Zx4mT1rQ2vY7uB6nC5aE8hG0iP3oL1kM9',
        atype: 1,
        ext: { linkType: 2, abTestingControlGroup: false },
      },
    ],
  },
  { source: 'uidapi.com', uids: [{ id: 'A4AAAABnF9vZx8mJkQ2pL7rT3yU1wE5iO0aS6dF4gH8jK2lZ9xC3vB7nM1qW5eR', atype: 3 }] },
  { source: 'euid.eu', uids: [{ id: 'A5AAAABkR8tY2uI6oP0aS4dF7gH1jK3lZ5xC9vB2nM6qW8eR0tY4uI7oP1aS3', atype: 3 }] },
  { source: 'liveramp.com', uids: [{ id: 'XY1000bIVBVah9ium-sZ3ykhPiXQbEcUpn4GjCtxrrw2BRDGM', atype: 3 }] },
  { source: 'criteo.com', uids: [{ id: 'bTnOuV9xSGx4V1pRN3FsR0FkJTJGbEtaa1hHVFRqVUNsNkdEM0w', atype: 1 }] },
  { source: 'pubcid.org', uids: [{ id: '2f4a6c8e-1b3d-4f5a-9c7e-0d2b4f6a8c1e', atype: 1 }] },
  {
    source: 'adserver.org',
    uids: [{ id: '6c2a1f3e-8d4b-4a7c-b9e1-3f5d7a9c1e2b', atype: 1, ext: { rtiPartner: 'TDID' } }],
  },
  { source: 'yahoo.com', uids: [{ id: 'ZbXcVnMaSdFgHjKlQwErTyUiOpZxCvBnMaSdFgHjKlQwErTy', atype: 3 }] },
  { source: 'hemsha256', uids: [{ id: 'b4c9a289323b21a01c3e940f150eb9b8c542587f1abfd8f0e1cc1ffc5e475514', atype: 3 }] },
  { source: 'example.org', uids: [{ id: 'vendor-specific-id-000123456789', atype: 571187 }] },
];
