-- node-provisioner's stores, schema version 1.

-- Registrations: a pending one by name, its pins unique among pending
-- registrations (a pin is its kind and its value as compared: MACs
-- normalised, serials and UUIDs trimmed and in lower case).
CREATE TABLE np_registrations_pending (
	name    text PRIMARY KEY,
	data    text NOT NULL
);
CREATE TABLE np_registration_pins (
	kind    text NOT NULL,
	value   text NOT NULL,
	name    text NOT NULL REFERENCES np_registrations_pending (name) ON DELETE CASCADE,
	CONSTRAINT np_registration_pins_unique UNIQUE (kind, value)
);
CREATE INDEX np_registration_pins_name ON np_registration_pins (name);
-- A consumed registration by name (its record in data); a name can be
-- pending again beside its consumed record.
CREATE TABLE np_registrations_consumed (
	name    text PRIMARY KEY,
	data    text NOT NULL
);

-- Events, in the order of their ids (appends are serialised, so ids are
-- committed in order).
CREATE TABLE np_events (
	id      bigserial PRIMARY KEY,
	data    text NOT NULL,
	size    integer NOT NULL
);
-- The bytes the events hold, kept by the appends (one row).
CREATE TABLE np_events_total (
	id      integer PRIMARY KEY CHECK (id = 1),
	bytes   bigint NOT NULL
);
INSERT INTO np_events_total VALUES (1, 0);

-- API tokens: hashes only.
CREATE TABLE np_tokens (
	name    text PRIMARY KEY,
	hash    text NOT NULL UNIQUE,
	data    text NOT NULL
);

-- Idempotency records by the hash of their key.
CREATE TABLE np_replies (
	key_hash text PRIMARY KEY,
	data     text NOT NULL,
	at       timestamptz NOT NULL
);

-- The window's record: one row at most.
CREATE TABLE np_window (
	id      integer PRIMARY KEY CHECK (id = 1),
	pid     integer NOT NULL,
	data    text NOT NULL
);

-- Secrets, sealed with AES-256-GCM under a key kept on each host (never
-- here); key_id names the key (a hash of it) so a wrong one is told.
CREATE TABLE np_secrets (
	kind    text NOT NULL,
	name    text NOT NULL,
	key_id  text NOT NULL,
	sealed  bytea NOT NULL,
	PRIMARY KEY (kind, name)
);
