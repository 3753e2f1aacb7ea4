-- node-provisioner's stores, schema version 4.

-- The site's window (the desired state each provisioner host follows):
-- one row at most, its JSON in data (sitewindow.Window), its deadline
-- beside it for the conditional open.
CREATE TABLE np_site_window (
	id       integer PRIMARY KEY CHECK (id = 1),
	deadline timestamptz NOT NULL,
	data     text NOT NULL
);

-- Each provisioner host following the window, as it last advertised
-- itself (sitewindow.Host).
CREATE TABLE np_site_hosts (
	name    text PRIMARY KEY,
	seen    timestamptz NOT NULL,
	data    text NOT NULL
);

-- Every change of the window is notified to the hosts that listen.
CREATE FUNCTION np_site_window_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('np_site_window', '');
	RETURN NULL;
END
$$;
CREATE TRIGGER np_site_window_changed AFTER INSERT OR UPDATE OR DELETE ON np_site_window
	FOR EACH STATEMENT EXECUTE FUNCTION np_site_window_notify();

-- The per-host window record and the cross-host window lock of version
-- 2 were never used: a window's serving process is recorded in its
-- host's state folder, and every host serves the site's window.
DROP TABLE np_window;
DROP TABLE np_window_holder;
