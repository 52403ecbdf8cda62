// Package rule is the rules engine: it decides whether the declared
// preconditions of a pipeline hold, given the stored sensors and an instant.
//
// It owns the operators (exists, equals, gt, gte, lt, lte, age_lt, age_gt),
// the ALL/ANY combination, static rule checks for the config loader, and the
// one timestamp parser every age check uses. Each result carries a reason a
// person can read in `interlock explain` and in events.
//
// Everything here is a pure function of its arguments. The package must never
// read the clock (time.Now): `now` is always a parameter, so `serve`,
// `simulate` and tests reach the same verdict for the same inputs. It must
// never panic on sensor data either: sensors come from outside.
//
// The engine maps per-period sensor keys (`key#2026-03-10`) to their base key
// before calling in; this package only looks keys up.
package rule
