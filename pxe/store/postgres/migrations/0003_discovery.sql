-- node-provisioner's stores, schema version 3.

-- The discovery inbox: one row per discovered machine, its entry's JSON
-- (discovery.Record), at most the inbox's bound of them. A post locks the
-- table against other writers while it applies the inbox's rule, so that
-- posts racing from several hosts keep one entry per machine and the
-- bound.
CREATE TABLE np_discovered (
	id          text PRIMARY KEY,
	last_seen   timestamptz NOT NULL,
	data        text NOT NULL
);
