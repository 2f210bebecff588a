/**
 * The `imp` objects of a partner bid request: one per requested format, with what the caller said of the
 * placement (Prebid ad units, OpenRTB imps, one-call formats): banner sizes, video parameters, floor and gpid.
 * Video parameters go through a list of the OpenRTB Video fields of the partner's version, each checked for its
 * JSON type, so a partner never receives a key its OpenRTB version lacks or a value of the wrong kind.
 */
import { isInt32 } from '../../core/index.js';
import type { AdCallFormat } from '../parse/index.js';

/** The OpenRTB `Imp` this service fills in. */
export interface OrtbImp {
  id: string;
  tagid?: string;
  secure?: 0 | 1;
  banner?: { format: { w: number; h: number }[] };
  video?: OrtbVideo;
  bidfloor?: number;
  bidfloorcur?: string;
  ext?: Record<string, unknown>;
}

/**
 * The OpenRTB `Video` fields relayed: those of 2.5 and 2.6 alike, plus the ones of the partner's version only
 * (2.6's pods and `plcmt`, 2.5's `placement` and `sequence`). `mimes` is required by OpenRTB: a video without
 * it is not relayed.
 */
export interface OrtbVideo {
  mimes: string[];
  minduration?: number;
  maxduration?: number;
  protocols?: number[];
  w?: number;
  h?: number;
  startdelay?: number;
  linearity?: number;
  skip?: number;
  skipmin?: number;
  skipafter?: number;
  battr?: number[];
  maxextended?: number;
  minbitrate?: number;
  maxbitrate?: number;
  boxingallowed?: number;
  playbackmethod?: number[];
  playbackend?: number;
  delivery?: number[];
  pos?: number;
  api?: number[];
  companiontype?: number[];
  plcmt?: number;
  maxseq?: number;
  poddur?: number;
  podid?: string;
  podseq?: number;
  rqddurs?: number[];
  slotinpod?: number;
  mincpmpersec?: number;
  poddedupe?: number[];
  placement?: number;
  sequence?: number;
}

type Kind = 'int' | 'ints' | 'number' | 'strings' | 'string';
/**
 * Video fields of OpenRTB 2.5 and 2.6 alike, and their JSON kinds (companion ads and duration floors are not relayed).
 */
const VIDEO_COMMON: Partial<Record<keyof OrtbVideo, Kind>> = {
  mimes: 'strings',
  minduration: 'int',
  maxduration: 'int',
  protocols: 'ints',
  w: 'int',
  h: 'int',
  startdelay: 'int',
  linearity: 'int',
  skip: 'int',
  skipmin: 'int',
  skipafter: 'int',
  battr: 'ints',
  maxextended: 'int',
  minbitrate: 'int',
  maxbitrate: 'int',
  boxingallowed: 'int',
  playbackmethod: 'ints',
  playbackend: 'int',
  delivery: 'ints',
  pos: 'int',
  api: 'ints',
  companiontype: 'ints',
};
/** Fields OpenRTB 2.6 added (pods, `plcmt`). */
const VIDEO_26: Partial<Record<keyof OrtbVideo, Kind>> = {
  plcmt: 'int',
  maxseq: 'int',
  poddur: 'int',
  podid: 'string',
  podseq: 'int',
  rqddurs: 'ints',
  slotinpod: 'int',
  mincpmpersec: 'number',
  poddedupe: 'ints',
};
/** Fields only OpenRTB 2.5 has (2.6 replaced `placement` with `plcmt`). */
const VIDEO_25: Partial<Record<keyof OrtbVideo, Kind>> = { placement: 'int', sequence: 'int' };

/**
 * An OpenRTB integer: 32-bit, what strict decoders read (`1e21` would be written `1e+21`; docs/ad-server.md "Caps").
 */
const isInt = isInt32;
function fits(kind: Kind, v: unknown): boolean {
  switch (kind) {
    case 'int':
      return isInt(v);
    case 'number':
      return typeof v === 'number' && Number.isFinite(v);
    case 'string':
      return typeof v === 'string';
    case 'ints':
      return Array.isArray(v) && v.every(isInt);
    case 'strings':
      return Array.isArray(v) && v.every((s) => typeof s === 'string');
  }
}

/**
 * The OpenRTB video object for a partner of the given versions: the fields that version has, of the right kind,
 * with Prebid's `playerSize` read as `w` / `h` and its `context: 'instream'` as in-stream placement when the
 * caller set none. Undefined without `mimes` (a list of strings), which OpenRTB requires.
 */
export function ortbVideo(video: Record<string, unknown>, in26: boolean, in25: boolean): OrtbVideo | undefined {
  const mimes = video.mimes;
  if (!fits('strings', mimes) || !(mimes as string[]).length) return undefined;
  const out: Record<string, unknown> = {};
  const copy = (fields: Partial<Record<keyof OrtbVideo, Kind>>) => {
    for (const k in fields) {
      const kind = fields[k as keyof OrtbVideo]!;
      if (fits(kind, video[k])) out[k] = video[k];
    }
  };
  copy(VIDEO_COMMON);
  // A partner reading both versions gets only what both have.
  if (in26 && !in25) copy(VIDEO_26);
  if (in25 && !in26) copy(VIDEO_25);
  const player = video.playerSize;
  const size = Array.isArray(player) && Array.isArray(player[0]) ? (player[0] as unknown[]) : player;
  if (
    Array.isArray(size) &&
    size.length === 2 &&
    size.every((n) => isInt(n) && n > 0) &&
    out.w === undefined &&
    out.h === undefined
  ) {
    out.w = size[0];
    out.h = size[1];
  }
  if (video.context === 'instream') {
    if (in26 && !in25 && out.plcmt === undefined) out.plcmt = 1;
    if (in25 && !in26 && out.placement === undefined) out.placement = 1;
  }
  return out as unknown as OrtbVideo;
}

/** One imp per format (a call without formats still gets one, id 0), numbered from 1. */
export function ortbImps(
  formats: readonly AdCallFormat[],
  secure: 0 | 1 | undefined,
  in26: boolean,
  in25: boolean,
): OrtbImp[] {
  const list = formats.length ? formats : [{ id: 0 }];
  // Filled by push, so the array stays packed: JSON.stringify takes a slow path, element by element, for a holey one.
  const imps: OrtbImp[] = [];
  for (let i = 0; i < list.length; i++) {
    const f: AdCallFormat = list[i];
    const imp: OrtbImp = { id: String(i + 1) };
    if (f.tagId !== undefined) imp.tagid = f.tagId;
    else if (f.id) imp.tagid = String(f.id);
    if (secure) imp.secure = secure;
    if (f.sizes?.length) imp.banner = { format: f.sizes.map(([w, h]) => ({ w, h })) };
    const video = f.video && ortbVideo(f.video, in26, in25);
    if (video) imp.video = video;
    if (f.floor) {
      imp.bidfloor = f.floor.value;
      imp.bidfloorcur = f.floor.currency;
    }
    if (f.id || f.gpid !== undefined) {
      const ext: Record<string, unknown> = {};
      if (f.id) ext.formatId = f.id;
      if (f.gpid !== undefined) ext.gpid = f.gpid;
      imp.ext = ext;
    }
    imps.push(imp);
  }
  return imps;
}
