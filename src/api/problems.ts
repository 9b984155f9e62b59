/** Error answers: RFC 9457 problem documents (`application/problem+json`), every error of the API included. */
import * as z from 'zod';

/** An error answer (RFC 9457, `application/problem+json`). */
export const problemSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().optional(),
  instance: z.string().optional(),
  /** 400: each field at fault. */
  errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
});
export type Problem = z.infer<typeof problemSchema>;
