package dynamodb

// ItemName names the item a stream record came from as its writer knows
// it ("PIPELINE#orders / SENSOR#landed"), for messages and rejection
// events; "" for a record that is no item of anyone else's.
func ItemName(r Record) string {
	switch it := r.(type) {
	case SensorItem:
		return pipelinePK(it.PipelineID) + " / " + skSensorPrefix + it.Key
	case RerunRequest:
		return pipelinePK(it.PipelineID) + " / " + rerunRequestSK(it.ScheduleID, it.Period)
	case JobReport:
		if it.ID != "" {
			return pipelinePK(it.PipelineID) + " / " + it.ID
		}
		return pipelinePK(it.PipelineID) + " / " + jobSK(it.ScheduleID, it.Period, it.At)
	case ConfigItem:
		return pipelinePK(it.PipelineID) + " / " + skConfig
	case Ignored:
		return it.PK + " / " + it.SK
	}
	return ""
}
