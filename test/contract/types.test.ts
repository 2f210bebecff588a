/**
 * Types generated from the served document (openapi-typescript, as a user of the document would) agree with the
 * typed client's own request and response types, so the document and the client cannot drift apart. The check is
 * a TypeScript program compiled here: each line asserts that two types accept the same values.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { expect, test } from 'vitest';
import { LOOKUP_RESOURCES } from '../../src/deals/rules/index.js';
import { createDealApiSimulator } from '../../src/simulator/index.js';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

/** The item type the client's rules give each lookup resource (by the schema LOOKUP_ITEM_SCHEMAS picks). */
const ITEM_TYPES: Record<string, string> = {
  buyers: 'BuyerItem',
  partners: 'PartnerItem',
  dsps: 'DspItem',
  countries: 'CountryItem',
  publishers: 'PublisherItem',
  cities: 'CityItem',
  states: 'StateItem',
  regions: 'RegionItem',
  dmas: 'DmaItem',
  audienceSegments: 'SegmentItem',
  semanticSegments: 'SegmentItem',
  creativeBannerSizes: 'CreativeBannerSizeItem',
  identityProviders: 'IdentityProviderItem',
  thirdPartyProviders: 'ThirdPartyProviderItem',
  domainLists: 'DomainListItem',
};

function checkProgram(): string {
  const lookups = LOOKUP_RESOURCES.map(
    (r) => `  Expect<Agree<Json<paths['/${r}']['get'], 200>[number], R.${ITEM_TYPES[r] ?? 'LookupItem'}>>, // ${r}`,
  );
  return `
import type { components, paths } from './openapi.js';
import type * as R from '${src}deals/rules/index.js';
import type { DealsResource, DealListFilters } from '${src}deals/client/index.js';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Expect<T extends true> = T;
type S = components['schemas'];
type Json<Op, Status extends number> =
  Op extends { responses: { [K in Status]: { content: { 'application/json': infer T } } } } ? T : never;
type Body<Op> = Op extends { requestBody?: { content: { 'application/json': infer T } } } ? T : never;
/**
 * The document enumerates values (pricing models, platform ids, ISO country codes) that the client's types keep as
 * number or string (the rules check them at run time): literals are widened on both sides, everything else (field
 * names, optional and required, null, nesting) must agree exactly.
 */
type W<T> = T extends string ? string : T extends number ? number : T extends boolean ? boolean
  : T extends null | undefined ? T
  : T extends readonly (infer U)[] ? W<U>[] : T extends object ? { [K in keyof T]: W<T[K]> } : T;
type Agree<A, B> = Same<W<A>, W<B>>;
type ListQuery = NonNullable<paths['/deals']['get']['parameters']['query']>;

export type Checks = [
  // Requests: what the client sends is what the document's bodies take.
  // create's first overload takes a DealWriteInput; the copy overload (the last one) any part of it.
  Expect<Agree<S['DealWrite'], R.DealWriteInput>>,
  Expect<Agree<S['DealCopyOverrides'], NonNullable<Parameters<DealsResource['create']>[0]>>>,
  Expect<Same<Body<paths['/deals']['post']>, S['DealWrite'] | S['DealCopyOverrides']>>,
  // PUT also takes the read-only fields back (ignored): the write fields agree, and the read-only ones may be sent.
  Expect<Agree<Omit<Body<paths['/deals/{id}']['put']>, keyof R.DealReadOnly>, Parameters<DealsResource['replace']>[1]>>,
  Expect<Agree<Pick<S['DealReplace'], keyof R.DealReadOnly>, Partial<R.DealReadOnly>>>,
  // The list filters are query parameters of listDeals (pageSize is sent as limit).
  Expect<[Exclude<keyof DealListFilters, 'pageSize'> | 'limit'] extends [keyof ListQuery] ? true : false>,
  // Responses: what the document says comes back is what the client's methods return.
  Expect<Agree<Json<paths['/deals/{id}']['get'], 200>, Awaited<ReturnType<DealsResource['get']>>>>,
  Expect<Agree<Json<paths['/deals/{id}']['put'], 200>, Awaited<ReturnType<DealsResource['replace']>>>>,
  Expect<Agree<Json<paths['/deals']['get'], 200>[number], R.DealRead>>,
  Expect<Agree<Json<paths['/deals/countBreakdown']['get'], 200>, Awaited<ReturnType<DealsResource['countBreakdown']>>>>,
${lookups.join('\n')}
];
`;
}

test('types generated from the document match the client’s request and response types', async () => {
  const doc = (await (await createDealApiSimulator().fetch('/openapi.json')).json()) as Record<string, unknown>;
  const dir = mkdtempSync(join(tmpdir(), 'eidkit-types-'));
  try {
    writeFileSync(join(dir, 'openapi.ts'), astToString(await openapiTS(doc as never)));
    writeFileSync(join(dir, 'check.ts'), checkProgram());
    const program = ts.createProgram([join(dir, 'check.ts')], {
      strict: true,
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      skipLibCheck: true,
      types: ['node'],
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => {
      const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
      const where = d.file ? `${d.file.fileName.replace(dir, '')}:${line}` : '';
      return `${where} ${ts.flattenDiagnosticMessageText(d.messageText, '\n').slice(0, 400)}`;
    });
    expect(diagnostics).toEqual([]);
    console.log(`contract (generated types): ${LOOKUP_RESOURCES.length + 10} type agreements checked`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 300_000);
