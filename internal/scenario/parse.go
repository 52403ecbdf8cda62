package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/duration"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/silence"
)

// Load reads and checks a scenario file.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse checks a scenario document. The error, when not nil, is a
// confdec.Errors listing every problem with its file and line. Files named
// in the scenario (`{file: …}`) are resolved against the scenario's
// directory.
func Parse(file string, data []byte) (*File, error) {
	doc, err := confdec.ParseDocument(file, data)
	if err != nil {
		return nil, err
	}
	d := confdec.NewDecoder(file)
	d.AllowNodes(len(data))
	var raw rawFile
	d.Decode(doc, "", &raw)
	p := &parser{d: d, file: file, dir: filepath.Dir(file)}
	sc := p.build(doc, &raw)
	errs := append(d.Errors(), p.extra...)
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool {
			if errs[i].File != errs[j].File {
				return errs[i].File == file
			}
			return errs[i].Line < errs[j].Line
		})
		return nil, errs
	}
	return sc, nil
}

type rawFile struct {
	Name      string              `yaml:"name"`
	Start     stamp               `yaml:"start"`
	End       stamp               `yaml:"end"`
	Settings  *yaml.Node          `yaml:"settings"`
	Calendars []*yaml.Node        `yaml:"calendars"`
	Pipelines []*yaml.Node        `yaml:"pipelines"`
	Jobs      map[string][]rawJob `yaml:"jobs"`
	Timeline  []rawAction         `yaml:"timeline"`
	Expect    rawExpect           `yaml:"expect"`
}

type rawJob struct {
	Duration      *dur   `yaml:"duration"`
	Result        string `yaml:"result"`
	Category      string `yaml:"category"`
	TriggerErrors int    `yaml:"triggerErrors"`
	Crash         string `yaml:"crash"`
}

type rawAction struct {
	At           stamp           `yaml:"at"`
	Sensor       *rawSensor      `yaml:"sensor"`
	DeleteSensor *rawRef         `yaml:"deleteSensor"`
	Rerun        *rawRerun       `yaml:"rerun"`
	Config       *yaml.Node      `yaml:"config"`
	Pause        *rawPause       `yaml:"pause"`
	Resume       *rawPipelineRef `yaml:"resume"`
	Restart      *bool           `yaml:"restart"`
	Refused      *bool           `yaml:"refused"`
	// Silence and ExpireSilence: a silence and its early end
	// (docs/silences.md).
	Silence       *rawSilence    `yaml:"silence"`
	ExpireSilence *rawSilenceRef `yaml:"expireSilence"`
	// Backfill and CancelBackfill: a backfill of past periods, and its
	// cancel (docs/backfill.md).
	Backfill       *rawBackfill    `yaml:"backfill"`
	CancelBackfill *rawPipelineRef `yaml:"cancelBackfill"`
}

type rawBackfill struct {
	Pipeline  string `yaml:"pipeline"`
	From      string `yaml:"from"`
	To        string `yaml:"to"`
	Only      string `yaml:"only"`
	MaxActive int    `yaml:"maxActive"`
	Reverse   bool   `yaml:"reverse"`
	DryRun    bool   `yaml:"dryRun"`
}

type rawSilence struct {
	ID              string `yaml:"id"`
	silence.Written `yaml:",inline"`
	Duration        *dur   `yaml:"duration"`
	Until           *stamp `yaml:"until"`
	Comment         string `yaml:"comment"`
}

type rawSilenceRef struct {
	ID string `yaml:"id"`
}

type rawSensor struct {
	Pipeline string     `yaml:"pipeline"`
	Key      string     `yaml:"key"`
	Data     *yaml.Node `yaml:"data"`
}

type rawRef struct {
	Pipeline string `yaml:"pipeline"`
	Key      string `yaml:"key"`
}

type rawRerun struct {
	Pipeline string `yaml:"pipeline"`
	Date     string `yaml:"date"`
	Reason   string `yaml:"reason"`
}

type rawPipelineRef struct {
	Pipeline string `yaml:"pipeline"`
}

type rawPause struct {
	Pipeline string `yaml:"pipeline"`
	Until    *stamp `yaml:"until"`
}

type rawExpect struct {
	Events []rawMatcher   `yaml:"events"`
	Absent []rawMatcher   `yaml:"absent"`
	Order  [][]rawMatcher `yaml:"order"`
}

type rawMatcher struct {
	Type     string                  `yaml:"type"`
	Pipeline string                  `yaml:"pipeline"`
	Schedule string                  `yaml:"schedule"`
	Date     string                  `yaml:"date"`
	After    *stamp                  `yaml:"after"`
	Before   *stamp                  `yaml:"before"`
	Detail   map[string]sensor.Value `yaml:"detail"`
	Count    *int                    `yaml:"count"`
	// BlockedBy: the pipeline Detail.blockedBy names (docs/root-cause.md).
	BlockedBy string `yaml:"blockedBy"`
	// Paged: whether a default route pages the event on its own.
	Paged *bool `yaml:"paged"`
	// Silenced: whether a silence or a maintenance window covered the
	// event (docs/silences.md).
	Silenced *bool `yaml:"silenced"`
	// Message: a text the event's message contains ("text", or
	// {contains: text, times: N} for exactly N occurrences).
	Message *messageMatch `yaml:"message"`
}

// messageMatch is a matcher's message: a text, or {contains, times}.
type messageMatch struct {
	contains string
	times    *int
}

func (m *messageMatch) DecodeNode(d *confdec.Decoder, n *yaml.Node, path string) {
	n = d.Resolve(n)
	switch n.Kind {
	case yaml.ScalarNode:
		m.contains = n.Value
	case yaml.MappingNode:
		var raw struct {
			Contains string `yaml:"contains,required"`
			Times    *int   `yaml:"times"`
		}
		d.Decode(n, path, &raw)
		m.contains, m.times = raw.Contains, raw.Times
		if raw.Times != nil && *raw.Times < 0 {
			d.ErrorAt(path+".times", "must not be negative")
		}
	default:
		d.Errorf(n, path, `want a text the message contains, or {contains: "text", times: 1}`)
		return
	}
	if m.contains == "" {
		d.Errorf(n, path, "want a text the message contains, not an empty one")
	}
}

// stamp is an RFC3339 instant.
type stamp struct {
	t   time.Time
	set bool
}

func (s *stamp) DecodeNode(d *confdec.Decoder, n *yaml.Node, path string) {
	if n.Kind != yaml.ScalarNode {
		d.Errorf(n, path, "want an RFC3339 time like 2026-03-10T06:00:00Z")
		return
	}
	t, err := time.Parse(time.RFC3339, n.Value)
	if err != nil {
		d.Errorf(n, path, "want an RFC3339 time like 2026-03-10T06:00:00Z, got %q", n.Value)
		return
	}
	s.t, s.set = t.UTC(), true
}

// dur is a duration in configuration syntax ("20m", "2d").
type dur struct{ d time.Duration }

func (v *dur) DecodeNode(d *confdec.Decoder, n *yaml.Node, path string) {
	if n.Kind != yaml.ScalarNode {
		d.Errorf(n, path, "want a duration like \"20m\"")
		return
	}
	x, err := duration.Parse(n.Value)
	if err != nil {
		d.Errorf(n, path, "%v", err)
		return
	}
	v.d = x
}

type parser struct {
	d     *confdec.Decoder
	file  string
	dir   string
	extra confdec.Errors // errors found in files the scenario refers to
}

func (p *parser) build(doc *yaml.Node, raw *rawFile) *File {
	d := p.d
	sc := &File{Path: p.file, Name: raw.Name, Start: raw.Start.t, End: raw.End.t, Jobs: map[string][]Job{}}
	if !raw.Start.set {
		d.ErrorAt("start", "required: the virtual time the simulation starts at (RFC3339)")
	}
	if !raw.End.set {
		d.ErrorAt("end", "required: the virtual time the simulation stops at (RFC3339)")
	}
	if raw.Start.set && raw.End.set && !raw.End.t.After(raw.Start.t) {
		d.ErrorAt("end", "must be after start (%s)", raw.Start.t.Format(time.RFC3339))
	}

	sc.Settings = pipeline.DefaultSettings()
	if raw.Settings != nil {
		if s := pipeline.DecodeSettings(d, raw.Settings, "settings"); s != nil {
			sc.Settings = s
		}
	}

	sc.Calendars = map[string]schedule.Calendar{}
	for i, n := range raw.Calendars {
		path := fmt.Sprintf("calendars[%d]", i)
		var cal *schedule.Calendar
		if ref, ok := fileRef(n); ok {
			data, err := os.ReadFile(p.resolve(ref))
			if err != nil {
				d.Errorf(n, path+".file", "%v", err)
				continue
			}
			c, err := pipeline.ParseCalendar(p.resolve(ref), data)
			if err != nil {
				p.addForeign(p.resolve(ref), err)
				continue
			}
			cal = c
		} else {
			cal = pipeline.DecodeCalendar(d, n, path)
		}
		if cal == nil {
			continue
		}
		if _, dup := sc.Calendars[cal.Name]; dup {
			d.Errorf(n, path+".name", "duplicate calendar name %q", cal.Name)
			continue
		}
		sc.Calendars[cal.Name] = *cal
	}

	opt := sc.Settings.PipelineOptions(sc.Calendars)
	known := map[string]bool{}
	if len(raw.Pipelines) == 0 {
		d.ErrorAt("pipelines", "required: at least one pipeline document (inline, or {file: path})")
	}
	for i, n := range raw.Pipelines {
		path := fmt.Sprintf("pipelines[%d]", i)
		var pl *pipeline.Pipeline
		var doc Doc
		if ref, ok := fileRef(n); ok {
			data, rerr := os.ReadFile(p.resolve(ref))
			if rerr != nil {
				d.Errorf(n, path+".file", "%v", rerr)
				continue
			}
			doc = Doc{File: p.resolve(ref), Data: data}
			pl2, err := pipeline.ParsePipeline(doc.File, data, opt)
			if err != nil {
				var errs confdec.Errors
				if errors.As(err, &errs) {
					p.addForeign(p.resolve(ref), err)
				} else {
					d.Errorf(n, path+".file", "%v", err)
				}
				continue
			}
			pl = pl2
		} else {
			pl = pipeline.DecodePipeline(d, n, path, opt)
			data, err := yaml.Marshal(n)
			if err != nil {
				d.Errorf(n, path, "cannot re-encode the pipeline document: %v", err)
				continue
			}
			doc = Doc{File: fmt.Sprintf("%s#%s", p.file, path), Data: data}
		}
		if pl == nil {
			continue
		}
		if known[pl.ID] {
			d.Errorf(n, path+".pipeline.id", "duplicate pipeline id %q", pl.ID)
			continue
		}
		known[pl.ID] = true
		sc.Pipelines = append(sc.Pipelines, pl)
		sc.Docs = append(sc.Docs, doc)
	}

	p.buildTimeline(sc, raw, known)
	p.buildJobs(sc, raw, known)
	sc.Expect.Events = p.buildMatchers(raw.Expect.Events, "expect.events")
	sc.Expect.Absent = p.buildMatchers(raw.Expect.Absent, "expect.absent")
	for i, seq := range raw.Expect.Order {
		path := fmt.Sprintf("expect.order[%d]", i)
		if len(seq) < 2 {
			p.d.ErrorAt(path, "want at least two matchers, the events in the order they must come")
		}
		sc.Expect.Order = append(sc.Expect.Order, p.buildMatchers(seq, path))
	}
	// A scenario without expectations is allowed: it prints the timeline,
	// which is how people explore a config.
	return sc
}

func (p *parser) buildTimeline(sc *File, raw *rawFile, known map[string]bool) {
	d := p.d
	// A config action may introduce a pipeline; later actions may use it.
	for _, a := range raw.Timeline {
		if a.Config == nil {
			continue
		}
		n := a.Config
		if ref, ok := fileRef(n); ok {
			// An unreadable file is refused when the action runs, as a
			// reload would refuse it; here it only cannot name a pipeline.
			data, err := os.ReadFile(p.resolve(ref))
			if err != nil {
				continue
			}
			doc, err := confdec.ParseDocument(ref, data)
			if err != nil {
				continue
			}
			n = doc
		}
		if id := pipeline.IDOf(n); id != "" {
			known[id] = true
		}
	}
	checkPipeline := func(path, id string) {
		switch {
		case id == "":
			d.ErrorAt(path+".pipeline", "required")
		case !known[id]:
			d.ErrorAt(path+".pipeline", "unknown pipeline %q (not among the scenario's pipelines)", id)
		}
	}
	for i, a := range raw.Timeline {
		path := fmt.Sprintf("timeline[%d]", i)
		act := Action{At: a.At.t, Line: d.Line(path)}
		if !a.At.set {
			d.ErrorAt(path+".at", "required: when the action happens (RFC3339)")
		} else if sc.Start.After(act.At) || act.At.After(sc.End) {
			d.ErrorAt(path+".at", "%s is outside the simulation (%s to %s)", act.At.Format(time.RFC3339), sc.Start.Format(time.RFC3339), sc.End.Format(time.RFC3339))
		}
		n := 0
		if s := a.Sensor; s != nil {
			n++
			checkPipeline(path+".sensor", s.Pipeline)
			if s.Key == "" {
				d.ErrorAt(path+".sensor.key", "required")
			}
			if s.Data != nil && s.Data.Kind != yaml.MappingNode {
				d.Errorf(s.Data, path+".sensor.data", "want a mapping of sensor fields")
			} else if s.Data != nil {
				// What cannot be a sensor object at all (a key given twice,
				// a non-scalar or merge key, a control character in a key)
				// is an error in the file, found when it loads; what the
				// engine refuses (a bad date) is a refused action.
				if _, err := sensor.FromYAML(s.Data); err != nil {
					d.Errorf(s.Data, path+".sensor.data", "%v", err)
				}
			}
			act.Sensor = &SensorWrite{Pipeline: s.Pipeline, Key: s.Key, Data: s.Data}
		}
		if s := a.DeleteSensor; s != nil {
			n++
			checkPipeline(path+".deleteSensor", s.Pipeline)
			if s.Key == "" {
				d.ErrorAt(path+".deleteSensor.key", "required")
			}
			act.DeleteSensor = &SensorRef{Pipeline: s.Pipeline, Key: s.Key}
		}
		if r := a.Rerun; r != nil {
			n++
			checkPipeline(path+".rerun", r.Pipeline)
			if _, err := schedule.ParsePeriod(r.Date); err != nil {
				d.ErrorAt(path+".rerun.date", "want a period like 2026-03-10 or 2026-03-10T07, got %q", r.Date)
			}
			reason := r.Reason
			if reason == "" {
				reason = "manual"
			}
			act.Rerun = &Rerun{Pipeline: r.Pipeline, Date: r.Date, Reason: reason}
		}
		if c := a.Config; c != nil {
			n++
			if ref, ok := fileRef(c); ok {
				act.Config = &ConfigChange{File: p.resolve(ref)}
			} else if c.Kind != yaml.MappingNode {
				d.Errorf(c, path+".config", "want a pipeline document or {file: path}")
			} else {
				act.Config = &ConfigChange{Node: c}
			}
		}
		if r := a.Pause; r != nil {
			n++
			checkPipeline(path+".pause", r.Pipeline)
			act.Pause = &Pause{Pipeline: r.Pipeline}
			if r.Until != nil {
				act.Pause.Until = r.Until.t
			}
		}
		if r := a.Resume; r != nil {
			n++
			checkPipeline(path+".resume", r.Pipeline)
			act.Resume = &PipelineRef{Pipeline: r.Pipeline}
		}
		if b := a.Backfill; b != nil {
			n++
			checkPipeline(path+".backfill", b.Pipeline)
			for _, f := range [][2]string{{"from", b.From}, {"to", b.To}} {
				if _, err := schedule.ParsePeriod(f[1]); err != nil {
					d.ErrorAt(path+".backfill."+f[0], "want a period like 2026-03-10 or 2026-03-10T07, got %q", f[1])
				}
			}
			only := b.Only
			switch only {
			case "":
				only = "missing"
			case "missing", "failed", "all":
			default:
				d.ErrorAt(path+".backfill.only", "want missing, failed or all, got %q", b.Only)
			}
			maxActive := b.MaxActive
			if maxActive == 0 {
				maxActive = 1
			}
			act.Backfill = &Backfill{Pipeline: b.Pipeline, From: b.From, To: b.To, Only: only, MaxActive: maxActive, Reverse: b.Reverse, DryRun: b.DryRun}
		}
		if r := a.CancelBackfill; r != nil {
			n++
			checkPipeline(path+".cancelBackfill", r.Pipeline)
			act.CancelBackfill = &PipelineRef{Pipeline: r.Pipeline}
		}
		if a.Restart != nil {
			n++
			if !*a.Restart {
				d.ErrorAt(path+".restart", "must be true (omit the entry to not restart)")
			}
			act.Restart = true
		}
		if r := a.Silence; r != nil {
			n++
			act.Silence = p.buildSilence(path+".silence", r)
		}
		if r := a.ExpireSilence; r != nil {
			n++
			if r.ID == "" {
				d.ErrorAt(path+".expireSilence.id", "required")
			}
			act.ExpireSilence = &SilenceRef{ID: r.ID}
		}
		if a.Refused != nil {
			if !*a.Refused {
				d.ErrorAt(path+".refused", "must be true (omit it when the action is to be accepted)")
			}
			if a.Restart != nil || a.Config != nil {
				d.ErrorAt(path+".refused", "only a sensor, deleteSensor, rerun, pause, resume, backfill, cancelBackfill, silence or expireSilence can be refused (a bad config is answered with CONFIG_INVALID)")
			}
			act.Refused = true
		}
		if n != 1 {
			d.ErrorAt(path, "want exactly one action (sensor, deleteSensor, rerun, config, pause, resume, restart, backfill, cancelBackfill, silence, expireSilence) besides at, got %d", n)
			continue
		}
		sc.Timeline = append(sc.Timeline, act)
	}
	sort.SliceStable(sc.Timeline, func(i, j int) bool { return sc.Timeline[i].At.Before(sc.Timeline[j].At) })
}

// buildSilence checks a silence action's matchers and end; what the
// engine refuses at run time (an end already past) is a refused action.
func (p *parser) buildSilence(path string, r *rawSilence) *Silence {
	d := p.d
	m, err := r.Written.Parse()
	for _, fe := range silence.FieldErrors(err) {
		d.ErrorAt(path+"."+fe.Field, "%s", fe.Msg)
	}
	if err == nil && m.Empty() {
		d.ErrorAt(path, "at least one of pipelines, types, levels, owners is needed")
	}
	s := &Silence{ID: r.ID, Matchers: m, Comment: r.Comment}
	switch {
	case (r.Duration == nil) == (r.Until == nil):
		d.ErrorAt(path, "want exactly one of duration and until")
	case r.Duration != nil:
		s.Duration = r.Duration.d
		if s.Duration <= 0 {
			d.ErrorAt(path+".duration", "must be positive")
		}
	default:
		s.Until = r.Until.t
	}
	return s
}

func (p *parser) buildJobs(sc *File, raw *rawFile, known map[string]bool) {
	d := p.d
	ids := make([]string, 0, len(raw.Jobs))
	for id := range raw.Jobs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !known[id] {
			d.ErrorAt("jobs."+id, "unknown pipeline %q (not among the scenario's pipelines)", id)
		}
		for i, j := range raw.Jobs[id] {
			path := fmt.Sprintf("jobs.%s[%d]", id, i)
			job := Job{Result: Result(j.Result), Category: Category(j.Category), TriggerErrors: j.TriggerErrors, Crash: Crash(j.Crash)}
			if j.Duration != nil {
				job.Duration = j.Duration.d
			} else {
				job.Duration = DefaultJob.Duration
			}
			switch job.Result {
			case "":
				job.Result = Success
			case Success, Fail, Timeout, Hang:
			default:
				d.ErrorAt(path+".result", "unknown result %q (want success, fail, timeout or hang)", j.Result)
			}
			switch job.Category {
			case "":
				job.Category = Transient
			case Transient, Permanent, TimeoutC:
				if job.Result != Fail {
					d.ErrorAt(path+".category", "only meaningful with result: fail")
				}
			default:
				d.ErrorAt(path+".category", "unknown category %q (want TRANSIENT, PERMANENT or TIMEOUT)", j.Category)
			}
			if j.TriggerErrors < 0 {
				d.ErrorAt(path+".triggerErrors", "must not be negative")
			}
			switch job.Crash {
			case "", CrashAfterStart, CrashBeforeStart:
			default:
				d.ErrorAt(path+".crash", "unknown crash %q (want after-start or before-start)", j.Crash)
			}
			sc.Jobs[id] = append(sc.Jobs[id], job)
		}
	}
}

func (p *parser) buildMatchers(raw []rawMatcher, base string) []Matcher {
	d := p.d
	out := make([]Matcher, 0, len(raw))
	for i, r := range raw {
		path := fmt.Sprintf("%s[%d]", base, i)
		m := Matcher{Line: d.Line(path), Type: event.Type(r.Type), Pipeline: r.Pipeline, Schedule: r.Schedule, Date: r.Date, Detail: r.Detail, Count: r.Count,
			BlockedBy: r.BlockedBy, Paged: r.Paged, Silenced: r.Silenced}
		if r.Message != nil {
			m.Message, m.MessageTimes = r.Message.contains, r.Message.times
		}
		if r.Type == "" {
			d.ErrorAt(path+".type", "required: an event type such as JOB_TRIGGERED")
		} else if _, ok := event.Lookup(m.Type); !ok {
			d.ErrorAt(path+".type", "unknown event type %q%s", r.Type, suggestType(r.Type))
		}
		if r.After != nil {
			t := r.After.t
			m.After = &t
		}
		if r.Before != nil {
			t := r.Before.t
			m.Before = &t
		}
		if m.After != nil && m.Before != nil && m.Before.Before(*m.After) {
			d.ErrorAt(path+".before", "is earlier than after")
		}
		if r.Count != nil && *r.Count < 0 {
			d.ErrorAt(path+".count", "must not be negative")
		}
		out = append(out, m)
	}
	return out
}

func suggestType(t string) string {
	up := strings.ToUpper(strings.ReplaceAll(t, "-", "_"))
	if _, ok := event.Lookup(event.Type(up)); ok {
		return fmt.Sprintf(" (did you mean %q?)", up)
	}
	return ""
}

func (p *parser) resolve(ref string) string {
	if filepath.IsAbs(ref) {
		return ref
	}
	return filepath.Join(p.dir, ref)
}

func (p *parser) addForeign(file string, err error) {
	var errs confdec.Errors
	if errors.As(err, &errs) {
		p.extra = append(p.extra, errs...)
		return
	}
	p.extra = append(p.extra, confdec.Error{File: file, Msg: err.Error()})
}

// fileRef recognises `{file: path}`.
func fileRef(n *yaml.Node) (string, bool) {
	if n == nil || n.Kind != yaml.MappingNode || len(n.Content) != 2 || n.Content[0].Value != "file" {
		return "", false
	}
	return n.Content[1].Value, n.Content[1].Kind == yaml.ScalarNode
}
