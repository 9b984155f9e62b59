/**
 * The HTTP API of the runs server (fastify): every route of docs/server.md under `/api/v1`, one plugin per resource
 * (src/server/http/routes/), the OpenAPI document generated from the same zod schemas that validate the requests
 * (src/api/), `/healthz` and `/readyz`, and the web page's files when they are built. Every error is a problem
 * document (`application/problem+json`, src/server/http/errors.ts), never a stack trace.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { jsonSchemaTransform, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { AppContext, RouteContext } from './context.js';
import { problemServerOptions, registerProblemHandler } from './errors.js';
import { registerAuthentication, registerRequestChecks } from './hooks.js';
import { registerLingeringClose } from './linger.js';
import { approvalRoutes } from './routes/approvals.js';
import { driftRoutes } from './routes/drift.js';
import { hookRoutes } from './routes/hooks.js';
import { metaRoutes } from './routes/meta.js';
import { notificationRoutes } from './routes/notifications.js';
import { projectRoutes } from './routes/projects.js';
import { releaseRoutes } from './routes/releases.js';
import { runLogRoutes } from './routes/run-logs.js';
import { runRoutes } from './routes/runs.js';
import { registerWebFiles } from './web.js';

export async function buildApp(context: AppContext): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, bodyLimit: 1 << 20, ...problemServerOptions });
  // Event streams end when the server closes (else a client following a queued run would hold the stop up).
  const closing = new AbortController();
  app.addHook('preClose', (done) => {
    closing.abort();
    done();
  });
  const ctx: RouteContext = { ...context, closing: closing.signal };
  registerLingeringClose(app);
  registerRequestChecks(app, ctx);
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'kapps runs server', version: '1' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
  registerProblemHandler(app);
  registerAuthentication(app, ctx);

  await app.register(metaRoutes(ctx));
  await app.register(runRoutes(ctx));
  await app.register(runLogRoutes(ctx));
  await app.register(approvalRoutes(ctx));
  await app.register(notificationRoutes(ctx));
  await app.register(projectRoutes(ctx));
  await app.register(releaseRoutes(ctx));
  await app.register(driftRoutes(ctx));
  await app.register(hookRoutes(ctx));
  if (ctx.webRoot) await registerWebFiles(app, ctx.webRoot);
  return app;
}
