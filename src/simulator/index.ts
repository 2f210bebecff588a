/** `eidkit/simulator`: a local deal API simulator (issue #3). */
export {};
