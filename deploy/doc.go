// Package deploy holds the AWS deployment of Interlock — build.sh (one
// reproducible Lambda package per function), zipdist (its zip writer), the
// Terraform module under terraform/ and the state machine's ASL — and the
// tests that check them against the code: the packages are reproducible, and
// the module declares every function, variable, environment variable and
// template substitution the code expects, with every reference resolving
// (docs/aws.md, "Build" and "Deploy with Terraform").
package deploy
