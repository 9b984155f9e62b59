-- The outbox of outbound notifications: one row per delivery (a run's event to one `notify:` target), with the exact
-- body it sends, the name of the environment variable of its secret (never the secret), its attempts and the lease
-- of the instance sending it. A run's deliveries go with the run.
CREATE TABLE kapps_notifications (
  id              text        PRIMARY KEY,
  seq             bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
  run_id          text        NOT NULL REFERENCES kapps_runs (id) ON DELETE CASCADE,
  event           text        NOT NULL,
  url             text        NOT NULL,
  secret_env      text        NOT NULL,
  body            text        NOT NULL,
  state           text        NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        jsonb       NOT NULL DEFAULT '[]'::jsonb,
  next_attempt_at timestamptz,
  instance        text,
  lease_until     timestamptz,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE INDEX kapps_notifications_run ON kapps_notifications (run_id, seq);

CREATE INDEX kapps_notifications_due ON kapps_notifications (next_attempt_at) WHERE state = 'pending';
