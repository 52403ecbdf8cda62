package web

// SinkProblem is sinkProblem, for the external tests.
var SinkProblem = sinkProblem
