-- Approvals and run checks. A run that changes a stack requiring approvals waits in `needs-approval` holding the
-- preview its approvals bind to; it ends `rejected`, or `stale` when that preview no longer holds.
DO $$
DECLARE
  found record;
BEGIN
  -- The status check of 0003 (its name given by PostgreSQL): replaced by one that knows the new states.
  FOR found IN
    SELECT conname FROM pg_constraint
     WHERE conrelid = 'kapps_runs'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%status%'
  LOOP
    EXECUTE format('ALTER TABLE kapps_runs DROP CONSTRAINT %I', found.conname);
  END LOOP;
END
$$;
ALTER TABLE kapps_runs ADD CONSTRAINT kapps_runs_status_check CHECK (status IN
  ('queued', 'running', 'needs-approval', 'succeeded', 'failed', 'cancelled', 'errored', 'rejected', 'stale'));

-- The approvals it needs and has (the API's RunApproval; null: none apply), and its run checks' results so far.
ALTER TABLE kapps_runs ADD COLUMN approval jsonb;
ALTER TABLE kapps_runs ADD COLUMN checks jsonb NOT NULL DEFAULT '[]'::jsonb;

-- The runs waiting for approvals, by stack: claim looks here for what holds a stack's later changes back.
CREATE INDEX kapps_runs_waiting ON kapps_runs (project, stack, seq) WHERE status = 'needs-approval';

-- The preview document a run's approvals bind to (`GET /runs/{id}/preview`), kept with the run.
CREATE TABLE kapps_run_previews (
  run_id       text PRIMARY KEY REFERENCES kapps_runs (id) ON DELETE CASCADE,
  content_type text NOT NULL,
  body         text NOT NULL
);
