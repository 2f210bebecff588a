/**
 * A bounded reader of the GPP header (docs/ad-server.md "Forwarding policy", consent caps): the section ids, which
 * the US section reader (gpp-us.ts) and the TC reader then read.
 *
 * Why our own: the header lists section ids as Fibonacci-coded ranges, and the IAB library expands each range id by
 * id before it checks the ids against the sections present, so a 21-character string naming ids 1 to 10^9 makes V8
 * abort the process (an invalid array size, which no try/catch catches). This reader decodes the header in one pass,
 * stops at the first value over a cap, and checks that the ids match the sections.
 */
import { bitReader, OutOfBits } from './bits.js';
import type { BitReader } from './bits.js';

/** Hard caps on what a GPP string may claim; a string over one is unreadable (docs/ad-server.md). */
export const GPP_CAPS = {
  /** Characters of the whole string (an ad call's URL is under 8,000). */
  maxLength: 8_000,
  /** Characters of the header (real headers are under 20; 8 sections with ids to 255 need under 40). */
  maxHeaderLength: 256,
  /** Highest section id (ids assigned today end at 27, the US states included). */
  maxSectionId: 255,
  /** Sections in one string (strings carry one to three; 24 are defined today). */
  maxSections: 8,
} as const;

/** Thrown inside the reader; {@link readGppHeader} returns it as a problem. */
class Unreadable extends Error {}

const overCap = (what: string, cap: number) => new Unreadable(`SectionIds: ${what}, over the cap of ${cap}`);

/** A Fibonacci-coded integer (weights 1, 2, 3, 5, …; a 1 after a 1 ends it), refused once it passes `cap`. */
function fibonacci(r: BitReader, cap: number): number {
  let value = 0;
  let a = 1;
  let b = 2;
  let previous = false;
  for (;;) {
    const bit = r.bit();
    if (bit && previous) return value;
    if (bit) value += a;
    // No value over the cap can end in time: stop reading at the first weight past it.
    if (value > cap || (!bit && a > cap)) throw overCap('a section id', cap);
    previous = bit;
    [a, b] = [b, a + b];
  }
}

/**
 * The section ids of a GPP string's header (`DB…~…`), or why the string is not read; `undefined` for a string
 * without a GPP header (the IAB library reads a bare TC string `C…` as its EU section, and refuses anything else).
 * Never throws; linear in the string's length.
 * @example readGppHeader('DBABzYA~1YNN') // { sectionIds: [6] }
 */
export function readGppHeader(gpp: string): { sectionIds: number[] } | { problem: string } | undefined {
  if (gpp.length > GPP_CAPS.maxLength) {
    return { problem: `the GPP string has ${gpp.length} characters, over the cap of ${GPP_CAPS.maxLength}` };
  }
  if (!gpp.startsWith('DB')) return undefined;
  const tilde = gpp.indexOf('~');
  // The library reads the header's first '.'-separated part only.
  const header = gpp.slice(0, tilde < 0 ? gpp.length : tilde).split('.')[0];
  if (header.length > GPP_CAPS.maxHeaderLength) {
    return { problem: `the GPP header has ${header.length} characters, over the cap of ${GPP_CAPS.maxHeaderLength}` };
  }
  const r = bitReader(header);
  if (!r) return { problem: 'the GPP header is not Base64url text' };
  const sectionIds: number[] = [];
  try {
    r.skip(12); // type 3 and version 1: the "DB" checked above
    const entries = r.int(12);
    if (entries > GPP_CAPS.maxSections) throw overCap(`${entries} entries`, GPP_CAPS.maxSections);
    let last = 0;
    for (let i = 0; i < entries; i++) {
      const isRange = r.bit();
      const from = last + fibonacci(r, GPP_CAPS.maxSectionId);
      const to = isRange ? from + fibonacci(r, GPP_CAPS.maxSectionId) : from;
      if (to > GPP_CAPS.maxSectionId) throw overCap(`section id ${to}`, GPP_CAPS.maxSectionId);
      const count = sectionIds.length + to - from + 1;
      if (count > GPP_CAPS.maxSections) throw overCap(`${count} sections`, GPP_CAPS.maxSections);
      for (let id = from; id <= to; id++) sectionIds.push(id);
      last = to;
    }
  } catch (e) {
    if (e instanceof Unreadable) return { problem: `the GPP header's ${e.message}` };
    if (e instanceof OutOfBits) return { problem: "the GPP header's SectionIds end before their last entry" };
    throw e;
  }
  let sections = 0;
  for (let i = tilde; i >= 0; i = gpp.indexOf('~', i + 1)) sections++;
  if (sections !== sectionIds.length) {
    return { problem: `the GPP header's SectionIds list ${sectionIds.length} sections, the string holds ${sections}` };
  }
  return { sectionIds };
}
