-- The revision a rollback applied again (`kapps release rollback --to N`, a server's rollback run), kept beside the
-- other summary columns so that listing releases reads no record.
ALTER TABLE kapps_releases ADD COLUMN rollback_of integer;
UPDATE kapps_releases SET rollback_of = (record->>'rollbackOf')::integer WHERE record->>'rollbackOf' IS NOT NULL;
