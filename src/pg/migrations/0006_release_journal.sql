-- The journal of a running release: one row per kapp state (or heartbeat) its owner saved, in order (seq), instead
-- of rewriting the whole record; the rows of one save are one INSERT. Readers apply the rows to the record; the
-- finish or an unlock writes the whole record and deletes the rows, in one transaction.
CREATE TABLE kapps_release_journal (
  project      text    NOT NULL,
  stack        text    NOT NULL,
  revision     integer NOT NULL,
  seq          bigserial,
  modified_at  text    NOT NULL,
  heartbeat_at text,
  kapp         text,
  state        json,
  PRIMARY KEY (project, stack, revision, seq)
);
