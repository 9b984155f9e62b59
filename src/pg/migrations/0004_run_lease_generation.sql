-- The generation of the owner's lease: each claim adds one; the owner's writes carry it.
ALTER TABLE kapps_runs ADD COLUMN lease_generation bigint NOT NULL DEFAULT 0;
