package awsfake

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/interlockhq/interlock/internal/clock"
)

// TestSchedulerThroughTheSDK: the real scheduler client creates, reads,
// lists, updates and deletes; a name taken is a ConflictException, a
// missing one a ResourceNotFoundException; at() in a zone fires once (and
// goes with DELETE); cron() in a zone fires each tick, by Scheduler's
// day-of-week numbers.
func TestSchedulerThroughTheSDK(t *testing.T) {
	ctx := t.Context()
	start := time.Date(2099, 3, 6, 12, 0, 0, 0, time.UTC) // a Friday
	f := NewScheduler(t, clock.NewVirtual(start))
	c := scheduler.NewFromConfig(Config(f.URL))
	var got []string
	f.Target("arn:fn", func(_ context.Context, input string) error { got = append(got, input); return nil })
	put := func(name, expr, tz string, after types.ActionAfterCompletion) error {
		_, err := c.CreateSchedule(ctx, &scheduler.CreateScheduleInput{Name: aws.String(name), GroupName: aws.String("g"),
			ScheduleExpression: aws.String(expr), ScheduleExpressionTimezone: aws.String(tz), ActionAfterCompletion: after,
			FlexibleTimeWindow: &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
			Target:             &types.Target{Arn: aws.String("arn:fn"), RoleArn: aws.String("arn:role"), Input: aws.String(name)}})
		return err
	}
	if err := put("once", "at(2099-03-07T09:00:00)", "Europe/Paris", types.ActionAfterCompletionDelete); err != nil {
		t.Fatal(err)
	}
	var conflict *types.ConflictException
	if err := put("once", "at(2099-03-07T09:00:00)", "UTC", ""); !errors.As(err, &conflict) {
		t.Fatalf("second create: %v", err)
	}
	// 09:30 on Monday to Friday (2-6) in New York.
	if err := put("weekdays", "cron(30 9 ? * 2-6 *)", "America/New_York", ""); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"at(tomorrow)", "cron(30 9 * * 2-6 *)", "rate(5 minutes)"} {
		if err := put("bad", bad, "UTC", ""); err == nil {
			t.Fatalf("%s accepted", bad)
		}
	}
	if err := put("bad/name", "at(2099-03-07T09:00:00)", "UTC", ""); err == nil {
		t.Fatal("a name with / accepted")
	}
	g, err := c.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String("once"), GroupName: aws.String("g")})
	if err != nil || aws.ToString(g.ScheduleExpression) != "at(2099-03-07T09:00:00)" || aws.ToString(g.Target.Input) != "once" {
		t.Fatalf("get: %+v %v", g, err)
	}
	l, err := c.ListSchedules(ctx, &scheduler.ListSchedulesInput{GroupName: aws.String("g"), NamePrefix: aws.String("we")})
	if err != nil || len(l.Schedules) != 1 || aws.ToString(l.Schedules[0].Name) != "weekdays" {
		t.Fatalf("list: %+v %v", l, err)
	}
	var missing *types.ResourceNotFoundException
	if _, err := c.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String("none"), GroupName: aws.String("g")}); !errors.As(err, &missing) {
		t.Fatalf("delete missing: %v", err)
	}
	if _, err := c.UpdateSchedule(ctx, &scheduler.UpdateScheduleInput{Name: aws.String("none"), GroupName: aws.String("g"), ScheduleExpression: aws.String("at(2099-03-07T09:00:00)"),
		FlexibleTimeWindow: &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff}, Target: &types.Target{Arn: aws.String("arn:fn"), RoleArn: aws.String("arn:role")}}); !errors.As(err, &missing) {
		t.Fatalf("update missing: %v", err)
	}

	// Through Tuesday 10 March 00:00 UTC: "weekdays" on Friday 14:30 UTC
	// (09:30 EST), "once" at 08:00 UTC on Saturday (09:00 Paris),
	// "weekdays" on Monday 13:30 UTC (09:30 EDT: DST since 8 March) — not
	// on the weekend.
	fs := f.Fire(ctx, time.Date(2099, 3, 10, 0, 0, 0, 0, time.UTC))
	if len(fs) != 3 || fs[0].Name != "weekdays" || !fs[0].At.Equal(time.Date(2099, 3, 6, 14, 30, 0, 0, time.UTC)) ||
		fs[1].Name != "once" || !fs[1].At.Equal(time.Date(2099, 3, 7, 8, 0, 0, 0, time.UTC)) ||
		fs[2].Name != "weekdays" || !fs[2].At.Equal(time.Date(2099, 3, 9, 13, 30, 0, 0, time.UTC)) {
		t.Fatalf("fired %+v", fs)
	}
	if len(got) != 3 || got[0] != "weekdays" || got[1] != "once" {
		t.Fatalf("inputs %v", got)
	}
	if ss := f.Schedules(); len(ss) != 1 || ss[0].Name != "weekdays" {
		t.Fatalf("after firing: %+v (the at() with DELETE should be gone)", ss)
	}
	if fs := f.Fire(ctx, time.Date(2099, 3, 10, 0, 0, 0, 0, time.UTC)); len(fs) != 0 {
		t.Fatalf("fired again: %+v", fs)
	}
}

// TestSchedulerLosesAFiringItIsToldTo: a lost firing spends its at()
// schedule without invoking the target; the others are invoked.
func TestSchedulerLosesAFiringItIsToldTo(t *testing.T) {
	ctx := t.Context()
	f := NewScheduler(t, clock.NewVirtual(time.Date(2099, 3, 6, 12, 0, 0, 0, time.UTC)))
	c := scheduler.NewFromConfig(Config(f.URL))
	var got []string
	f.Target("arn:fn", func(_ context.Context, input string) error { got = append(got, input); return nil })
	for _, name := range []string{"kept", "lost"} {
		if _, err := c.CreateSchedule(ctx, &scheduler.CreateScheduleInput{Name: aws.String(name), ScheduleExpression: aws.String("at(2099-03-06T13:00:00)"),
			ActionAfterCompletion: types.ActionAfterCompletionDelete, FlexibleTimeWindow: &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
			Target: &types.Target{Arn: aws.String("arn:fn"), RoleArn: aws.String("arn:role"), Input: aws.String(name)}}); err != nil {
			t.Fatal(err)
		}
	}
	f.Lose(func(fi Firing) bool { return fi.Name == "lost" })
	fs := f.Fire(ctx, time.Date(2099, 3, 6, 13, 0, 0, 0, time.UTC))
	lost := 0
	for _, fi := range fs {
		if fi.Lost {
			lost++
		}
	}
	if len(fs) != 2 || lost != 1 || len(got) != 1 || got[0] != "kept" || len(f.Schedules()) != 0 {
		t.Fatalf("fired %+v, inputs %v, left %+v", fs, got, f.Schedules())
	}
}
