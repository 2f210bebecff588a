/** `eidkit/adserver`: the receiving side of ad calls (issue #4). */
export {};
