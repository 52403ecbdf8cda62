// Package archtest pins the layering (docs/architecture.md, "Layers"):
// every package has a layer, an import may only point to a layer the
// importer's layer lists, no database driver or AWS SDK reaches the pure
// core, the ports or the engine, and only the app builds adapters. It
// reads the imports the Go tool lists (`go list -json`, non-test imports:
// a test may reach anything it drives), so a new arrow fails here, not in
// review. A new package fails until it is given a layer below.
package archtest
