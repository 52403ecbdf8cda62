// Package pipeline owns Interlock's configuration model and its strict
// loaders: pipeline documents (pipelines/*.yaml), named calendars
// (calendars/*.yaml) and the process settings (interlock.yaml).
//
// Loading fails closed. Every field is decoded strictly (internal/confdec),
// every enum, operator, cron expression, time zone, deadline, duration and
// budget is parsed and range-checked at load, and every problem of a file
// is reported at once as "file:line: field.path: message". What leaves
// this package is typed (rule.Rule, schedule.Cron, *time.Location,
// time.Duration, schedule.DaySet); the one open-ended part, a job's
// type-specific config, has been checked against that job type's schema
// (jobschema.go) and is read through typed accessors (JobConfig).
//
// The package never reads the clock or the environment: checks that
// depend on "now" or on environment values belong to the engine and the
// trigger adapters.
//
// Decisions where the specs are silent (each enforced where it is made):
//   - null counts as absent: `maxCodeRetries: ~` is the default, not 0.
//   - a pipeline needs schedule.cron, schedule.trigger or
//     schedule.include, or it could never start; cron and include
//     exclude each other.
//   - a ":MM" deadline (SLA or trigger) needs hourly periods: it is an
//     error with a once-a-day cron or an inclusion calendar; a
//     trigger-only pipeline may get hourly periods from its sensors, so
//     it is accepted there. "HH:MM" is accepted everywhere.
//   - sla needs deadline or maxDuration; expectedDuration is optional
//     (without it an absolute deadline has no warning timer).
//   - postRun.evaluation (parsed but unused by the reference) is refused,
//     so nobody believes it does something.
//   - job.pollWindow and the reference's job.jobPollWindowSeconds are
//     both accepted, not together; jobPollWindowSeconds: 0 is the default.
//   - durations that bound waits are capped at 7d (24h for poll windows,
//     sla.maxDuration and job.config timeouts): longer is a mistake.
//   - secrets: a header whose name marks a credential (Authorization,
//     *token*, *secret*, …) must take its value from ${env:NAME}; a URL
//     must not carry an inline password.
//   - template variables are checked in every job.config string; "$${" is
//     a literal "${", any other "$" is literal.
package pipeline

// Time zones are resolved at load with time.LoadLocation; embedding the
// tz database makes that independent of the host's /usr/share/zoneinfo
// (scratch containers, Lambda), so a config valid on a laptop is valid in
// production.
import _ "time/tzdata"
