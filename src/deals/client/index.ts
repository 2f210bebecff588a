/** The deal API client (issue #6). */
export {};
