// Package sqlstore is the row model the SQL stores share: how a record's
// fields become column values and back (the codec: times as Unix
// nanoseconds, objects and maps as canonical JSON), each record type's
// column list, scan and encode function, and the generic single-row and
// list reads. SQLite and PostgreSQL differ in it only by a Dialect: how a
// bool is written, how a sensor key column is scanned, the driver's "no
// row" error and the backend's name in errors.
//
// It never opens a connection, names a driver or writes SQL beyond column
// lists: each backend keeps its driver, migrations, queries, Commit, event
// shards, Expire and leases, and calls this package for the rows.
package sqlstore
