-- Webhook deliveries already acted on (GitHub's X-GitHub-Delivery, GitLab's X-Gitlab-Event-UUID, prefixed by the
-- host), so a redelivery queues nothing; pruned by age and count. And one polling claim per project: the instance
-- whose UPDATE moves next_at polls the branch this interval; last_sha is where the branch was at the last poll.
CREATE TABLE kapps_webhook_deliveries (
  id text PRIMARY KEY,
  received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX kapps_webhook_deliveries_received ON kapps_webhook_deliveries (received_at);
CREATE TABLE kapps_poll_claims (
  project text PRIMARY KEY,
  next_at timestamptz NOT NULL,
  last_sha text
);
