package dynamodb

import (
	"context"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

var _ store.SensorFactsReader = (*Store)(nil)

// SensorFacts reads a sensor decision's first facts — the pipeline row,
// the sensor's stored state (SENSORSTATE#), the runs asked for and, with
// p.Inbox, the inbox item (SENSOR#) — in one BatchGetItem, strongly
// consistent: the items the single reads would get, each decoded as they
// decode it.
func (s *Store) SensorFacts(ctx context.Context, p store.SensorFactsParams) (store.SensorFacts, error) {
	pk := pipelinePK(p.PipelineID)
	skState, skInbox := sensorStateSK(p.Key), skSensorPrefix+p.Key
	keys := []item{keyOf(pk, skConfig), keyOf(pk, skState)}
	if p.Inbox {
		keys = append(keys, keyOf(pk, skInbox))
	}
	runs := map[[2]string]run.Key{}
	for _, k := range p.Runs {
		rk := [2]string{pipelinePK(k.PipelineID), runSK(k.ScheduleID, k.Period)}
		if _, dup := runs[rk]; !dup && rk != [2]string{pk, skConfig} && rk != [2]string{pk, skState} && rk != [2]string{pk, skInbox} {
			runs[rk] = k
			keys = append(keys, keyOf(rk[0], rk[1]))
		}
	}
	items, err := s.batchGet(ctx, s.t.Control, keys)
	if err != nil {
		return store.SensorFacts{}, err
	}
	f := store.SensorFacts{Runs: map[run.Key]run.Run{}, InboxErr: store.ErrNotFound}
	for _, it := range items {
		r := readItem(it)
		ipk, isk := r.text(attrPK), r.text(attrSK)
		switch {
		case ipk == pk && isk == skConfig:
			if f.Pipeline, err = decodePipeline(it); err != nil {
				return store.SensorFacts{}, err
			}
			f.PipelineFound = true
		case ipk == pk && isk == skState:
			if f.Sensor, err = decodeSensor(it); err != nil {
				return store.SensorFacts{}, err
			}
			f.SensorFound = true
		case p.Inbox && ipk == pk && isk == skInbox:
			f.Inbox, f.InboxErr = decodeInbox(p.PipelineID, p.Key, it)
		default:
			k, ok := runs[[2]string{ipk, isk}]
			if !ok {
				continue
			}
			rn, err := decodeRun(it)
			if err != nil {
				return store.SensorFacts{}, err
			}
			f.Runs[k] = rn
		}
	}
	return f, nil
}
