// Package sqlstore is the row model the SQL stores share: how a record's
// fields become column values and back (the codec: times as Unix
// nanoseconds, objects and maps as canonical JSON), each record type's
// column list, scan and encode function, the generic single-row and list
// reads, and the statements of the list reads (RunList, MarkerList,
// SensorListPrefix, SensorListChanged, BackfillList, PipelineList,
// TimerListDue, TimerList) with the WHERE builder they use; both stores'
// Facts run those a FactsQuery's range reads name (RangeReads). SQLite
// and PostgreSQL differ in it only by a Dialect: its placeholders, how a
// bool is written and tested, how a sensor key is scanned and passed,
// whether the planner needs hints, the driver's "no row" error and the
// backend's name in errors.
//
// It never opens a connection or names a driver, and writes no statement
// that differs between the backends beyond its Dialect: each backend keeps
// its driver, migrations, its other queries, Commit, event shards, Expire
// and leases, and calls this package for the rows.
package sqlstore
