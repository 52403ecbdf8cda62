package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Tables names the four tables of seed 003.
type Tables struct{ Control, JobLog, Rerun, Events string }

// TablesFor returns the tables of a deployment: "<prefix>-control",
// "<prefix>-joblog", "<prefix>-rerun" and "<prefix>-events".
func TablesFor(prefix string) Tables {
	return Tables{Control: prefix + "-control", JobLog: prefix + "-joblog", Rerun: prefix + "-rerun", Events: prefix + "-events"}
}

func (t Tables) all() []string { return []string{t.Control, t.JobLog, t.Rerun, t.Events} }

// index is a secondary index: its name and the attributes of its key.
// Global indexes project whole items (ALL), so a list read returns records
// without a read more per item; local ones project keys (createTable).
type index struct {
	name   string
	pk, sk string // attribute names; pk is "" for a local index (the table's PK)
	number bool   // the sort key is a number (seq), else a string
}

// The control table's indexes (docs/aws.md lists which read uses which).
// Cross-pipeline indexes have partition keys "<KIND>#<shard>", 16 of them
// per index, so no index has one hot partition; a read queries the 16 in
// parallel and merges them.
var (
	idxPipelines       = index{name: "pipelines", pk: "pipelinesPK", sk: "pipelinesSK"}
	idxSensorsChanged  = index{name: "sensors-changed", pk: "sensorsChangedPK", sk: "sensorsChangedSK"}
	idxActiveRuns      = index{name: "active-runs", pk: "activeRunsPK", sk: "activeRunsSK"}
	idxRunsByPeriod    = index{name: "runs-by-period", pk: "runsByPeriodPK", sk: "runsByPeriodSK"}
	idxRunsByUpdate    = index{name: "runs-by-update", pk: "runsByUpdatePK", sk: "runsByUpdateSK"}
	idxMarkersByPeriod = index{name: "markers-by-period", pk: "markersByPeriodPK", sk: "markersByPeriodSK"}
	idxMarkersByWrite  = index{name: "markers-by-write", pk: "markersByWritePK", sk: "markersByWriteSK"}
	idxTimersDue       = index{name: "timers-due", pk: "timersDuePK", sk: "timersDueSK"}
	idxTimersByKind    = index{name: "timers-by-kind", pk: "timersByKindPK", sk: "timersByKindSK"}

	// Local indexes: a pipeline's sensors by change, its runs by period,
	// its active runs by period. Each is sparse: only the items that
	// carry its sort key are in it.
	lsiChanged = index{name: "changed", sk: "changedSK"}
	lsiPeriod  = index{name: "period", sk: "periodSK"}
	lsiActive  = index{name: "active", sk: "activeSK"}

	controlGSIs = []index{idxPipelines, idxSensorsChanged, idxActiveRuns, idxRunsByPeriod, idxRunsByUpdate,
		idxMarkersByPeriod, idxMarkersByWrite, idxTimersDue, idxTimersByKind}
	controlLSIs = []index{lsiChanged, lsiPeriod, lsiActive}
)

// The events table's indexes: a shard's events of one pipeline, of one
// pipeline's period, of one type, each by seq (the shard's order).
var (
	idxEventsByPipeline = index{name: "events-by-pipeline", pk: "eventsByPipelinePK", sk: "seq", number: true}
	idxEventsByPeriod   = index{name: "events-by-period", pk: "eventsByPeriodPK", sk: "seq", number: true}
	idxEventsByType     = index{name: "events-by-type", pk: "eventsByTypePK", sk: "seq", number: true}

	eventGSIs = []index{idxEventsByPipeline, idxEventsByPeriod, idxEventsByType}
)

// tableSpec is one table's schema.
type tableSpec struct {
	name   string
	gsis   []index
	lsis   []index
	stream bool
}

func (t Tables) specs() []tableSpec {
	return []tableSpec{
		{name: t.Control, gsis: controlGSIs, lsis: controlLSIs, stream: true},
		{name: t.JobLog, stream: true},
		{name: t.Rerun},
		// A stream on the events table is an addition to seed 003: the
		// outbox publisher reads it (docs/aws.md).
		{name: t.Events, gsis: eventGSIs, stream: true},
	}
}

// tableWait bounds how long CreateTables and DeleteTables wait for a table
// to become ACTIVE or to go (seconds on DynamoDB Local, up to minutes on
// AWS for a table with indexes).
const tableWait = 5 * time.Minute

// CreateTables creates the four tables with their indexes, streams and TTL
// on `ttl`, pay-per-request, and waits (bounded) until each is ACTIVE. It
// is idempotent: a table that exists is left as it is, and its TTL turned
// on if it is off. It is the schema Terraform declares.
func CreateTables(ctx context.Context, client *dynamodb.Client, t Tables) error {
	for _, spec := range t.specs() {
		if err := createTable(ctx, client, spec); err != nil {
			return err
		}
	}
	for _, spec := range t.specs() {
		if err := waitActive(ctx, client, spec.name); err != nil {
			return err
		}
		if err := enableTTL(ctx, client, spec.name); err != nil {
			return err
		}
	}
	return nil
}

func createTable(ctx context.Context, client *dynamodb.Client, spec tableSpec) error {
	defs := map[string]types.ScalarAttributeType{attrPK: types.ScalarAttributeTypeS, attrSK: types.ScalarAttributeTypeS}
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(spec.name),
		BillingMode: types.BillingModePayPerRequest,
		KeySchema:   keySchema(attrPK, attrSK),
	}
	all := &types.Projection{ProjectionType: types.ProjectionTypeAll}
	for _, ix := range spec.gsis {
		defs[ix.pk] = types.ScalarAttributeTypeS
		defs[ix.sk] = ix.skType()
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName: aws.String(ix.name), KeySchema: keySchema(ix.pk, ix.sk), Projection: all})
	}
	// A local index projects the keys and the schedule (what a read of it
	// filters on) only: its queries fetch the items from the table (Select
	// ALL_ATTRIBUTES, consistent), and an item in a local index is not
	// held to a smaller size (DynamoDB Local counts a projected copy
	// against the item's 400 KB).
	keys := &types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{aSchedule}}
	for _, ix := range spec.lsis {
		defs[ix.sk] = ix.skType()
		in.LocalSecondaryIndexes = append(in.LocalSecondaryIndexes, types.LocalSecondaryIndex{
			IndexName: aws.String(ix.name), KeySchema: keySchema(attrPK, ix.sk), Projection: keys})
	}
	for name, typ := range defs {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: typ})
	}
	if spec.stream {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
	}
	_, err := client.CreateTable(ctx, in)
	var inUse *types.ResourceInUseException
	if errors.As(err, &inUse) {
		return nil // it exists (or is being created): CreateTables is idempotent
	}
	if err != nil {
		return fmt.Errorf("dynamodb: create table %s: %w", spec.name, err)
	}
	return nil
}

func (ix index) skType() types.ScalarAttributeType {
	if ix.number {
		return types.ScalarAttributeTypeN
	}
	return types.ScalarAttributeTypeS
}

func keySchema(pk, sk string) []types.KeySchemaElement {
	return []types.KeySchemaElement{
		{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
	}
}

func waitActive(ctx context.Context, client *dynamodb.Client, name string) error {
	w := dynamodb.NewTableExistsWaiter(client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 5 * time.Second
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, tableWait); err != nil {
		return fmt.Errorf("dynamodb: table %s did not become ACTIVE within %s: %w", name, tableWait, err)
	}
	return nil
}

func enableTTL(ctx context.Context, client *dynamodb.Client, name string) error {
	d, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
	if err != nil {
		return fmt.Errorf("dynamodb: describe TTL of %s: %w", name, err)
	}
	if s := d.TimeToLiveDescription; s != nil && (s.TimeToLiveStatus == types.TimeToLiveStatusEnabled || s.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		return nil
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(attrTTL), Enabled: aws.Bool(true)}})
	if err != nil {
		return fmt.Errorf("dynamodb: turn on TTL of %s: %w", name, err)
	}
	return nil
}

// DeleteTables deletes the four tables and waits (bounded) until they are
// gone; a table that does not exist is not an error.
func DeleteTables(ctx context.Context, client *dynamodb.Client, t Tables) error {
	var errs []error
	var gone []string
	for _, name := range t.all() {
		_, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		var nf *types.ResourceNotFoundException
		switch {
		case errors.As(err, &nf):
		case err != nil:
			errs = append(errs, fmt.Errorf("dynamodb: delete table %s: %w", name, err))
		default:
			gone = append(gone, name)
		}
	}
	w := dynamodb.NewTableNotExistsWaiter(client, func(o *dynamodb.TableNotExistsWaiterOptions) {
		o.MinDelay = 100 * time.Millisecond
		o.MaxDelay = 5 * time.Second
	})
	for _, name := range gone {
		if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)}, tableWait); err != nil {
			errs = append(errs, fmt.Errorf("dynamodb: table %s was not deleted within %s: %w", name, tableWait, err))
		}
	}
	return errors.Join(errs...)
}
