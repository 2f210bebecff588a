/**
 * The single-deal operations (docs/deal-rules.md#endpoints) as the OpenAPI document states them: read, create (or
 * copy), replace and delete one of the caller's deals, and attach or detach its domain list. Their handlers are in
 * ./deals.ts.
 */
import type { OperationDef, ParameterDef, ResponseDef } from './operation.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const ID: ParameterDef = {
  name: 'id',
  in: 'path',
  required: true,
  description: 'the service-side deal id (field id), not dealId',
  schema: { type: 'integer', minimum: 1 },
};
const NOT_FOUND: ResponseDef = {
  description: 'no such deal of the caller’s company (other companies’ deals included)',
  body: { ref: 'Error' },
};
const DSP_REFUSED: ResponseDef = {
  description: 'DSP callers cannot use domain lists (code FORBIDDEN_FOR_DSP)',
  body: { ref: 'Error' },
};
const REFUSED: ResponseDef = {
  description: 'broken JSON, or a field or rule broken: each problem in errors, with its rule (x-rules) if any',
  body: { ref: 'ValidationError' },
};
const JSON_BODY = 'The body is read as JSON whatever its Content-Type (text/plain included).';
const quotaSpent = (what: string): ResponseDef => ({
  description: `the daily quota of ${what} is spent (Retry-After: seconds to the next UTC midnight), or an injected RATE_LIMITED`,
  body: { ref: 'Error' },
  headers: ['Retry-After'],
});

/** GET /deals/{id}. */
export const GET_DEAL: OperationDef = {
  operationId: 'getDeal',
  method: 'get',
  path: '/deals/{id}',
  tag: 'deals',
  auth: 'user',
  summary: 'Read one deal',
  description: 'One deal of the caller’s company, in the read shape.',
  parameters: [ID],
  responses: { 200: { description: 'the deal', body: { ref: 'DealRead' } }, 404: NOT_FOUND },
};

/** POST /deals. */
export const CREATE_DEAL: OperationDef = {
  operationId: 'createDeal',
  method: 'post',
  path: '/deals',
  tag: 'deals',
  auth: 'user',
  summary: 'Create a deal, or a copy of one',
  description:
    'Creates a deal (15 per company per UTC day). With X-CopyOfDealId, the body’s fields override the copied ' +
    'deal’s.',
  parameters: [
    {
      name: 'X-CopyOfDealId',
      in: 'header',
      required: false,
      schema: { type: 'integer', minimum: 1 },
      description: 'create as a copy of this deal, as it is; the body may then hold any subset of fields to change',
    },
  ],
  body: {
    required: true,
    description: `A complete deal; with X-CopyOfDealId, any subset of its fields (DealCopyOverrides). ${JSON_BODY}`,
    schema: { anyOf: [ref('DealWrite'), ref('DealCopyOverrides')] },
  },
  responses: {
    201: { description: 'the new deal', body: { ref: 'DealRead' }, headers: ['Location', 'X-HistoryId', 'Warning'] },
    400: REFUSED,
    403: { description: 'DSP callers cannot set domainListId (code FORBIDDEN_FOR_DSP)', body: { ref: 'Error' } },
    404: { description: 'X-CopyOfDealId names no deal of the caller’s company', body: { ref: 'ValidationError' } },
    429: quotaSpent('creations'),
  },
};

/** PUT /deals/{id}. */
export const REPLACE_DEAL: OperationDef = {
  operationId: 'replaceDeal',
  method: 'put',
  path: '/deals/{id}',
  tag: 'deals',
  auth: 'user',
  summary: 'Replace a deal: omitted fields reset to their defaults',
  description:
    'Full replacement (500 per company per UTC day). Read-only fields may be sent back and are ignored; id and ' +
    'dealId, when sent, must be the deal’s own.',
  parameters: [ID],
  body: { required: true, description: `The whole deal. ${JSON_BODY}`, schema: ref('DealReplace') },
  responses: {
    200: { description: 'the replaced deal', body: { ref: 'DealRead' }, headers: ['X-HistoryId', 'Warning'] },
    400: REFUSED,
    403: { description: 'DSP callers cannot change domainListId (code FORBIDDEN_FOR_DSP)', body: { ref: 'Error' } },
    404: NOT_FOUND,
    429: quotaSpent('updates'),
  },
};

/** DELETE /deals/{id}. */
export const DELETE_DEAL: OperationDef = {
  operationId: 'deleteDeal',
  method: 'delete',
  path: '/deals/{id}',
  tag: 'deals',
  auth: 'user',
  summary: 'Delete a deal',
  description: 'Deletes one deal of the caller’s company.',
  parameters: [ID],
  responses: { 204: { description: 'deleted' }, 404: NOT_FOUND },
};

/** POST /deals/{id}/domainlists. */
export const ATTACH_DOMAIN_LIST: OperationDef = {
  operationId: 'attachDomainList',
  method: 'post',
  path: '/deals/{id}/domainlists',
  tag: 'domain lists',
  auth: 'user',
  summary: 'Attach a domain list to a deal',
  description: 'Sets the deal’s domainListId; refused to DSP callers.',
  parameters: [ID],
  body: { required: true, description: `The list to attach. ${JSON_BODY}`, schema: ref('DomainListRef') },
  responses: { 204: { description: 'attached' }, 400: REFUSED, 403: DSP_REFUSED, 404: NOT_FOUND },
};

/** DELETE /deals/{id}/domainlists. */
export const DETACH_DOMAIN_LIST: OperationDef = {
  operationId: 'detachDomainList',
  method: 'delete',
  path: '/deals/{id}/domainlists',
  tag: 'domain lists',
  auth: 'user',
  summary: 'Detach the deal’s domain list',
  description:
    'Clears the deal’s domainListId; refused to DSP callers. An optional body names the list expected attached.',
  parameters: [ID],
  body: { required: false, description: `Optional: the attached list. ${JSON_BODY}`, schema: ref('DomainListRef') },
  responses: {
    204: { description: 'detached (or none was attached)' },
    400: REFUSED,
    403: DSP_REFUSED,
    404: NOT_FOUND,
  },
};
