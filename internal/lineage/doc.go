// Package lineage owns Interlock's side of OpenLineage
// (https://openlineage.io): reading a RunEvent that a producer (Airflow's
// provider, dbt-ol, openlineage-spark, …) posts to POST /api/v1/lineage,
// deciding which pipeline sources it matches and what sensor write it
// becomes (key, period and field map), whether it is stale against what is
// stored, and building the RunEvents Interlock posts about its own runs
// (the openlineage alert sink).
//
// It is pure: functions of the event, the pipeline config and the stored
// sensor. It never reads a store or a clock and never does I/O; the API
// and the engine load, call and commit.
package lineage
