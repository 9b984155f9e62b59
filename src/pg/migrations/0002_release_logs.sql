-- The log of each release: one row per line, keyed by its byte offset in the log's NDJSON form.
CREATE TABLE kapps_release_logs (
  project     text    NOT NULL,
  stack       text    NOT NULL,
  revision    integer NOT NULL,
  byte_offset bigint  NOT NULL,
  byte_end    bigint  NOT NULL,
  line        text    NOT NULL,
  PRIMARY KEY (project, stack, revision, byte_offset)
);
