-- The key of the specs' HMAC (one row, made by the first kapps that needs it). A database an older kapps used may
-- have the table already: it was made on first use then.
CREATE TABLE IF NOT EXISTS kapps_spec_key (id integer PRIMARY KEY CHECK (id = 1), key text NOT NULL);
