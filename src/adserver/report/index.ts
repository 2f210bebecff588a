/** What the ad server counts: the providers of each call, its log, the report in memory or in Redis, DMP ids. */
export type {
  JsonLinesLogSink,
  JsonLinesLogSinkOptions,
  ProviderHit,
  ProviderLogRecord,
  ProviderLogSink,
} from './providers.js';
export {
  providerHits,
  providerIdsOf,
  providerLogRecord,
  logProviders,
  memoryLogSink,
  jsonLinesLogSink,
} from './providers.js';
export type {
  Report,
  ReportJson,
  ReportRow,
  ReportOptions,
  ReportGranularity,
  ReportReadOptions,
  ExtendedIdsCount,
  ForwardingCount,
  WithWithout,
} from './report.js';
export { createReport } from './report.js';
export type { RedisReport, RedisReportOptions, RedisReportMetrics } from './redis-report.js';
export { createRedisReport } from './redis-report.js';
export type { DmpConfig } from './dmp.js';
export { DmpConfigError, parseDmpConfig, dmpIds } from './dmp.js';
