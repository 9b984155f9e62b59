/**
 * The runs server's public contract: the zod schemas that validate requests and describe responses (the OpenAPI
 * document at `/api/v1/openapi.json` is generated from them), one file per resource, and the constants
 * (./constants.ts, without zod). The server, the CLI client (`kapps runs …`, `--server`) and the web page rely on
 * these shapes: add fields, never rename or remove them.
 */
export * from './common.js';
export * from './constants.js';
export * from './events.js';
export * from './problems.js';
export * from './projects.js';
export * from './releases.js';
export * from './runs.js';
export * from './notifications.js';
export * from './drift.js';
export * from './approvals.js';
