package pipeline

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

// A misspelt zone names the real one, in schedule.timezone and in
// sla.timezone alike.
func TestTimezoneTypoSuggestsTheZone(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"schedule", strings.Replace(minimalPipeline, "schedule:\n", "schedule:\n  timezone: America/NewYork\n", 1),
			`p.yaml:3: schedule.timezone: unknown time zone "America/NewYork" (did you mean "America/New_York"?)`},
		{"sla", minimalPipeline + "sla: {deadline: \"09:00\", timezone: europe/berln}\n",
			`sla.timezone: unknown time zone "europe/berln" (did you mean "Europe/Berlin"?)`},
		{"no plausible zone", strings.Replace(minimalPipeline, "schedule:\n", "schedule:\n  timezone: Mars/Olympus\n", 1),
			`schedule.timezone: unknown time zone "Mars/Olympus" (want an IANA name such as Europe/Berlin or UTC)`},
		{"a bare area is not a typo of its cities", strings.Replace(minimalPipeline, "schedule:\n", "schedule:\n  timezone: Europe\n", 1),
			`schedule.timezone: unknown time zone "Europe" (want an IANA name`},
		{"Local stays refused", strings.Replace(minimalPipeline, "schedule:\n", "schedule:\n  timezone: Local\n", 1),
			`schedule.timezone: unknown time zone "Local" (want an IANA name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePipeline("p.yaml", []byte(tc.doc), Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %q", err, tc.want)
			}
		})
	}
}

const minimalPipeline = `pipeline: {id: p}
schedule:
  trigger: {key: k, check: exists}
job: {type: glue, config: {jobName: j}}
`

// The built-in list is what a host without zoneinfo suggests from: it
// must be sorted (suggestions do not depend on order) and every name must
// load from the embedded database, or we would suggest a zone we refuse.
func TestCommonZonesLoadAndAreSorted(t *testing.T) {
	if !slices.IsSorted(commonZones) || len(slices.Compact(slices.Clone(commonZones))) != len(commonZones) {
		t.Fatal("commonZones must be sorted without duplicates")
	}
	for _, z := range commonZones {
		if _, err := time.LoadLocation(z); err != nil {
			t.Errorf("%s: %v", z, err)
		}
	}
	for typo, want := range map[string]string{
		"America/NewYork": "America/New_York", "Europe/Londn": "Europe/London", "asia/tokyo": "Asia/Tokyo",
		"Australia/Sidney": "Australia/Sydney", "utc": "UTC", "America/Sao Paulo": "America/Sao_Paulo",
	} {
		if got := suggestZone(typo, commonZones); got != want {
			t.Errorf("suggestZone(%q) = %q, want %q", typo, got, want)
		}
	}
	for _, none := range []string{"", "Local", "Europe", "PST", "Nowhere/Special"} {
		if got := suggestZone(none, commonZones); got != "" {
			t.Errorf("suggestZone(%q) = %q, want none", none, got)
		}
	}
}

// The zoneinfo walk keeps Area/Location zones and UTC, sorted, and skips
// the posix/ and right/ copies, legacy aliases and files that are not
// zone data.
func TestZoneNamesIn(t *testing.T) {
	tzif := &fstest.MapFile{Data: []byte("TZif2...")}
	fsys := fstest.MapFS{
		"UTC":                    tzif,
		"EST":                    tzif,
		"Europe/Paris":           tzif,
		"America/New_York":       tzif,
		"America/Indiana/Knox":   tzif,
		"posix/Europe/Paris":     tzif,
		"right/Europe/Paris":     tzif,
		"zone.tab":               {Data: []byte("# tz zone descriptions")},
		"Europe/README":          {Data: []byte("not a zone")},
		"Etc/short":              {Data: []byte("TZ")},
		".hidden/Europe/Nowhere": tzif,
		// The walk visits Area/Sub/ before Area/Sub-y; sorted, "-" comes first.
		"Area/Sub/X": tzif,
		"Area/Sub-y": tzif,
	}
	got := zoneNamesIn(fsys)
	want := []string{"America/Indiana/Knox", "America/New_York", "Area/Sub-y", "Area/Sub/X", "Europe/Paris", "UTC"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	if names := zoneNamesIn(fstest.MapFS{}); len(names) != 0 {
		t.Fatalf("empty tree: %v", names)
	}
}
