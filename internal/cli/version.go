package cli

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
)

func init() {
	register(&command{
		name:    "version",
		summary: "Print the Interlock version",
		flags: func(*flag.FlagSet) action {
			return func(_ context.Context, env Env) int {
				fmt.Fprintf(env.Stdout, "interlock %s (%s, %s/%s)\n", versionString(env.Version), runtime.Version(), runtime.GOOS, runtime.GOARCH)
				return ExitOK
			}
		},
	})
}

func versionString(v string) string {
	if v != "" {
		return v
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}
