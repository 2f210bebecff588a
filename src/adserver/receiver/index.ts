/** The ad call's whole receiving path over the configured parts: `createAdCallReceiver`. */
export type { AdCallOutcome, AdCallReceiver, AdCallReceiverOptions } from './receiver.js';
export { createAdCallReceiver } from './receiver.js';
