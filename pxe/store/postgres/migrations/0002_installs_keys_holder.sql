-- node-provisioner's stores, schema version 2.

-- Install reports, one per registration name (the JSON of
-- registry.Install).
CREATE TABLE np_installs (
	name    text PRIMARY KEY,
	data    text NOT NULL
);

-- When each API token was last accepted (written at most every few
-- seconds per token).
ALTER TABLE np_tokens ADD COLUMN last_used timestamptz;

-- The id of the key the secrets are sealed with (one row): a host whose
-- key file holds another key is refused before it reads or writes one.
CREATE TABLE np_secret_key (
	id      integer PRIMARY KEY CHECK (id = 1),
	key_id  text NOT NULL
);

-- Who holds the window lock (a session advisory lock): its serving
-- process, host and address, and the server process of the session that
-- holds the lock, so that a holder whose session died reads as none.
CREATE TABLE np_window_holder (
	id          integer PRIMARY KEY CHECK (id = 1),
	backend_pid integer NOT NULL,
	pid         integer NOT NULL,
	host        text NOT NULL,
	http        text NOT NULL,
	since       timestamptz NOT NULL
);
