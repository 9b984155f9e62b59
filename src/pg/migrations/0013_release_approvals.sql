-- The approvals that let a runs server's run apply a release, and the break glass that skipped them, kept beside
-- the other summary columns so that listing releases reads no record.
ALTER TABLE kapps_releases ADD COLUMN approvals json;
ALTER TABLE kapps_releases ADD COLUMN break_glass json;
UPDATE kapps_releases SET approvals = record->'approvals' WHERE record->'approvals' IS NOT NULL;
UPDATE kapps_releases SET break_glass = record->'breakGlass' WHERE record->'breakGlass' IS NOT NULL;
