// Package pgregistry keeps node-provisioner's registrations
// ([registry.Registrations]) in PostgreSQL, for sites whose provisioner
// hosts share one store.
//
// A pending registration is a row; its pins (MACs, serial, UUID) are rows
// of a table with a UNIQUE constraint, so two pending registrations can
// never pin one machine, whichever host writes them. Consume is one
// transaction whose DELETE of the pending row is the arbiter: of any
// number of consumers racing on any number of hosts exactly one deletes
// the row, the others find it gone. A consumer killed before its commit
// leaves the registration pending; one killed after leaves it consumed,
// undelivered, to be re-armed.
package pgregistry
