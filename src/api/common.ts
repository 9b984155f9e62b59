/** Schemas every resource uses: names, run ids, the owner of a release, who the caller is. */
import * as z from 'zod';
import { ROLES } from './constants.js';

/** A project or stack name as clients give it: a name, never a path. */
export const nameSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a name: letters, digits, ".", "_" and "-", not starting with "." or "-"');

/** A run id: opaque to clients. */
export const runIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_-]+$/);

/** The process that runs (or ran) a release. */
export const releaseOwnerSchema = z.object({
  user: z.string(),
  machineUser: z.string().optional(),
  host: z.string(),
  pid: z.number().int().optional(),
});

/** `GET /api/v1/whoami`: the caller's token name and role (a page shows only the buttons the role allows). */
export const whoamiSchema = z.object({
  name: z.string(),
  role: z.enum(ROLES),
  /** The projects the token is limited to (`shop`, `team-*`); absent when it reaches every project. */
  projects: z.array(z.string()).optional(),
});
export type Whoami = z.infer<typeof whoamiSchema>;
