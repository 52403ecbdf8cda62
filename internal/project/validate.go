package project

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/schedule"
)

// FileReport is the verdict on one file.
type FileReport struct {
	File   string          `json:"file"`
	Kind   Kind            `json:"kind"`
	Name   string          `json:"name,omitempty"` // pipeline id, calendar or scenario name
	Errors []confdec.Error `json:"errors"`
	// Warnings do not make the file invalid (see Warning).
	Warnings []Warning `json:"warnings"`
}

// Valid reports whether the file had no errors.
func (f FileReport) Valid() bool { return len(f.Errors) == 0 }

// Report is the verdict on a set of files.
type Report struct {
	// Project is set when no paths were given: what was searched.
	Project *Scope       `json:"project,omitempty"`
	Files   []FileReport `json:"files"`
	// pipelines are the valid pipelines, in file order (Pipelines).
	pipelines []*pipeline.Pipeline
}

// Pipelines are the pipelines that parsed, each id once, in file order:
// what `interlock graph` draws.
func (r Report) Pipelines() []*pipeline.Pipeline { return r.pipelines }

// Scope is what a validation without paths covered: the project's
// settings file and the places of its other files, each with the number
// of files found there.
type Scope struct {
	Settings string     `json:"settings"`
	Dirs     []ScopeDir `json:"dirs"`
}

// ScopeDir is one place a project's files were looked for.
type ScopeDir struct {
	What  string `json:"what"` // calendars, pipelines or scenarios
	Path  string `json:"path"`
	Files int    `json:"files"`
}

// ScenariosDir is where a project keeps its scenario files, beside
// interlock.yaml (`interlock init` creates it).
const ScenariosDir = "scenarios"

// Warnings counts the warnings of all files.
func (r Report) Warnings() int {
	n := 0
	for _, f := range r.Files {
		n += len(f.Warnings)
	}
	return n
}

// Valid reports whether every file is valid and there was at least one.
func (r Report) Valid() bool {
	for _, f := range r.Files {
		if !f.Valid() {
			return false
		}
	}
	return len(r.Files) > 0
}

// Invalid counts the files with errors.
func (r Report) Invalid() int {
	n := 0
	for _, f := range r.Files {
		if !f.Valid() {
			n++
		}
	}
	return n
}

// Options steer Validate.
type Options struct {
	// SettingsFile is the project's interlock.yaml. When it exists its
	// envAllow list applies and its calendars directory is used to resolve
	// calendar names; when no paths are given, the files it names are
	// validated, and the scenarios/ directory beside it.
	SettingsFile string
	// LookupEnv reads the environment API tokens are checked in, as serve
	// would read it (nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Invocation is, for a deployment whose job calls are made inside an
	// invocation of bounded time (AWS: the orchestrator Lambda's
	// timeout), that bound: a pipeline whose job call cannot finish inside
	// it with InvocationMargin left to record the answer is invalid
	// (pipeline.CallFits). Zero: not checked (serve has no such bound).
	Invocation       time.Duration
	InvocationMargin time.Duration
}

// ErrNothingToValidate is returned when no paths are given and there is no
// project to validate.
var ErrNothingToValidate = errors.New("nothing to validate")

type loaded struct {
	file string
	data []byte
	doc  *yaml.Node
	rep  FileReport
}

// claim names the file's report name (a calendar's name, a pipeline's id)
// and records, in files, that the file defines it; a name another file
// defined first is an error at path naming that file, and false.
func (it *loaded) claim(files map[string]string, name, path, what string) bool {
	it.rep.Name = name
	if prev, dup := files[name]; dup {
		it.rep.Errors = append(it.rep.Errors, confdec.Error{File: it.file, Line: 1, Path: path, Msg: fmt.Sprintf("duplicate %s %q (also in %s)", what, name, prev)})
		return false
	}
	files[name] = it.file
	return true
}

// Validate checks every file under paths (files, or directories searched
// for *.yaml and *.yml) and reports all errors of all files. Calendars are
// loaded first so pipelines can refer to them; pipeline ids must be unique.
// Without paths it checks the project of opt.SettingsFile: that file, its
// calendars and pipelines, and the scenarios/ directory beside it.
//
// Besides each file's content it checks what serve would refuse at start
// in this environment (an API token whose variable is unset or whose file
// is missing), and warns, without failing the file, about an HTTP-family
// job whose URL names an address the SSRF guard refuses.
func Validate(paths []string, opt Options) (Report, error) {
	settings, settingsFile := pipeline.DefaultSettings(), ""
	if opt.SettingsFile != "" {
		if _, err := os.Stat(opt.SettingsFile); err == nil {
			settingsFile = opt.SettingsFile
			if data, err := os.ReadFile(settingsFile); err == nil {
				if s, err := pipeline.ParseSettings(settingsFile, data); err == nil {
					settings = s
				}
			}
		}
	}
	var scope *Scope
	if len(paths) == 0 {
		// Validate the whole project: interlock.yaml, what it names and
		// the scenarios beside it.
		if settingsFile == "" {
			return Report{}, fmt.Errorf("%w: pass files or directories, or run in a project directory with %s", ErrNothingToValidate, orDefault(opt.SettingsFile, "interlock.yaml"))
		}
		paths = []string{settingsFile}
		scope = &Scope{Settings: settingsFile}
		for _, d := range []ScopeDir{
			{What: "calendars", Path: resolve(settingsFile, settings.Calendars)},
			{What: "pipelines", Path: resolve(settingsFile, settings.Pipelines)},
			{What: "scenarios", Path: resolve(settingsFile, ScenariosDir)},
		} {
			more, err := expandOptional(d.Path)
			if err != nil {
				return Report{}, err
			}
			d.Files = len(more)
			scope.Dirs = append(scope.Dirs, d)
			paths = append(paths, more...)
		}
	}

	files, err := expand(paths)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Project: scope}
	var items []*loaded
	for _, f := range files {
		it := &loaded{file: f, rep: FileReport{File: f, Kind: KindUnknown, Errors: []confdec.Error{}, Warnings: []Warning{}}}
		items = append(items, it)
		data, err := os.ReadFile(f)
		if err != nil {
			it.rep.Errors = append(it.rep.Errors, confdec.Error{File: f, Msg: err.Error()})
			continue
		}
		it.data = data
		doc, err := confdec.ParseDocument(f, data)
		if err != nil {
			it.rep.Errors = append(it.rep.Errors, asErrors(f, err)...)
			continue
		}
		it.doc = doc
		it.rep.Kind = DetectKind(doc)
		if it.rep.Kind == KindUnknown {
			it.rep.Errors = append(it.rep.Errors, confdec.Error{File: f, Line: 1, Msg: "cannot tell what this file is: a pipeline has `pipeline:`, a calendar `name:` with `days:` or `dates:`, a scenario `start:`, `end:` and `timeline:`, interlock.yaml sections such as `store:` or `server:`"})
		}
	}

	// A settings file among the paths supplies envAllow and the calendars
	// directory when --config did not.
	if settingsFile == "" {
		for _, it := range items {
			if it.rep.Kind != KindSettings || len(it.rep.Errors) > 0 {
				continue
			}
			if s, err := pipeline.ParseSettings(it.file, it.data); err == nil {
				settings, settingsFile = s, it.file
			}
			break
		}
	}

	calendars := map[string]schedule.Calendar{}
	calendarFile := map[string]string{}
	// Calendars of the project resolve names even when not validated here.
	if settingsFile != "" {
		if dir := resolve(settingsFile, settings.Calendars); dir != "" {
			if cals, err := pipeline.LoadCalendarDir(dir); err == nil {
				for name, c := range cals {
					calendars[name] = c
				}
			}
		}
	}
	for _, it := range items {
		if it.rep.Kind != KindCalendar || len(it.rep.Errors) > 0 {
			continue
		}
		cal, err := pipeline.ParseCalendar(it.file, it.data)
		if err != nil {
			it.rep.Errors = append(it.rep.Errors, asErrors(it.file, err)...)
			continue
		}
		if it.claim(calendarFile, cal.Name, "name", "calendar name") {
			calendars[cal.Name] = *cal
		}
	}

	lookupEnv := opt.LookupEnv
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	popt := settings.PipelineOptions(calendars)
	pipelineFile := map[string]string{}
	parsed := map[*loaded]*pipeline.Pipeline{} // the valid pipelines, for upstreamErrors
	for _, it := range items {
		if len(it.rep.Errors) > 0 {
			continue
		}
		switch it.rep.Kind {
		case KindSettings:
			s, err := pipeline.ParseSettings(it.file, it.data)
			if err != nil {
				it.rep.Errors = append(it.rep.Errors, asErrors(it.file, err)...)
				continue
			}
			if err := app.CheckStore(s); err != nil {
				it.rep.Errors = append(it.rep.Errors, asErrors(it.file, err)...)
			}
			it.rep.Errors = append(it.rep.Errors, tokenErrors(it.file, it.doc, s, lookupEnv)...)
			it.rep.Errors = append(it.rep.Errors, alertSecretErrors(it.file, it.doc, s, lookupEnv)...)
		case KindPipeline:
			p, err := pipeline.ParsePipeline(it.file, it.data, popt)
			if err != nil {
				it.rep.Errors = append(it.rep.Errors, asErrors(it.file, err)...)
				continue
			}
			if !it.claim(pipelineFile, p.ID, "pipeline.id", "pipeline id") {
				continue
			}
			parsed[it] = p
			it.rep.Warnings = append(it.rep.Warnings, ssrfWarnings(it.file, it.doc, p, settings.Triggers.AllowAddresses)...)
			it.rep.Warnings = append(it.rep.Warnings, envWarnings(it.file, it.doc, p, lookupEnv)...)
			it.rep.Errors = append(it.rep.Errors, invocationErrors(it.file, it.doc, p, opt)...)
		case KindScenario:
			sc, err := scenario.Parse(it.file, it.data)
			if err != nil {
				it.rep.Errors = append(it.rep.Errors, asErrors(it.file, err)...)
				continue
			}
			it.rep.Name = sc.Name
		}
	}
	upstreamErrors(items, parsed, rep.Project != nil)
	for _, it := range items {
		if p := parsed[it]; p != nil {
			rep.pipelines = append(rep.pipelines, p)
		}
	}
	foldReported(items)
	for _, it := range items {
		sort.SliceStable(it.rep.Errors, func(i, j int) bool { return it.rep.Errors[i].Line < it.rep.Errors[j].Line })
		sort.SliceStable(it.rep.Warnings, func(i, j int) bool { return it.rep.Warnings[i].Line < it.rep.Warnings[j].Line })
		rep.Files = append(rep.Files, it.rep)
	}
	return rep, nil
}

// foldReported replaces the errors a file reports about another file it
// uses (a scenario's pipelines and calendars) by one line naming that
// file, when that file is validated too and reports them itself: a
// project's broken pipeline is listed once, not again for each scenario
// that uses it.
func foldReported(items []*loaded) {
	own := map[confdec.Error]bool{}
	for _, it := range items {
		for _, e := range it.rep.Errors {
			if e.File == it.file {
				own[e] = true
			}
		}
	}
	for _, it := range items {
		kept := it.rep.Errors[:0]
		var folded []string
		for _, e := range it.rep.Errors {
			if e.File != it.file && own[e] {
				if !slices.Contains(folded, e.File) {
					folded = append(folded, e.File)
				}
				continue
			}
			kept = append(kept, e)
		}
		for _, f := range folded {
			kept = append(kept, confdec.Error{File: it.file, Msg: fmt.Sprintf("uses %s, which is invalid (its errors are listed with it)", f)})
		}
		it.rep.Errors = kept
	}
}

func asErrors(file string, err error) []confdec.Error {
	var errs confdec.Errors
	if errors.As(err, &errs) {
		return errs
	}
	return []confdec.Error{{File: file, Msg: err.Error()}}
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// resolve makes p relative to the directory of the settings file, as
// interlock.yaml paths are.
func resolve(settingsFile, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(settingsFile), p)
}

func isYAML(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".yaml" || ext == ".yml"
}

// expand turns paths into a sorted, de-duplicated list of files. A missing
// path is an error: a typo on the command line must not pass silently.
func expand(paths []string) ([]string, error) {
	seen := map[string]bool{}
	for _, p := range paths {
		more, err := expandOne(p, true)
		if err != nil {
			return nil, err
		}
		for _, f := range more {
			seen[f] = true
		}
	}
	return sortedKeys(seen), nil
}

func expandOptional(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	return expandOne(p, false)
}

func expandOne(p string, must bool) ([]string, error) {
	if strings.ContainsAny(p, "*?[") {
		matches, err := filepath.Glob(p)
		if err != nil {
			return nil, fmt.Errorf("bad pattern %q: %w", p, err)
		}
		var out []string
		for _, m := range matches {
			more, err := expandOne(m, must)
			if err != nil {
				return nil, err
			}
			out = append(out, more...)
		}
		return out, nil
	}
	info, err := os.Stat(p)
	if err != nil {
		if !must && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	if !info.IsDir() {
		return []string{filepath.Clean(p)}, nil
	}
	var out []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != p && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if isYAML(d.Name()) {
			out = append(out, filepath.Clean(path))
		}
		return nil
	})
	return out, err
}

func sortedKeys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// invocationErrors refuses a pipeline whose job call cannot finish inside
// opt.Invocation (none when that is zero).
func invocationErrors(file string, root *yaml.Node, p *pipeline.Pipeline, opt Options) []confdec.Error {
	if opt.Invocation <= 0 {
		return nil
	}
	path, why, ok := pipeline.CallFits(p.Job, opt.Invocation, opt.InvocationMargin)
	if ok {
		return nil
	}
	var steps []any
	for _, s := range strings.Split(path, ".") {
		steps = append(steps, s)
	}
	return []confdec.Error{{File: file, Line: lineOf(root, steps...), Path: path, Msg: why}}
}
