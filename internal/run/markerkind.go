package run

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/interlockhq/interlock/internal/event"
)

// Qualified marker kinds. Most kinds are plain names (markers.go); these
// are qualified by what the fact is about, and the qualifier is stored in
// the kind so that each is a marker of its own (one per downstream, per
// blocked condition, per silence, per file, per run generation and state).
// MarkerKind is such a kind as a record, and this file the one place a
// kind is built (String) and read back (ParseMarkerKind); no other code
// cuts or joins kind strings. The formats are those stored since the
// first release, byte for byte.
const (
	// MarkerDownstream ("downstream:<id>"), on its upstream's
	// pipeline-level key (Key{PipelineID: upstream}): an index of who to
	// re-evaluate when the upstream succeeds, written when the
	// downstream's config is activated. The downstream's config decides;
	// the marker only saves listing every pipeline on each success. ID:
	// the downstream.
	MarkerDownstream = "downstream"
	// MarkerBlocked ("blocked:<pipeline>/<schedule>/<period>/<TYPE>"), on a
	// root's period: condition Type of downstream period Down was blocked
	// by it, to release on its success (Detail: deps.BlockedCondition).
	MarkerBlocked = "blocked"
	// MarkerAfterSilence ("after-silence/<id>/<TYPE>"): a period's condition
	// of Type was alerted after the silence (or window occurrence) ID
	// ended. It is written IfAbsent with the alert, so restarts and
	// replicas send it once.
	MarkerAfterSilence = "after-silence"
	// MarkerConfigInvalid ("config-invalid:<hash>"): CONFIG_INVALID was sent
	// for a file (ID: the hash of its name) and the content hashed in
	// Detail.sha256.
	MarkerConfigInvalid = "config-invalid"
	// MarkerRunStuck qualified ("run-stuck:<generation>:<STATE>"): RUN_STUCK
	// was sent for the run's Generation stuck in State (the watchdog's
	// dedup); unqualified, the plain kind.

	// Once-per-item markers: an item written to the store by someone else
	// (a job report, a rerun request, a sensor that could not be one) is
	// decided once, however often it is delivered; the marker, written if
	// absent in the decision's commit, is the proof it was. ID: the
	// item's id, or a refused item's fingerprint.
	MarkerJobReport    = "job-report"    // "job-report/<id>"
	MarkerRerunRequest = "rerun-request" // "rerun-request/<id>"
	MarkerRejected     = "rejected"      // "rejected/<fingerprint>"
)

// idSeparators are the kinds qualified by an ID alone, and what joins it.
var idSeparators = map[string]string{
	MarkerDownstream: ":", MarkerConfigInvalid: ":",
	MarkerJobReport: "/", MarkerRerunRequest: "/", MarkerRejected: "/",
}

// MarkerKind is a marker's kind as a record: its name and, for a
// qualified kind, the fields its name carries. A plain kind has Name only.
type MarkerKind struct {
	Name string
	// ID: MarkerDownstream's downstream pipeline, MarkerAfterSilence's
	// silence or window occurrence, MarkerConfigInvalid's file-name hash,
	// the once-per-item markers' item.
	ID string
	// Down and Type: MarkerBlocked's downstream period and condition;
	// MarkerAfterSilence's condition is Type too.
	Down Key
	Type event.Type
	// Generation and State: a qualified MarkerRunStuck's run.
	Generation int
	State      State
}

// DownstreamMarker is the kind of the index marker of downstream id.
func DownstreamMarker(id string) MarkerKind { return MarkerKind{Name: MarkerDownstream, ID: id} }

// BlockedMarker is the kind, on the root's period, of the marker of the
// condition t of downstream period down: one per condition, so a second
// blocked event of the same condition replaces the first.
func BlockedMarker(down Key, t event.Type) MarkerKind {
	return MarkerKind{Name: MarkerBlocked, Down: down, Type: t}
}

// AfterSilenceMarker is the kind of the marker that says a period's
// condition t was alerted after silence (or window occurrence) id ended.
func AfterSilenceMarker(id string, t event.Type) MarkerKind {
	return MarkerKind{Name: MarkerAfterSilence, ID: id, Type: t}
}

// ConfigInvalidMarker is the kind of the CONFIG_INVALID marker of the file
// whose name hashes to nameHash.
func ConfigInvalidMarker(nameHash string) MarkerKind {
	return MarkerKind{Name: MarkerConfigInvalid, ID: nameHash}
}

// ItemMarker is the kind of once-per-item marker name (MarkerJobReport,
// MarkerRerunRequest, MarkerRejected) of item id.
func ItemMarker(name, id string) MarkerKind { return MarkerKind{Name: name, ID: id} }

// StuckMarker is the kind of the RUN_STUCK marker of r: once per run
// generation and state, so a run is reported once per state it gets stuck
// in, and a rerun (a new generation) that gets stuck is reported again.
func StuckMarker(r Run) MarkerKind {
	return MarkerKind{Name: MarkerRunStuck, Generation: r.Generation, State: r.State}
}

// String is the kind as stored.
func (k MarkerKind) String() string {
	if sep, ok := idSeparators[k.Name]; ok {
		return k.Name + sep + k.ID
	}
	switch k.Name {
	case MarkerBlocked:
		return k.Name + ":" + k.Down.PipelineID + "/" + k.Down.ScheduleID + "/" + k.Down.Period + "/" + string(k.Type)
	case MarkerAfterSilence:
		return k.Name + "/" + k.ID + "/" + string(k.Type)
	case MarkerRunStuck:
		if k.State != "" {
			return k.Name + ":" + strconv.Itoa(k.Generation) + ":" + string(k.State)
		}
	}
	return k.Name
}

// ErrMarkerKind is wrapped by ParseMarkerKind's errors.
var ErrMarkerKind = errors.New("not a marker kind")

// ParseMarkerKind reads a stored kind back: a qualified kind's fields, or
// a plain kind's name (any other string: the set of plain kinds grows
// with features, and a kind this version does not know is still a kind).
// A kind it returns without error is one String gives back byte for
// byte; a qualified kind whose qualifier does not parse is an error.
// Pipeline ids, periods and event types hold no '/', so a blocked kind
// splits at its first and last two '/' (a schedule id keeps any it has)
// and an after-silence kind at its last (a silence id keeps any).
func ParseMarkerKind(s string) (MarkerKind, error) {
	bad := func(want string) (MarkerKind, error) {
		return MarkerKind{}, fmt.Errorf("%w: %q: want %s", ErrMarkerKind, s, want)
	}
	if rest, ok := strings.CutPrefix(s, MarkerAfterSilence+"/"); ok {
		i := strings.LastIndexByte(rest, '/')
		if i <= 0 || i == len(rest)-1 {
			return bad(MarkerAfterSilence + "/<silence>/<TYPE>")
		}
		return AfterSilenceMarker(rest[:i], event.Type(rest[i+1:])), nil
	}
	i := strings.IndexAny(s, ":/")
	if i < 0 {
		if _, ok := idSeparators[s]; ok || s == MarkerBlocked || s == MarkerAfterSilence {
			return bad("it qualified")
		}
		return MarkerKind{Name: s}, nil
	}
	name, sep, rest := s[:i], s[i:i+1], s[i+1:]
	if want, ok := idSeparators[name]; ok && sep == want {
		if rest == "" {
			return bad(name + sep + "<id>")
		}
		return MarkerKind{Name: name, ID: rest}, nil
	}
	if sep != ":" {
		return MarkerKind{Name: s}, nil
	}
	switch name {
	case MarkerBlocked:
		pid, tail, ok := strings.Cut(rest, "/")
		t := strings.LastIndexByte(tail, '/')
		if !ok || pid == "" || t < 0 || t == len(tail)-1 {
			return bad(name + ":<pipeline>/<schedule>/<period>/<TYPE>")
		}
		p := strings.LastIndexByte(tail[:t], '/')
		if p < 0 || p == t-1 {
			return bad(name + ":<pipeline>/<schedule>/<period>/<TYPE>")
		}
		return BlockedMarker(Key{PipelineID: pid, ScheduleID: tail[:p], Period: tail[p+1 : t]}, event.Type(tail[t+1:])), nil
	case MarkerRunStuck:
		gen, state, ok := strings.Cut(rest, ":")
		n, err := strconv.Atoi(gen)
		if !ok || err != nil || strconv.Itoa(n) != gen || state == "" {
			return bad(name + ":<generation>:<STATE>")
		}
		return MarkerKind{Name: name, Generation: n, State: State(state)}, nil
	}
	return MarkerKind{Name: s}, nil
}
