package pipeline

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/schedule"
)

type rawCalendar struct {
	Name  string   `yaml:"name,required"`
	Days  []string `yaml:"days"`
	Dates []string `yaml:"dates"`
}

// ParseCalendar parses one calendar file ({name, days, dates}).
func ParseCalendar(file string, data []byte) (*schedule.Calendar, error) {
	return parseFile(file, data, func(d *confdec.Decoder, root *yaml.Node) *schedule.Calendar { return DecodeCalendar(d, root, "") })
}

// DecodeCalendar validates the calendar document at n, reporting errors
// to d under path; nil when it has errors.
func DecodeCalendar(d *confdec.Decoder, n *yaml.Node, path string) *schedule.Calendar {
	return decodeDoc(d, n, path, "calendar", Options{}, (*builder).calendarDoc)
}

func (b *builder) calendarDoc(raw *rawCalendar) *schedule.Calendar {
	if b.valid("name") {
		if msg := checkID(raw.Name); msg != "" {
			b.errorf("name", "%s", msg)
		}
	}
	return &schedule.Calendar{Name: raw.Name, Dates: b.dates("dates", raw.Dates),
		Days: parseEach(b, "days", raw.Days, schedule.ParseWeekday, nil)}
}

// LoadCalendarDir loads every *.yaml and *.yml file in dir, keyed by
// calendar name. Two files defining one name is an error. A missing
// directory is an error wrapping fs.ErrNotExist, so a caller can treat
// the default directory as optional.
func LoadCalendarDir(dir string) (map[string]schedule.Calendar, error) {
	files, err := yamlFiles(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]schedule.Calendar{}
	from := map[string]string{}
	var errs confdec.Errors
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, confdec.Error{File: f, Msg: err.Error()})
			continue
		}
		root, err := confdec.ParseDocument(f, data)
		if err != nil {
			errs = append(errs, confdec.AsErrors(f, err)...)
			continue
		}
		d := confdec.NewDecoder(f)
		c := DecodeCalendar(d, root, "")
		if c != nil {
			if prev, dup := from[c.Name]; dup {
				d.ErrorAt("name", "calendar %q is already defined in %s", c.Name, prev)
			} else {
				from[c.Name] = f
				out[c.Name] = *c
			}
		}
		errs = append(errs, d.Errors()...)
	}
	if len(errs) > 0 {
		return out, errs
	}
	return out, nil
}

// yamlFiles lists the *.yaml and *.yml files directly in dir, sorted.
func yamlFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		ext := strings.ToLower(filepath.Ext(e.Name()))
		if !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(files)
	return files, nil
}

// CalendarNames lists the named calendars the schedule merges in, each
// once: the exclusion calendar, then the inclusion calendar. A pipeline's
// resolution depends on these calendars and no other.
func (s Schedule) CalendarNames() []string {
	var names []string
	if s.Exclude.Calendar != "" {
		names = append(names, s.Exclude.Calendar)
	}
	if in := s.Include; in != nil && in.Calendar != "" && in.Calendar != s.Exclude.Calendar {
		names = append(names, in.Calendar)
	}
	return names
}
