/**
 * Errors as the API answers them: RFC 9457 problem documents (`application/problem+json`), with a `type` URL per
 * kind of problem. Handlers throw `HttpProblem`; the app's error handler writes it (and turns anything else into a
 * 500 `internal` without its stack).
 */
import { PROBLEM_TYPE_PREFIX, type Problem } from '../../api/index.js';

export const PROBLEM_SLUGS = {
  400: 'invalid-request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not-found',
  409: 'conflict',
  413: 'too-large',
  415: 'unsupported-media-type',
  421: 'misdirected',
  429: 'queue-full',
  500: 'internal',
  503: 'unavailable',
} as const;

export type ProblemSlug =
  | (typeof PROBLEM_SLUGS)[keyof typeof PROBLEM_SLUGS]
  | 'not-finished'
  | 'stale-preview'
  | 'cross-origin'
  | 'rate-limited';

const TITLES: Record<ProblemSlug, string> = {
  'invalid-request': 'The request is not valid',
  unauthorized: 'A valid bearer token is needed',
  forbidden: 'The token’s role does not allow this',
  'not-found': 'Not found',
  conflict: 'Conflict',
  'not-finished': 'The run is not finished',
  'stale-preview': 'The preview is stale',
  'queue-full': 'The queue is full',
  'too-large': 'The request is too large',
  'unsupported-media-type': 'Send JSON or no body',
  misdirected: 'This server does not answer that host name',
  'cross-origin': 'A request from another origin may not change anything',
  'rate-limited': 'Too many requests',
  internal: 'Internal server error',
  unavailable: 'The service is unavailable',
};

export function problemType(slug: ProblemSlug): string {
  return `${PROBLEM_TYPE_PREFIX}${slug}`;
}

/** An error answer a handler throws. */
export class HttpProblem extends Error {
  readonly status: number;
  readonly slug: ProblemSlug;
  readonly errors: Problem['errors'];
  readonly headers: Record<string, string>;
  constructor(
    status: number,
    slug: ProblemSlug,
    detail: string,
    extra: { errors?: Problem['errors']; headers?: Record<string, string> } = {},
  ) {
    super(detail);
    this.name = 'HttpProblem';
    this.status = status;
    this.slug = slug;
    this.errors = extra.errors;
    this.headers = extra.headers ?? {};
  }

  toProblem(instance?: string): Problem {
    return {
      type: problemType(this.slug),
      title: TITLES[this.slug],
      status: this.status,
      detail: this.message,
      ...(instance !== undefined ? { instance } : {}),
      ...(this.errors ? { errors: this.errors } : {}),
    };
  }
}

export const notFound = (detail: string): HttpProblem => new HttpProblem(404, 'not-found', detail);
export const invalid = (field: string, message: string): HttpProblem =>
  new HttpProblem(400, 'invalid-request', `${field}: ${message}`, { errors: [{ field, message }] });

/** The `Retry-After` (seconds) of a 503: the backend does not answer, or the server is stopping. */
export const RETRY_AFTER_SECONDS = 5;

/** Requests meeting the backend unavailable less than this apart (ms) belong to one outage, said once. */
export const OUTAGE_GAP_MS = 30_000;

/** The backend failed transiently (a restart, a refused connection): 503 `unavailable` with `Retry-After`. */
export const backendUnavailable = (): HttpProblem =>
  new HttpProblem(503, 'unavailable', 'the backend does not answer for now; try again later', {
    headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
  });
