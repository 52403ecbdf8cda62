package scenario

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/sensor"
)

// Render turns the sensor data into a sensor object at virtual time now:
// the string "${now}" becomes now as RFC3339, "${now_ms}" the epoch
// milliseconds (a number when it is the whole value) and "${date}" now's
// UTC date YYYY-MM-DD. The placeholders may also appear inside longer
// strings, where they are replaced by their text. Flat and wrapped
// ({"data": {...}}) data are the same sensor, as in the API.
func (s SensorWrite) Render(now time.Time) (sensor.Object, error) {
	if s.Data == nil {
		return sensor.NewObject(nil), nil
	}
	n := substitute(s.Data, now)
	v, err := sensor.FromYAML(n)
	if err != nil {
		return sensor.Object{}, err
	}
	obj, ok := v.Object()
	if !ok {
		return sensor.Object{}, fmt.Errorf("sensor data must be a mapping, got %s", v.Kind())
	}
	return sensor.Unwrap(obj), nil
}

func substitute(n *yaml.Node, now time.Time) *yaml.Node {
	c := *n
	switch n.Kind {
	case yaml.ScalarNode:
		if n.ShortTag() != "!!str" || !strings.Contains(n.Value, "${") {
			return &c
		}
		ms := strconv.FormatInt(now.UnixMilli(), 10)
		if n.Value == "${now_ms}" {
			c.Value, c.Tag, c.Style = ms, "!!int", 0
			return &c
		}
		c.Value = strings.NewReplacer(
			"${now}", now.UTC().Format(time.RFC3339),
			"${now_ms}", ms,
			"${date}", now.UTC().Format("2006-01-02"),
		).Replace(n.Value)
		return &c
	case yaml.DocumentNode, yaml.SequenceNode, yaml.MappingNode:
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			c.Content[i] = substitute(ch, now)
		}
	}
	return &c
}
