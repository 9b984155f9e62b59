-- The commit a run of a project from a repository works at (resolved when it was submitted), and what started it
-- (a client, a webhook's push or pull request, polling). Older rows have neither: a client's run of a stack file.
ALTER TABLE kapps_runs ADD COLUMN source_commit jsonb;
ALTER TABLE kapps_runs ADD COLUMN run_trigger jsonb;
-- Where a release's spec came from (a run of a project from a repository: {repo, commit}), read by release lists.
ALTER TABLE kapps_releases ADD COLUMN source json;
