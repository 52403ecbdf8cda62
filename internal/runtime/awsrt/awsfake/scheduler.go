package awsfake

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/interlockhq/interlock/internal/clock"
)

// Scheduler is a fake of EventBridge Scheduler's schedule API as the SDK
// v2 scheduler client speaks it (REST-JSON: POST/PUT/DELETE/GET
// /schedules/{Name}, GET /schedules; errors as the X-Amzn-ErrorType
// header and {"Message"} with the status Scheduler uses). It keeps the
// schedules per group (a missing group name is "default"), checks a
// name (1 to 64 of [0-9a-zA-Z-_.]) and an expression — at(yyyy-mm-ddThh:mm:ss)
// or cron(min hour dom month dow year), in ScheduleExpressionTimezone
// (default UTC) — and answers ConflictException for a name that exists,
// ResourceNotFoundException for one that does not.
//
// Fire plays Scheduler's side on a virtual clock: every enabled schedule
// due by then invokes the handler registered for its target's ARN with
// the target's Input, as Scheduler invokes a Lambda target; an at()
// schedule fires once, and with ActionAfterCompletion DELETE it is deleted
// after its invocation.
type Scheduler struct {
	*httptest.Server
	clk clock.Clock

	mu        sync.Mutex
	schedules map[string]*Schedule // group + "/" + name
	targets   map[string]func(ctx context.Context, input string) error
	calls     map[string]int // operation → count
	lose      func(Firing) bool
}

// Schedule is a schedule as the fake keeps it.
type Schedule struct {
	Name, Group                string
	Expression, Timezone       string
	State                      string // ENABLED, DISABLED
	ActionAfterCompletion      string // NONE, DELETE
	TargetArn, RoleArn, Input  string
	Created, Modified          time.Time
	lastFire                   time.Time // cron: the last tick fired
	fired                      bool      // at: fired already
	at                         time.Time // at: the instant
	cron                       cron.Schedule
	loc                        *time.Location
	FlexibleMode               string
	FlexibleMaximumWindowInMin *int32
}

var scheduleName = regexp.MustCompile(`^[0-9a-zA-Z\-_.]{1,64}$`)

var awsWeekday = regexp.MustCompile(`[1-7]`)

// NewScheduler starts a fake Scheduler; it is closed when the test ends.
// clk stamps creations (a cron schedule fires from its first tick after
// its creation); nil: the real clock.
func NewScheduler(t testing.TB, clk clock.Clock) *Scheduler {
	if clk == nil {
		clk = clock.Real{}
	}
	f := &Scheduler{clk: clk, schedules: map[string]*Schedule{}, targets: map[string]func(context.Context, string) error{}, calls: map[string]int{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// Target registers what a schedule targeting arn invokes when it fires.
func (f *Scheduler) Target(arn string, invoke func(ctx context.Context, input string) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.targets[arn] = invoke
}

// Lose makes the firings lose chooses lost: the schedule fires (an at()
// schedule is spent, and deleted after completion), but its target is
// never invoked and nothing says so — an invocation dropped on the way.
// nil: none is lost.
func (f *Scheduler) Lose(lose func(Firing) bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lose = lose
}

// Schedules returns the schedules of every group, by group and name.
func (f *Scheduler) Schedules() []Schedule {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Schedule, 0, len(f.schedules))
	for _, s := range f.schedules {
		out = append(out, *s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group+"/"+out[i].Name < out[j].Group+"/"+out[j].Name })
	return out
}

// Calls returns how many requests of an operation (CreateSchedule, …) the
// fake answered, errors included.
func (f *Scheduler) Calls(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// Next is the earliest instant an enabled schedule is due at (what Fire
// would fire first), and false when none is.
func (f *Scheduler) Next() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var next time.Time
	for _, s := range f.schedules {
		if s.State != "ENABLED" {
			continue
		}
		var at time.Time
		switch {
		case s.cron != nil:
			from := s.lastFire
			if from.IsZero() {
				from = s.Created.Add(-time.Nanosecond)
			}
			at = s.cron.Next(from.In(s.loc))
		case !s.fired:
			at = s.at
		default:
			continue
		}
		if !at.IsZero() && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	return next, !next.IsZero()
}

// Firing is one invocation Fire made.
type Firing struct {
	Name, Group, TargetArn, Input string
	At                            time.Time // the schedule's time, not the clock's
	Err                           error     // the target's answer
	Lost                          bool      // Lose chose it: the target was not invoked
}

// Fire invokes, in time order, every enabled schedule due at or before
// now: an at() schedule once, a cron() schedule once per tick since its
// last (or since its creation). A target without a registered handler is
// an error of its firing.
func (f *Scheduler) Fire(ctx context.Context, now time.Time) []Firing {
	f.mu.Lock()
	var due []Firing
	var done []string
	for id, s := range f.schedules {
		if s.State != "ENABLED" {
			continue
		}
		switch {
		case s.cron != nil:
			from := s.lastFire
			if from.IsZero() {
				from = s.Created.Add(-time.Nanosecond)
			}
			for next := s.cron.Next(from.In(s.loc)); !next.After(now); next = s.cron.Next(next) {
				due = append(due, Firing{Name: s.Name, Group: s.Group, TargetArn: s.TargetArn, Input: s.Input, At: next})
				s.lastFire = next
			}
		case !s.fired && !s.at.After(now):
			s.fired = true
			due = append(due, Firing{Name: s.Name, Group: s.Group, TargetArn: s.TargetArn, Input: s.Input, At: s.at})
			if s.ActionAfterCompletion == "DELETE" {
				done = append(done, id)
			}
		}
	}
	targets, lose := f.targets, f.lose
	f.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].At.Before(due[j].At) })
	for i, d := range due {
		if lose != nil && lose(d) {
			due[i].Lost = true
			continue
		}
		invoke := targets[d.TargetArn]
		if invoke == nil {
			due[i].Err = fmt.Errorf("no target %s", d.TargetArn)
			continue
		}
		due[i].Err = invoke(ctx, d.Input)
	}
	f.mu.Lock()
	for _, id := range done {
		delete(f.schedules, id)
	}
	f.mu.Unlock()
	return due
}

// wire shapes (the scheduler service's REST-JSON members)
type schedTarget struct {
	Arn     string `json:"Arn"`
	RoleArn string `json:"RoleArn"`
	Input   string `json:"Input,omitempty"`
}

type schedWindow struct {
	Mode                   string `json:"Mode"`
	MaximumWindowInMinutes *int32 `json:"MaximumWindowInMinutes,omitempty"`
}

type schedBody struct {
	ScheduleExpression         string       `json:"ScheduleExpression"`
	ScheduleExpressionTimezone string       `json:"ScheduleExpressionTimezone,omitempty"`
	State                      string       `json:"State,omitempty"`
	ActionAfterCompletion      string       `json:"ActionAfterCompletion,omitempty"`
	GroupName                  string       `json:"GroupName,omitempty"`
	Target                     *schedTarget `json:"Target"`
	FlexibleTimeWindow         *schedWindow `json:"FlexibleTimeWindow"`
}

func (f *Scheduler) serve(w http.ResponseWriter, r *http.Request) {
	op, name := "", ""
	switch rest, ok := strings.CutPrefix(r.URL.Path, "/schedules/"); {
	case r.URL.Path == "/schedules" && r.Method == http.MethodGet:
		op = "ListSchedules"
	case ok && rest != "" && !strings.Contains(rest, "/"):
		name = rest
		op = map[string]string{http.MethodPost: "CreateSchedule", http.MethodPut: "UpdateSchedule", http.MethodDelete: "DeleteSchedule", http.MethodGet: "GetSchedule"}[r.Method]
	}
	if op == "" {
		restFail(w, http.StatusNotFound, "UnknownOperationException", r.Method+" "+r.URL.Path)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[op]++
	body, err := io.ReadAll(r.Body)
	if err != nil {
		restFail(w, http.StatusBadRequest, "ValidationException", "cannot read the body")
		return
	}
	q := r.URL.Query()
	var out any
	var status int
	var code, msg string
	switch op {
	case "CreateSchedule", "UpdateSchedule":
		out, status, code, msg = f.put(op, name, body)
	case "DeleteSchedule":
		id := groupOf(q.Get("groupName")) + "/" + name
		if f.schedules[id] == nil {
			status, code, msg = http.StatusNotFound, "ResourceNotFoundException", "Schedule "+name+" does not exist."
		} else {
			delete(f.schedules, id)
			out = struct{}{}
		}
	case "GetSchedule":
		s := f.schedules[groupOf(q.Get("groupName"))+"/"+name]
		if s == nil {
			status, code, msg = http.StatusNotFound, "ResourceNotFoundException", "Schedule "+name+" does not exist."
		} else {
			out = s.wire()
		}
	case "ListSchedules":
		out = f.list(q.Get("ScheduleGroup"), q.Get("NamePrefix"), q.Get("State"))
	}
	if code != "" {
		restFail(w, status, code, msg)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func groupOf(g string) string {
	if g == "" {
		return "default"
	}
	return g
}

func restFail(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"Message": msg})
}

// put creates or updates a schedule (the caller holds f.mu).
func (f *Scheduler) put(op, name string, body []byte) (any, int, string, string) {
	var in schedBody
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, http.StatusBadRequest, "ValidationException", err.Error()
	}
	if !scheduleName.MatchString(name) {
		return nil, http.StatusBadRequest, "ValidationException", fmt.Sprintf("name %q: 1 to 64 of [0-9a-zA-Z-_.]", name)
	}
	if in.Target == nil || in.Target.Arn == "" || in.Target.RoleArn == "" {
		return nil, http.StatusBadRequest, "ValidationException", "Target with Arn and RoleArn is required"
	}
	if in.FlexibleTimeWindow == nil || (in.FlexibleTimeWindow.Mode != "OFF" && in.FlexibleTimeWindow.Mode != "FLEXIBLE") {
		return nil, http.StatusBadRequest, "ValidationException", "FlexibleTimeWindow.Mode must be OFF or FLEXIBLE"
	}
	group := groupOf(in.GroupName)
	id := group + "/" + name
	prev := f.schedules[id]
	switch {
	case op == "CreateSchedule" && prev != nil:
		return nil, http.StatusConflict, "ConflictException", "Schedule " + name + " already exists."
	case op == "UpdateSchedule" && prev == nil:
		return nil, http.StatusNotFound, "ResourceNotFoundException", "Schedule " + name + " does not exist."
	}
	loc := time.UTC
	if in.ScheduleExpressionTimezone != "" {
		l, err := time.LoadLocation(in.ScheduleExpressionTimezone)
		if err != nil {
			return nil, http.StatusBadRequest, "ValidationException", "Invalid timezone " + in.ScheduleExpressionTimezone
		}
		loc = l
	}
	s := &Schedule{Name: name, Group: group, Expression: in.ScheduleExpression, Timezone: in.ScheduleExpressionTimezone,
		State: in.State, ActionAfterCompletion: in.ActionAfterCompletion, TargetArn: in.Target.Arn, RoleArn: in.Target.RoleArn,
		Input: in.Target.Input, loc: loc, FlexibleMode: in.FlexibleTimeWindow.Mode, FlexibleMaximumWindowInMin: in.FlexibleTimeWindow.MaximumWindowInMinutes}
	if s.State == "" {
		s.State = "ENABLED"
	}
	if s.ActionAfterCompletion == "" {
		s.ActionAfterCompletion = "NONE"
	}
	if err := s.parse(); err != nil {
		return nil, http.StatusBadRequest, "ValidationException", err.Error()
	}
	now := f.clk.Now()
	s.Created, s.Modified = now, now
	if prev != nil {
		s.Created = prev.Created
	}
	f.schedules[id] = s
	return map[string]string{"ScheduleArn": s.arn()}, 0, "", ""
}

func (s *Schedule) arn() string {
	return fmt.Sprintf("arn:aws:scheduler:%s:%s:schedule/%s/%s", Region, Account, s.Group, s.Name)
}

// parse reads the expression: at(yyyy-mm-ddThh:mm:ss) in the schedule's
// zone, or cron(min hour day-of-month month day-of-week year) with
// Scheduler's rules (one of day-of-month and day-of-week is "?"; the
// year field must be "*"; day-of-week 1-7 is SUN-SAT).
func (s *Schedule) parse() error {
	e := s.Expression
	switch {
	case strings.HasPrefix(e, "at(") && strings.HasSuffix(e, ")"):
		t, err := time.ParseInLocation("2006-01-02T15:04:05", e[3:len(e)-1], s.loc)
		if err != nil {
			return fmt.Errorf("Invalid Schedule Expression %s", e)
		}
		s.at = t
		return nil
	case strings.HasPrefix(e, "cron(") && strings.HasSuffix(e, ")"):
		fields := strings.Fields(e[5 : len(e)-1])
		if len(fields) != 6 || (fields[2] == "?") == (fields[4] == "?") || fields[5] != "*" {
			return fmt.Errorf("Invalid Schedule Expression %s", e)
		}
		for i := range fields[:5] {
			if fields[i] == "?" {
				fields[i] = "*"
			}
		}
		fields[4] = awsWeekdays(fields[4])
		c, err := cron.ParseStandard("CRON_TZ=" + s.loc.String() + " " + strings.Join(fields[:5], " "))
		if err != nil {
			return fmt.Errorf("Invalid Schedule Expression %s: %v", e, err)
		}
		s.cron = c
		return nil
	}
	return fmt.Errorf("Invalid Schedule Expression %s", e)
}

// awsWeekdays maps Scheduler's day-of-week numbers (1 = SUN … 7 = SAT) to
// cron's (0 = SUN … 6 = SAT); names pass as they are.
func awsWeekdays(f string) string {
	return awsWeekday.ReplaceAllStringFunc(f, func(d string) string { return string(rune(d[0] - 1)) })
}

func (s *Schedule) wire() map[string]any {
	w := map[string]any{
		"Name": s.Name, "GroupName": s.Group, "Arn": s.arn(), "State": s.State,
		"ScheduleExpression": s.Expression, "ActionAfterCompletion": s.ActionAfterCompletion,
		"Target":               schedTarget{Arn: s.TargetArn, RoleArn: s.RoleArn, Input: s.Input},
		"FlexibleTimeWindow":   schedWindow{Mode: s.FlexibleMode, MaximumWindowInMinutes: s.FlexibleMaximumWindowInMin},
		"CreationDate":         float64(s.Created.UnixMilli()) / 1000,
		"LastModificationDate": float64(s.Modified.UnixMilli()) / 1000,
	}
	if s.Timezone != "" {
		w["ScheduleExpressionTimezone"] = s.Timezone
	}
	return w
}

func (f *Scheduler) list(group, prefix, state string) map[string]any {
	items := []map[string]any{}
	for _, s := range f.schedules {
		if (group != "" && s.Group != group) || !strings.HasPrefix(s.Name, prefix) || (state != "" && s.State != state) {
			continue
		}
		items = append(items, map[string]any{"Name": s.Name, "GroupName": s.Group, "Arn": s.arn(), "State": s.State,
			"Target": map[string]string{"Arn": s.TargetArn}, "CreationDate": float64(s.Created.UnixMilli()) / 1000,
			"LastModificationDate": float64(s.Modified.UnixMilli()) / 1000})
	}
	sort.Slice(items, func(i, j int) bool { return items[i]["Name"].(string) < items[j]["Name"].(string) })
	return map[string]any{"Schedules": items}
}
