package pipeline

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/interlockhq/interlock/internal/confdec"
)

// zoneMessage is the error for a time zone time.LoadLocation refused:
// with the closest real zone name when the typo is plausible
// ("America/NewYork" → "America/New_York"), else with an example.
func zoneMessage(name string) string {
	if s := suggestZone(name, zoneNames()); s != "" {
		return fmt.Sprintf("unknown time zone %q (did you mean %q?)", name, s)
	}
	return fmt.Sprintf("unknown time zone %q (want an IANA name such as Europe/Berlin or UTC)", name)
}

// suggestZone picks the candidate confdec.Suggest finds closest to name,
// and offers it only if it loads. A bare area ("Europe") is not a typo of
// one of its cities, so no city is offered for it.
func suggestZone(name string, candidates []string) string {
	if name == "" || name == "Local" {
		return ""
	}
	s := confdec.Suggest(name, candidates)
	if s == "" || strings.HasPrefix(strings.ToLower(s), strings.ToLower(strings.TrimRight(name, "/"))+"/") {
		return ""
	}
	if _, err := time.LoadLocation(s); err != nil {
		return ""
	}
	return s
}

// zoneNames are the candidates for suggestions: the zones of the host's
// zoneinfo directory when it has one, else commonZones. Computed once,
// and only when a file names an unknown zone.
var zoneNames = sync.OnceValue(func() []string {
	for _, dir := range zoneinfoDirs {
		if names := zoneNamesIn(os.DirFS(dir)); len(names) > 0 {
			return names
		}
	}
	return slices.Clone(commonZones)
})

// zoneinfoDirs are where Unix systems keep the tz database (the places
// time.LoadLocation looks, in its order).
var zoneinfoDirs = []string{"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ", "/etc/zoneinfo"}

// zoneNamesIn lists the zone files of a zoneinfo tree, sorted so that
// suggestions do not depend on the walk order. Only "Area/Location" names
// and UTC are kept: the legacy aliases (EST, GB, Cuba) would be offered
// for unrelated three-letter typos. The posix/ and right/ trees repeat
// every zone; files that are not TZif data (zone.tab, leapseconds) are
// skipped.
func zoneNamesIn(fsys fs.FS) []string {
	var out []string
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable part of the tree: skip it
		}
		if d.IsDir() {
			if p == "posix" || p == "right" || strings.HasPrefix(d.Name(), ".") && p != "." {
				return fs.SkipDir
			}
			return nil
		}
		if (strings.Contains(p, "/") || p == "UTC") && isTZif(fsys, p) {
			out = append(out, p)
		}
		return nil
	})
	slices.Sort(out)
	return slices.Compact(out)
}

func isTZif(fsys fs.FS, p string) bool {
	f, err := fsys.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [4]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == "TZif"
}

// commonZones stand in for a host without a zoneinfo directory (scratch
// containers, Lambda): the zones people most often write, so their
// common typos still get a suggestion. Sorted; every one loads from the
// embedded tz database (a test checks both).
var commonZones = []string{
	"Africa/Cairo", "Africa/Casablanca", "Africa/Johannesburg", "Africa/Lagos", "Africa/Nairobi",
	"America/Anchorage", "America/Argentina/Buenos_Aires", "America/Bogota", "America/Chicago",
	"America/Denver", "America/Edmonton", "America/Halifax", "America/Lima", "America/Los_Angeles",
	"America/Mexico_City", "America/New_York", "America/Phoenix", "America/Santiago",
	"America/Sao_Paulo", "America/St_Johns", "America/Toronto", "America/Vancouver",
	"Asia/Bangkok", "Asia/Dhaka", "Asia/Dubai", "Asia/Ho_Chi_Minh", "Asia/Hong_Kong",
	"Asia/Jakarta", "Asia/Jerusalem", "Asia/Karachi", "Asia/Kathmandu", "Asia/Kolkata",
	"Asia/Manila", "Asia/Riyadh", "Asia/Seoul", "Asia/Shanghai", "Asia/Singapore", "Asia/Taipei",
	"Asia/Tehran", "Asia/Tokyo", "Atlantic/Reykjavik", "Australia/Adelaide", "Australia/Brisbane",
	"Australia/Melbourne", "Australia/Perth", "Australia/Sydney", "Europe/Amsterdam",
	"Europe/Athens", "Europe/Berlin", "Europe/Brussels", "Europe/Bucharest", "Europe/Budapest",
	"Europe/Copenhagen", "Europe/Dublin", "Europe/Helsinki", "Europe/Istanbul", "Europe/Kyiv",
	"Europe/Lisbon", "Europe/London", "Europe/Madrid", "Europe/Moscow", "Europe/Oslo",
	"Europe/Paris", "Europe/Prague", "Europe/Rome", "Europe/Stockholm", "Europe/Vienna",
	"Europe/Warsaw", "Europe/Zurich", "Pacific/Auckland", "Pacific/Honolulu", "UTC",
}
