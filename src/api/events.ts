/** A run's log (`GET /api/v1/runs/{id}/logs`) and the data of its event stream (`GET /api/v1/runs/{id}/events`). */
import * as z from 'zod';

/** One line of a run's log: the plain reporter's lines (`stream: 'kapps'`) and every line a step printed. */
export const logLineSchema = z.object({
  time: z.string(),
  stream: z.enum(['kapps', 'stdout', 'stderr']),
  kapp: z.string().optional(),
  phase: z.string().optional(),
  step: z.string().optional(),
  text: z.string(),
});
export type LogLine = z.infer<typeof logLineSchema>;

/** `GET /api/v1/runs/{id}/logs?offset=N`: the log's lines from byte offset N of its NDJSON form. */
export const logChunkSchema = z.object({
  offset: z.number().int(),
  nextOffset: z.number().int(),
  lines: z.array(logLineSchema),
  /** The run is finished and nothing follows nextOffset. */
  complete: z.boolean(),
});
export type LogChunk = z.infer<typeof logChunkSchema>;
