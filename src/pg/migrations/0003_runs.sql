-- The runs of `kapps serve`, their feeds (events, log lines, status changes) and their results.
CREATE TABLE kapps_runs (
  id                text        PRIMARY KEY,
  seq               bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
  type              text        NOT NULL,
  project           text        NOT NULL,
  stack             text        NOT NULL,
  status            text        NOT NULL CHECK (status IN
                      ('queued', 'running', 'succeeded', 'failed', 'cancelled', 'errored')),
  created_by        text        NOT NULL,
  created_at        timestamptz NOT NULL,
  started_at        timestamptz,
  finished_at       timestamptz,
  release_revision  integer,
  error             text,
  options           jsonb       NOT NULL,
  instance          text,
  lease_until       timestamptz,
  cancel_requested  boolean     NOT NULL DEFAULT false,
  idempotency_key   text,
  feed_seq          bigint      NOT NULL DEFAULT 0,
  log_bytes         bigint      NOT NULL DEFAULT 0
);

-- The database's guarantee: one running run per stack.
CREATE UNIQUE INDEX kapps_runs_one_running ON kapps_runs (project, stack) WHERE status = 'running';

CREATE UNIQUE INDEX kapps_runs_idempotency ON kapps_runs (created_by, idempotency_key)
  WHERE idempotency_key IS NOT NULL;

CREATE INDEX kapps_runs_queued ON kapps_runs (seq) WHERE status = 'queued';

CREATE INDEX kapps_runs_stack ON kapps_runs (project, stack, seq);

CREATE INDEX kapps_runs_lease ON kapps_runs (lease_until) WHERE status = 'running';

CREATE TABLE kapps_run_feed (
  run_id     text    NOT NULL REFERENCES kapps_runs (id) ON DELETE CASCADE,
  seq        bigint  NOT NULL,
  kind       text    NOT NULL CHECK (kind IN ('run-event', 'log', 'status')),
  data       jsonb   NOT NULL,
  log_offset bigint,
  log_length integer,
  PRIMARY KEY (run_id, seq)
);

CREATE INDEX kapps_run_feed_log ON kapps_run_feed (run_id, log_offset) WHERE log_offset IS NOT NULL;

CREATE TABLE kapps_run_results (
  run_id       text PRIMARY KEY REFERENCES kapps_runs (id) ON DELETE CASCADE,
  content_type text NOT NULL,
  body         text NOT NULL
);
