// Package api is the HTTP API of `interlock serve` (product spec §5): JSON
// over HTTP, versioned under /v1, bearer tokens with roles, Prometheus
// metrics.
//
// It owns request decoding, authentication, the mapping of engine errors
// to HTTP statuses and the response shapes. It decides nothing: every
// write goes through the engine, which commits it durably before the
// handler answers, and every read comes from the engine's store. It never
// reads the wall clock for anything but measuring latency (see stopwatch),
// never echoes a token, and never lets a panic take the process down.
//
// Routes (role needed; "open" needs none):
//
//	PUT  /v1/pipelines/{id}/sensors/{key}  writer  sensor body, flat or {"data": {...}}
//	GET  /v1/pipelines/{id}/sensors        reader
//	GET  /v1/pipelines                     reader  every pipeline, by id
//	GET  /v1/pipelines/{id}                reader  current period, its run, SLA, next tick
//	GET  /v1/pipelines/{id}/runs           reader  ?period= ?limit= (newest period first)
//	GET  /v1/pipelines/{id}/explain        reader  ?period= (default: the current one)
//	POST /v1/pipelines/{id}/reruns         admin   {"period", "reason"}
//	POST /v1/pipelines/{id}/pause          admin   {"until"?: RFC 3339}
//	POST /v1/pipelines/{id}/resume         admin
//	GET  /v1/events                        reader  ?pipeline= ?type=… ?since= ?after= ?limit=
//	GET  /v1/alerts/dead-letters           reader  alerts no sink accepted
//	GET  /v1/events/stream                 reader  Server-Sent Events: ?pipeline= ?type=… ?level=… ?since= ?after=, Last-Event-ID
//	GET  /v1/health                        reader  watchdog, alert sinks, refused files (HealthReport)
//	GET  /, /ui/…                          reader  the dashboard (Options.Dashboard); 303 to /sign-in without a session
//	GET  /ui/assets/…                      open    the dashboard's CSS and JS
//	GET  /sign-in, POST /sign-in           open    the sign-in form; a token in, a session cookie out
//	POST /sign-out                         open    deletes the session cookie
//	GET  /healthz                          open
//	GET  /readyz                           open    503 with the reason when not ready
//	GET  /metrics                          reader  open when no token is configured
//
// A caller is named by its bearer token or, for a browser, by the session
// cookie it got at /sign-in (session.go: stateless, signed with a key
// derived from the token's secret). A state-changing request made with the
// cookie — or, without tokens, made by a browser page — must carry the
// CSRF token (Caller.CSRF) in X-CSRF-Token and come from this origin.
// Every answer carries a strict Content-Security-Policy.
//
// Every error is {"error": {"code", "message"}}: 400 for a malformed
// request (the message names the field or parameter), 401 with a Bearer
// challenge, 403, 404 for an unknown pipeline or route, 405 with Allow,
// 413 over server.maxBodyBytes, 415 for a body not declared as JSON, 500
// (details only in the log), 501, 503. A query string that does not parse,
// unknown query parameters and unknown body fields are refused, and so are
// sensor bodies that are not UTF-8 or give a key twice, so a typo is an
// error rather than a silently different answer. List limits default to
// 100 and are capped at 1000.
package api
