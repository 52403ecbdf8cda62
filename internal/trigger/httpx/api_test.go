package httpx_test

import (
	"net/url"
	"testing"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/trigger/httpx"
	"github.com/interlockhq/interlock/internal/trigger/httpx/httpxtest"
)

func env(name string) (string, bool) {
	if name == "INTERLOCK_PW" {
		return "pw-from-env", true
	}
	return "", false
}

func TestAPICallEscapesSegmentsUnderTheBasePath(t *testing.T) {
	req := httpxtest.Request(t, pipeline.JobAirflow, `{url: "https://airflow.example.com/prefix/?x=1#f", dagId: d}`)
	api, err := httpx.NewAPI(httpx.NewExpander(req.Vars, env), req.Config, "url", "")
	if err != nil {
		t.Fatal(err)
	}
	c := api.Call("GET", url.Values{"run_id": {"42"}}, nil, "api", "v1", "dags", "my dag", "dagRuns", "manual__2026-03-10T00:00:00+00:00/../x")
	want := "https://airflow.example.com/prefix/api/v1/dags/my%20dag/dagRuns/manual__2026-03-10T00:00:00+00:00%2F..%2Fx?run_id=42"
	if c.URL != want {
		t.Fatalf("URL = %s\nwant  %s", c.URL, want)
	}
	if c.Header.Get("Accept") != "application/json" || c.Header.Get("Content-Type") != "" || c.Body != nil {
		t.Fatalf("GET call = %+v", c)
	}
	if c := api.Call("POST", nil, []byte("{}"), "x"); c.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("POST call = %+v", c)
	}
}

// TestAPIPollsWhereTheJobStartedWithCurrentCredentials: the stored base
// has no credentials; a poll takes the host from it and the user info and
// headers from the config.
func TestAPIPollsWhereTheJobStartedWithCurrentCredentials(t *testing.T) {
	req := httpxtest.Request(t, pipeline.JobAirflow, `{url: "https://etl:${env:INTERLOCK_PW}@new.example.com/af", dagId: d, headers: {X-Team: data}}`)
	start, err := httpx.NewAPI(httpx.NewExpander(req.Vars, env), req.Config, "url", "")
	if err != nil {
		t.Fatal(err)
	}
	if start.Stored() != "https://new.example.com/af" {
		t.Fatalf("Stored = %q: it must hold no credentials", start.Stored())
	}
	poll, err := httpx.NewAPI(httpx.NewExpander(req.Vars, env), req.Config, "url", "https://old.example.com/af")
	if err != nil {
		t.Fatal(err)
	}
	c := poll.Call("GET", nil, nil, "health")
	if c.URL != "https://etl:pw-from-env@old.example.com/af/health" || c.Header.Get("X-Team") != "data" {
		t.Fatalf("poll call = %+v", c)
	}
	if _, err := httpx.NewAPI(httpx.NewExpander(req.Vars, env), req.Config, "url", "file:///etc/passwd"); err == nil {
		t.Fatal("a stored base that is not an http URL was accepted")
	}
}
