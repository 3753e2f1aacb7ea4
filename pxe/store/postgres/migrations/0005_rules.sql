-- node-provisioner's stores, schema version 5.

-- The enrolment rules: one row, the rule set's state as JSON
-- (enrol.State: the rules, their counters and the holds of enrolments
-- under way). An update reads it FOR UPDATE and writes it back in one
-- transaction, so that enrolments racing from several hosts are
-- applied one at a time and never give one name twice.
CREATE TABLE np_rules (
	id    integer PRIMARY KEY CHECK (id = 1),
	data  text NOT NULL
);
INSERT INTO np_rules (id, data) VALUES (1, '{"rules":[]}');
