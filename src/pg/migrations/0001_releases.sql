-- The releases of every stack: the whole record as json (text, so key order and numbers are kept exactly as
-- written), the metadata `kapps release list` shows in columns. The primary key refuses a second release with the
-- same revision.
CREATE TABLE kapps_releases (
  project      text        NOT NULL,
  stack        text        NOT NULL,
  revision     integer     NOT NULL CHECK (revision > 0),
  operation    text        NOT NULL,
  phase        text        NOT NULL,
  kapps_count  integer     NOT NULL,
  owner        json        NOT NULL,
  unlocked     json,
  created_at   timestamptz NOT NULL,
  modified_at  timestamptz NOT NULL,
  finished_at  timestamptz,
  heartbeat_at timestamptz NOT NULL,
  record       json        NOT NULL,
  PRIMARY KEY (project, stack, revision)
);
