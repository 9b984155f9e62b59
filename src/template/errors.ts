/** Errors of the template engine: the only error type it throws. */

export type TemplatePhase = 'parse' | 'exec';

/**
 * A parse or execution error, with Go's message text in `message`
 * (e.g. `template: NAME:1:3: executing "NAME" at <len .nil>: error calling len: len of nil pointer`).
 */
export class TemplateError extends Error {
  constructor(
    message: string,
    readonly phase: TemplatePhase,
    /** Name of the template (Go's `template: NAME:`). */
    readonly templateName: string,
    /** 1-based line of the offending action in the template text. */
    readonly line: number,
    /** 1-based column (in bytes, as Go counts) of the offending action. */
    readonly column: number,
  ) {
    super(message);
    this.name = 'TemplateError';
  }
}
