/** Shared deal rules (issue #3): schemas, enumerations, validateDeal. Used by the client and the simulator. */
export {};
