package pipeline

import (
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/sensor"
)

// IDOf reads pipeline.id from a pipeline document's root mapping without
// checking the rest of it, so also from one that is otherwise invalid;
// "" when it has none.
func IDOf(root *yaml.Node) string {
	if root == nil || root.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value != "pipeline" {
			continue
		}
		pm := root.Content[i+1]
		for j := 0; j+1 < len(pm.Content); j += 2 {
			if pm.Content[j].Value == "id" {
				return pm.Content[j+1].Value
			}
		}
	}
	return ""
}

// The raw* types are the YAML shape of a pipeline document, decoded
// strictly by confdec. Pointers mark fields whose absence means "use the
// default" as opposed to an explicit zero. They never leave the package:
// build* functions turn them into the typed model.

type rawDoc struct {
	Pipeline   rawMeta        `yaml:"pipeline,required"`
	Schedule   *rawSchedule   `yaml:"schedule"`
	SLA        *rawSLA        `yaml:"sla"`
	Validation *rawValidation `yaml:"validation"`
	PostRun    *rawPostRun    `yaml:"postRun"`
	Job        *rawJob        `yaml:"job,required"`
	DryRun     bool           `yaml:"dryRun"`
	Lineage    []rawLineage   `yaml:"lineage"`
}

type rawMeta struct {
	ID          string `yaml:"id,required"`
	Owner       string `yaml:"owner"`
	Description string `yaml:"description"`
}

type rawSchedule struct {
	Cron       string         `yaml:"cron"`
	Timezone   string         `yaml:"timezone"`
	Time       string         `yaml:"time"`
	Trigger    *rawTrigger    `yaml:"trigger"`
	Evaluation *rawEvaluation `yaml:"evaluation"`
	Include    *rawInclude    `yaml:"include"`
	Exclude    *rawExclude    `yaml:"exclude"`
}

type rawRule struct {
	Key   string       `yaml:"key"`
	Check string       `yaml:"check"`
	Field string       `yaml:"field"`
	Value sensor.Value `yaml:"value"`
	// Pipeline, Offset and Hours belong to check upstream only
	// (upstream.go); buildRule refuses them on a sensor rule.
	Pipeline string `yaml:"pipeline"`
	Offset   string `yaml:"offset"`
	Hours    string `yaml:"hours"`
}

type rawTrigger struct {
	rawRule  `yaml:",inline"`
	Deadline string `yaml:"deadline"`
}

type rawEvaluation struct {
	Window   *time.Duration `yaml:"window"`
	Interval *time.Duration `yaml:"interval"`
}

type rawInclude struct {
	Dates    []string `yaml:"dates"`
	Calendar string   `yaml:"calendar"`
}

type rawExclude struct {
	Weekends bool     `yaml:"weekends"`
	Days     []string `yaml:"days"`
	Dates    []string `yaml:"dates"`
	Calendar string   `yaml:"calendar"`
}

type rawSLA struct {
	Deadline         string         `yaml:"deadline"`
	ExpectedDuration *time.Duration `yaml:"expectedDuration"`
	MaxDuration      *time.Duration `yaml:"maxDuration"`
	Timezone         string         `yaml:"timezone"`
	Critical         bool           `yaml:"critical"`
}

type rawValidation struct {
	Trigger string    `yaml:"trigger"`
	Rules   []rawRule `yaml:"rules"`
}

type rawPostRun struct {
	Rules          []rawRule      `yaml:"rules"`
	DriftField     *string        `yaml:"driftField"`
	DriftThreshold *float64       `yaml:"driftThreshold"`
	SensorTimeout  *time.Duration `yaml:"sensorTimeout"`
	// Evaluation is decoded only to refuse it with a clear message.
	Evaluation *yaml.Node `yaml:"evaluation"`
}

type rawJob struct {
	Type                 string         `yaml:"type,required"`
	Config               *yaml.Node     `yaml:"config"`
	MaxRetries           *int           `yaml:"maxRetries"`
	MaxCodeRetries       *int           `yaml:"maxCodeRetries"`
	MaxDriftReruns       *int           `yaml:"maxDriftReruns"`
	MaxManualReruns      *int           `yaml:"maxManualReruns"`
	TriggerRetries       *int           `yaml:"triggerRetries"`
	PollInterval         *time.Duration `yaml:"pollInterval"`
	PollWindow           *time.Duration `yaml:"pollWindow"`
	JobPollWindowSeconds *int           `yaml:"jobPollWindowSeconds"`
	StuckAfter           *time.Duration `yaml:"stuckAfter"`
}
