/**
 * Values as the executor sees them. Besides Go data (`GoValue`) there is `INVALID`, Go's zero reflect.Value: what a
 * missing map key or nil data evaluates to (it prints `<no value>`). `null` is a nil interface value (a present key
 * whose value is nil, or a nil list element); a pipeline turns it into `INVALID`, as Go does.
 */
import type { GoValue } from '../go-value/value.js';

/** Go's invalid (zero) reflect.Value. */
export const INVALID: unique symbol = Symbol('invalid');

/** A value flowing through the executor. */
export type Val = GoValue | typeof INVALID;

/** Marker for "no piped value" (Go's missingVal). */
export const MISSING: unique symbol = Symbol('missing');
