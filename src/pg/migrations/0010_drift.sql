-- The drift checks of each stack (the runs server's `drift:`): one row per stack holding its record — the latest
-- check's report, the history of checks, the drift episodes, the noisy marks and what the previous check read —
-- as one document changed under the row's lock, a small summary the fleet reads, and the schedule: the instance
-- whose UPDATE moves next_at (by the database's clock) runs the stack's next check.
CREATE TABLE kapps_drift_stacks (
  project       text        NOT NULL,
  stack         text        NOT NULL,
  record        jsonb       NOT NULL DEFAULT '{}'::jsonb,
  summary       jsonb,
  next_at       timestamptz,
  every_seconds integer,
  PRIMARY KEY (project, stack)
);
