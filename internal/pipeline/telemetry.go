package pipeline

import (
	"net/url"
	"strings"
)

// Telemetry is interlock.yaml's `telemetry:` section: where the process
// exports its traces over OTLP/HTTP (docs/telemetry.md). All of it is
// optional; the standard OTEL_* environment variables apply as well, and
// the section alone turns nothing on without an endpoint.
type Telemetry struct {
	// Endpoint is the OTLP/HTTP base URL (http or https); traces are
	// posted to Endpoint/v1/traces.
	Endpoint string
	// ServiceName names the service in the traces (default interlock).
	ServiceName string
	// SampleRatio is the share of traces kept, in (0, 1] (0: unset, all).
	SampleRatio float64
}

type rawTelemetry struct {
	Endpoint    *string  `yaml:"endpoint"`
	ServiceName *string  `yaml:"serviceName"`
	SampleRatio *float64 `yaml:"sampleRatio"`
}

// telemetry checks the telemetry section.
func (b *builder) telemetry(raw *rawTelemetry) Telemetry {
	var t Telemetry
	if raw.Endpoint != nil {
		t.Endpoint = strings.TrimSpace(*raw.Endpoint)
		u, err := url.Parse(t.Endpoint)
		switch {
		case t.Endpoint == "":
			b.errorf("telemetry.endpoint", "empty: want the OTLP/HTTP endpoint's URL, e.g. http://localhost:4318")
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			b.errorf("telemetry.endpoint", "%q is not an http(s) URL: want the OTLP/HTTP endpoint's URL, e.g. http://localhost:4318", t.Endpoint)
		case u.User != nil:
			b.errorf("telemetry.endpoint", "the URL carries credentials: put them in OTEL_EXPORTER_OTLP_HEADERS, not in the file")
		}
	}
	if raw.ServiceName != nil {
		t.ServiceName = strings.TrimSpace(*raw.ServiceName)
		if t.ServiceName == "" {
			b.errorf("telemetry.serviceName", "empty: leave it out for the default, interlock")
		}
	}
	if raw.SampleRatio != nil {
		t.SampleRatio = *raw.SampleRatio
		if !(t.SampleRatio > 0 && t.SampleRatio <= 1) {
			b.errorf("telemetry.sampleRatio", "%v is out of range (want more than 0, at most 1)", t.SampleRatio)
		}
	}
	return t
}
