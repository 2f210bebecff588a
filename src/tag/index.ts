// Placeholder entry: the tag core lands with issue #2.
export {};
