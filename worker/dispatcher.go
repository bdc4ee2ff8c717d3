package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"golang.org/x/sync/errgroup"

	"github.com/merchantsvc/svc/internal/tracing"
	"github.com/merchantsvc/svc/storage"
	"github.com/merchantsvc/svc/workflows"
)

// Dispatcher turns outbox rows into deliveries and starts one dispatch
// workflow per batch. It wakes on the outbox notification, polls every
// PollInterval in case one was missed, and every SweepInterval starts the
// batches whose workflow start failed (Temporal unreachable, a crash between
// commit and start). Several dispatchers may run: SKIP LOCKED keeps them off
// each other's rows and workflow ids derive from batch ids.
type Dispatcher struct {
	DB            *storage.DB
	Temporal      client.Client
	TaskQueue     string
	Schedule      []time.Duration
	Log           *slog.Logger
	BatchSize     int
	PollInterval  time.Duration
	SweepInterval time.Duration
	// MinBatchInterval spaces batches so events arriving one by one coalesce:
	// each batch costs one workflow, and the workflow rate is what Temporal
	// bounds (docs/benchmarks.md). It adds at most this much latency.
	MinBatchInterval time.Duration
	// StartConcurrency bounds the order-placed workflow starts in flight.
	StartConcurrency int
	// LostStartAge is how old a row without its workflow must be before the
	// sweep starts it (default 10 s), so it does not race the request that
	// is starting it.
	LostStartAge time.Duration
	// Tracing, when on, gives each webhook dispatch a span linked to the
	// traces of its events.
	Tracing *tracing.Tracing
}

func (d *Dispatcher) defaults() {
	if d.BatchSize == 0 {
		d.BatchSize = 500
	}
	if d.PollInterval == 0 {
		d.PollInterval = time.Second
	}
	if d.SweepInterval == 0 {
		d.SweepInterval = 60 * time.Second
	}
	if d.MinBatchInterval == 0 {
		d.MinBatchInterval = 100 * time.Millisecond
	}
	if d.LostStartAge == 0 {
		d.LostStartAge = 10 * time.Second
	}
	if d.StartConcurrency == 0 {
		d.StartConcurrency = 8
	}
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
}

// Run dispatches until ctx ends. The outbox and the per-row workflow starts
// (order placements, proof hashes, e-invoice syncs) run in two loops, so a
// burst of orders, each needing its own workflow start, never holds back the
// webhook batches, which need one start per few hundred deliveries.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.defaults()
	outboxWake, startsWake := make(chan struct{}, 1), make(chan struct{}, 1)
	go d.listen(ctx, outboxWake, startsWake)
	starts := make(chan struct{})
	go func() {
		defer close(starts)
		d.loop(ctx, startsWake, d.startRowWorkflows, nil)
	}()
	sweep := time.NewTicker(d.SweepInterval)
	defer sweep.Stop()
	d.Sweep(ctx, 0)
	d.loop(ctx, outboxWake, d.drainOutbox, sweep.C)
	<-starts
	return nil
}

// loop runs round on every wake, on every PollInterval in case a wake was
// missed, and no more often than MinBatchInterval so that events arriving
// one by one gather into one round. A tick on sweep starts the batches whose
// workflow start was lost.
func (d *Dispatcher) loop(ctx context.Context, wake <-chan struct{}, round func(context.Context), sweep <-chan time.Time) {
	poll := time.NewTicker(d.PollInterval)
	defer poll.Stop()
	for {
		started := time.Now()
		round(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(started.Add(d.MinBatchInterval))):
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-poll.C:
		case <-sweep:
			d.Sweep(ctx, d.SweepInterval/2)
		}
	}
}

// listen signals every wake channel on each outbox notification,
// reconnecting on failure.
func (d *Dispatcher) listen(ctx context.Context, wakes ...chan<- struct{}) {
	for ctx.Err() == nil {
		err := func() error {
			listener, err := d.DB.Listen(ctx, storage.OutboxChannel)
			if err != nil {
				return err
			}
			defer listener.Close(ctx)
			for {
				if err := listener.Wait(ctx); err != nil {
					return err
				}
				for _, wake := range wakes {
					select {
					case wake <- struct{}{}:
					default:
					}
				}
			}
		}()
		if ctx.Err() == nil {
			d.Log.Warn("outbox listener", slog.Any("error", err))
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}
}

// DispatchPending runs one round of both loops: the row workflows' starts,
// then the outbox drain.
func (d *Dispatcher) DispatchPending(ctx context.Context) {
	d.defaults()
	d.startRowWorkflows(ctx)
	d.drainOutbox(ctx)
}

// startRowWorkflows starts the workflows that belong to one row each: the
// order-placed workflow of new orders, the hash of uploaded proofs and the
// e-invoice syncs.
func (d *Dispatcher) startRowWorkflows(ctx context.Context) {
	d.startPlacements(ctx)
	d.startProofHashes(ctx)
	d.startEInvoiceSyncs(ctx)
	d.startWaybills(ctx)
	d.startGatewayRefunds(ctx)
	d.startInvitationMails(ctx)
	d.startAccountMails(ctx)
	d.startGatewayChangeMails(ctx)
	d.startCollectionRebuilds(ctx)
	d.startGiftCardMails(ctx)
	d.startSignInCodes(ctx)
}

// drainOutbox turns the outbox into batches of deliveries until it is empty
// and starts one dispatch workflow per batch.
//
// Two claimers take rounds side by side (SKIP LOCKED keeps them apart),
// and a round's workflows start while its claimer takes the next: a
// backlog turns into deliveries at the pace of two claims, not of one
// claim and its starts after another.
func (d *Dispatcher) drainOutbox(ctx context.Context) {
	var claimers sync.WaitGroup
	for range outboxClaimers {
		claimers.Go(func() { d.claimOutbox(ctx) })
	}
	claimers.Wait()
}

// outboxClaimers is how many claims of the outbox a dispatcher runs at once.
const outboxClaimers = 2

// claimOutbox claims rounds of the outbox until a round comes back short.
func (d *Dispatcher) claimOutbox(ctx context.Context) {
	var starts sync.WaitGroup
	defer starts.Wait()
	for ctx.Err() == nil {
		batches, events, err := d.DB.DispatchOutbox(ctx, d.BatchSize)
		if err != nil {
			if ctx.Err() == nil {
				d.Log.Error("dispatch outbox", slog.Any("error", err))
			}
			return
		}
		starts.Go(func() {
			for _, batch := range batches {
				// The dispatch gets a trace of its own, linked to the
				// traces that wrote its events.
				sctx, span := d.Tracing.StartLinked(ctx, "webhook dispatch", batch.TraceParents)
				d.start(sctx, batch)
				span.End()
			}
		})
		if events < d.BatchSize {
			return
		}
	}
}

// Sweep starts the batches whose workflow has not been recorded as started
// for at least olderThan, and the lost starts of images, imports and
// requeued deliveries (at least LostStartAge old).
func (d *Dispatcher) Sweep(ctx context.Context, olderThan time.Duration) {
	d.defaults()
	batches, err := d.DB.FindUnstartedBatches(ctx, olderThan)
	if err != nil {
		if ctx.Err() == nil {
			d.Log.Error("find unstarted batches", slog.Any("error", err))
		}
		return
	}
	for _, b := range batches {
		d.start(ctx, b)
	}
	d.startLostWork(ctx, max(olderThan, d.LostStartAge))
}

// startLostWork starts the workflows the API wrote rows for but could not
// start (Temporal unreachable, a crash between commit and start). Ids derive
// from the rows under REJECT_DUPLICATE, so a start the API did make is not
// made twice: it is only recorded.
func (d *Dispatcher) startLostWork(ctx context.Context, olderThan time.Duration) {
	images, imports, ladders, err := d.DB.FindLostStarts(ctx, olderThan, 100)
	if err != nil {
		if ctx.Err() == nil {
			d.Log.Error("find lost workflow starts", slog.Any("error", err))
		}
		return
	}
	var work []rowStart
	for _, ref := range images {
		store := workflows.StoreLabel(ref.StoreSubdomain, ref.StoreID)
		work = append(work, rowStart{d.TaskQueue, workflows.ProductImageWorkflowID(ref.ID),
			workflows.Work{Kind: workflows.KindProductImage, StoreID: ref.StoreID, ResourceID: ref.ID,
				Summary: "image of product " + ref.ProductID.String()[:8] + " · " + store},
			workflows.ProductImage, workflows.ProductImageInput{StoreID: ref.StoreID, ProductID: ref.ProductID, ImageID: ref.ID},
			func() error { return d.DB.MarkImageStarted(ctx, ref.StoreID, ref.ID) }})
	}
	for _, ref := range imports {
		store := workflows.StoreLabel(ref.StoreSubdomain, ref.StoreID)
		work = append(work, rowStart{d.TaskQueue, workflows.ProductImportWorkflowID(ref.ID),
			workflows.Work{Kind: workflows.KindProductImport, StoreID: ref.StoreID, ResourceID: ref.ID, Summary: "product import · " + store},
			workflows.ProductImport, workflows.ProductImportInput{StoreID: ref.StoreID, ImportID: ref.ID},
			func() error { return d.DB.MarkImportStarted(ctx, ref.StoreID, ref.ID) }})
	}
	for _, ref := range ladders {
		store := workflows.StoreLabel(ref.StoreSubdomain, ref.StoreID)
		work = append(work, rowStart{workflows.WebhookTaskQueue(d.TaskQueue), workflows.RedeliveryWorkflowID(ref.ID, ref.From),
			workflows.DeliveryWork(ref.StoreID, ref.ID, "", ref.From, store), workflows.Delivery,
			workflows.DeliveryInput{StoreID: ref.StoreID, DeliveryID: ref.ID, Schedule: workflows.RedeliverySchedule(d.Schedule), NextAttempt: ref.From},
			func() error { return d.DB.MarkLadderStarted(ctx, ref.StoreID, ref.ID, ref.From) }})
	}
	media, err := d.DB.FindLostMediaStarts(ctx, olderThan, 100)
	if err != nil {
		if ctx.Err() == nil {
			d.Log.Error("find lost media starts", slog.Any("error", err))
		}
		return
	}
	for _, ref := range media {
		store := workflows.StoreLabel(ref.StoreSubdomain, ref.StoreID)
		work = append(work, rowStart{d.TaskQueue, workflows.MediaWorkflowID(ref.ID),
			workflows.Work{Kind: workflows.KindMedia, StoreID: ref.StoreID, ResourceID: ref.ID, Summary: workflows.MediaSummary(ref.ID.String()[:8], store)},
			workflows.Media, workflows.MediaInput{StoreID: ref.StoreID, MediaID: ref.ID},
			func() error { return d.DB.MarkMediaStarted(ctx, ref.StoreID, ref.ID) }})
	}
	cards, err := d.DB.FindCardPaymentsDue(ctx, olderThan, 100)
	if err != nil {
		if ctx.Err() == nil {
			d.Log.Error("find lost card payment starts", slog.Any("error", err))
		}
		return
	}
	for _, ref := range cards {
		store := workflows.StoreLabel(ref.StoreSubdomain, ref.StoreID)
		work = append(work, rowStart{d.TaskQueue, workflows.CardPaymentWorkflowID(ref.OrderID),
			workflows.CardPaymentWork(ref.StoreID, ref.OrderID, ref.OrderNumber, store),
			workflows.CardPayment, workflows.CardPaymentInput{StoreID: ref.StoreID, OrderID: ref.OrderID},
			func() error { return d.DB.MarkCardPaymentStarted(ctx, ref.StoreID, ref.OrderID) }})
	}
	for _, id := range d.startRows(ctx, "lost workflow", enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, work) {
		d.Log.Info("started lost workflow", slog.String("workflow_id", id))
	}
}

// rowStart is the workflow of one row: the queue and the id it starts
// under (derived from the row), what the Temporal UI lists it as, the
// workflow and its input, and how the row records that it started.
type rowStart struct {
	queue, id string
	work      workflows.Work
	workflow  any
	input     any
	mark      func() error
}

// startRows starts each row's workflow in turn under policy and records the
// start with its row, answering the ids it started. Under ALLOW_DUPLICATE a
// run still going under the id leaves its row for the next round. The first
// start or mark that fails ends the round (Temporal or Postgres unreachable):
// the next round tries again, and a start made but not marked is found then.
func (d *Dispatcher) startRows(ctx context.Context, what string, policy enumspb.WorkflowIdReusePolicy, rows []rowStart) (started []string) {
	for _, row := range rows {
		running, err := d.startOnce(ctx, row.queue, row.id, row.work, policy, row.workflow, row.input)
		if err != nil {
			d.Log.Warn("start "+what, slog.String("workflow_id", row.id), slog.Any("error", err))
			return started
		}
		if running {
			continue // taken next round
		}
		if err := row.mark(); err != nil {
			d.Log.Error("mark "+what+" started", slog.String("workflow_id", row.id), slog.Any("error", err))
			return started
		}
		started = append(started, row.id)
	}
	return started
}

// startDue starts the workflows of the rows find answers (a round of at
// most 100), each made by start, through startRows.
func startDue[T any](ctx context.Context, d *Dispatcher, what string, policy enumspb.WorkflowIdReusePolicy,
	find func(context.Context, int) ([]T, error), start func(T) rowStart) {
	due, err := find(ctx, 100)
	if err != nil {
		if ctx.Err() == nil {
			d.Log.Error("find rows due", slog.String("work", what), slog.Any("error", err))
		}
		return
	}
	rows := make([]rowStart, 0, len(due))
	for _, row := range due {
		rows = append(rows, start(row))
	}
	d.startRows(ctx, what, policy, rows)
}

// startOnce starts a workflow whose id is derived from a row. Under
// REJECT_DUPLICATE an id used before counts as started (the row's work was
// taken once already); under ALLOW_DUPLICATE it means a run is still going,
// which startOnce reports as running so the caller leaves the row for later.
func (d *Dispatcher) startOnce(ctx context.Context, queue, id string, work workflows.Work, policy enumspb.WorkflowIdReusePolicy, workflow, input any) (running bool, err error) {
	opts := work.StartOptions(id, queue)
	opts.WorkflowIDReusePolicy, opts.WorkflowExecutionErrorWhenAlreadyStarted = policy, true
	// Eager start: when this process's worker polls the queue and has a
	// free slot, the start's answer carries the first workflow task and
	// the worker runs it at once, skipping the server's transfer task,
	// matching and a poll (docs/decisions.md). Without one it is a plain
	// start.
	opts.EnableEagerStart = true
	_, err = d.Temporal.ExecuteWorkflow(ctx, opts, workflow, input)
	var already *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &already) {
		return policy == enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE, nil
	}
	return false, err
}

func (d *Dispatcher) start(ctx context.Context, batch storage.Batch) {
	batchID := batch.ID
	store := workflows.StoreLabel(batch.StoreSubdomain, batch.StoreID)
	work := workflows.Work{Kind: workflows.KindWebhookDispatch, StoreID: batch.StoreID, ResourceID: batchID,
		Summary: fmt.Sprintf("%d first attempts · %s", batch.Deliveries, store)}
	_, err := d.startOnce(ctx, workflows.WebhookTaskQueue(d.TaskQueue), workflows.DispatchWorkflowID(batchID), work, enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		workflows.Dispatch, workflows.DispatchInput{BatchID: batchID, Schedule: d.Schedule, Store: store, Shape: workflows.DispatchShape})
	if err != nil {
		// Left unstarted: the next sweep tries again.
		d.Log.Warn("start dispatch workflow", slog.String("batch_id", batchID.String()), slog.Any("error", err))
		return
	}
	if err := d.DB.MarkBatchStarted(ctx, batchID); err != nil {
		d.Log.Error("mark batch started", slog.Any("error", err))
	}
}

// startPlacements starts the order-placed workflow of every order committed
// since the last round. Orders are placed without waiting on Temporal; the
// workflow id derives from the order, so no order runs its side effects twice.
// Starts run StartConcurrency at a time: each is one round trip to Temporal,
// and one at a time bounded a busy store to Temporal's latency (about 40
// orders a second on the dev server, docs/benchmarks.md).
func (d *Dispatcher) startPlacements(ctx context.Context) {
	const page = 100
	for ctx.Err() == nil {
		refs, err := d.DB.FindOrdersAwaitingPlacement(ctx, page)
		if err != nil {
			if ctx.Err() == nil {
				d.Log.Error("find orders awaiting placement", slog.Any("error", err))
			}
			return
		}
		var (
			failed  atomic.Bool
			g       errgroup.Group
			mu      sync.Mutex
			started []storage.OrderRef
		)
		g.SetLimit(d.StartConcurrency)
		for _, ref := range refs {
			g.Go(func() error {
				if failed.Load() {
					return nil
				}
				// The start, and so the workflow, joins the trace of the
				// request that placed the order.
				work := workflows.Work{Kind: workflows.KindOrderPlaced, StoreID: ref.StoreID, ResourceID: ref.OrderID, OrderNumber: ref.OrderNumber,
					Summary: ref.OrderNumber + " · " + workflows.StoreLabel(ref.StoreSubdomain, ref.StoreID) + " · " + workflows.OrderPlacedSideEffects}
				_, err := d.startOnce(tracing.ContinueFrom(ctx, ref.TraceParent), d.TaskQueue, workflows.OrderPlacedWorkflowID(ref.OrderID), work, enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
					workflows.OrderPlaced, workflows.OrderPlacedInput{StoreID: ref.StoreID, OrderID: ref.OrderID, Shape: workflows.OrderPlacedShape})
				if err != nil {
					// Temporal unreachable: the next round tries again.
					failed.Store(true)
					d.Log.Warn("start order-placed workflow", slog.String("order_id", ref.OrderID.String()), slog.Any("error", err))
					return nil
				}
				mu.Lock()
				started = append(started, ref.OrderRef)
				mu.Unlock()
				return nil
			})
		}
		_ = g.Wait()
		// The round's starts are marked together: an order whose start is
		// not marked yet is started again by the next round, which finds
		// its workflow and marks it.
		if err := d.DB.MarkPlacementsStarted(ctx, started); err != nil {
			failed.Store(true)
			d.Log.Error("mark placements started", slog.Any("error", err))
		}
		if failed.Load() || len(refs) < page {
			return
		}
	}
}

// startProofHashes starts the payment-proof workflow of every uploaded proof
// not yet taken; the id derives from the proof, so none is hashed twice.
func (d *Dispatcher) startProofHashes(ctx context.Context) {
	startDue(ctx, d, "payment proof hash", enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, d.DB.FindProofsAwaitingHash,
		func(p storage.ProofToHash) rowStart {
			return rowStart{d.TaskQueue, workflows.PaymentProofWorkflowID(p.ProofID),
				workflows.Work{Kind: workflows.KindPaymentProof, StoreID: p.StoreID, ResourceID: p.ProofID,
					Summary: "payment proof hash · " + workflows.StoreLabel(p.StoreSubdomain, p.StoreID)},
				workflows.PaymentProof, workflows.PaymentProofInput{StoreID: p.StoreID, ProofID: p.ProofID, ImageKey: p.ImageKey},
				func() error { return d.DB.MarkProofHashStarted(ctx, p.StoreID, p.ProofID) }}
		})
}

// startEInvoiceSyncs starts a sync for every e-invoice with news for the
// authority. An invoice's syncs share one workflow id: while one runs, a new
// change waits for the next round rather than racing it.
func (d *Dispatcher) startEInvoiceSyncs(ctx context.Context) {
	startDue(ctx, d, "e-invoice sync", enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE, d.DB.FindInvoicesAwaitingSync,
		func(change storage.InvoiceChange) rowStart {
			ref := change.InvoiceRef
			return rowStart{d.TaskQueue, workflows.EInvoiceWorkflowID(ref.ID),
				workflows.Work{Kind: workflows.KindEInvoiceSync, StoreID: ref.StoreID, ResourceID: ref.ID,
					Summary: "e-invoice sync · " + workflows.StoreLabel(change.StoreSubdomain, ref.StoreID)},
				workflows.EInvoiceSync, workflows.EInvoiceSyncInput{StoreID: ref.StoreID, InvoiceID: ref.ID},
				func() error { return d.DB.MarkInvoiceSyncStarted(ctx, change) }}
		})
}

// startWaybills starts the render of every waybill asked for (a new
// shipment, a change of its carrier details, POST …/waybill). A shipment's
// renders share one workflow id: while one runs, the newer request waits
// for the next round.
func (d *Dispatcher) startWaybills(ctx context.Context) {
	startDue(ctx, d, "waybill", enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE, d.DB.FindWaybillsDue,
		func(w storage.WaybillRequest) rowStart {
			return rowStart{d.TaskQueue, workflows.ShipmentWaybillWorkflowID(w.ShipmentID),
				workflows.Work{Kind: workflows.KindShipmentWaybill, StoreID: w.StoreID, ResourceID: w.ShipmentID,
					Summary: "waybill " + w.Number + " · " + workflows.StoreLabel(w.StoreSubdomain, w.StoreID)},
				workflows.ShipmentWaybill, workflows.ShipmentWaybillInput{StoreID: w.StoreID, ShipmentID: w.ShipmentID, Generation: w.Generation},
				func() error { return d.DB.MarkWaybillStarted(ctx, w) }}
		})
}

// startCollectionRebuilds starts the collection-rebuild:<id> workflow of
// every smart collection whose rules changed. A collection's rebuilds share
// one id: rules changed while one runs wait for the next round.
func (d *Dispatcher) startCollectionRebuilds(ctx context.Context) {
	startDue(ctx, d, "collection rebuild", enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE, d.DB.FindCollectionRebuildsDue,
		func(c storage.CollectionRebuild) rowStart {
			return rowStart{d.TaskQueue, workflows.CollectionRebuildWorkflowID(c.CollectionID),
				workflows.Work{Kind: workflows.KindCollectionRebuild, StoreID: c.StoreID, ResourceID: c.CollectionID,
					Summary: "collection " + c.Handle + " · " + workflows.StoreLabel(c.StoreSubdomain, c.StoreID)},
				workflows.CollectionRebuild, workflows.CollectionRebuildInput{StoreID: c.StoreID, CollectionID: c.CollectionID, Version: c.Version},
				func() error { return d.DB.MarkCollectionRebuildStarted(ctx, c) }}
		})
}

// startGatewayRefunds starts the refund:<id> workflow of every card refund
// going back through the gateway.
func (d *Dispatcher) startGatewayRefunds(ctx context.Context) {
	startDue(ctx, d, "gateway refund", enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, d.DB.FindGatewayRefundsDue,
		func(r storage.GatewayRefundDue) rowStart {
			return rowStart{d.TaskQueue, workflows.RefundWorkflowID(r.RefundID),
				workflows.Work{Kind: workflows.KindRefund, StoreID: r.StoreID, ResourceID: r.RefundID, OrderNumber: r.OrderNumber,
					Summary: "card refund · " + r.OrderNumber + " · " + workflows.StoreLabel(r.StoreSubdomain, r.StoreID)},
				workflows.Refund, workflows.RefundInput{StoreID: r.StoreID, RefundID: r.RefundID},
				func() error { return d.DB.MarkGatewayRefundStarted(ctx, r.StoreID, r.RefundID) }}
		})
}

// startInvitationMails starts the invitation-mail:<id>:<n> workflow of each
// staff invitation mail a create or a resend asked for.
func (d *Dispatcher) startInvitationMails(ctx context.Context) {
	startDue(ctx, d, "invitation mail", enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, d.DB.FindInvitationMailsDue,
		func(m storage.InvitationMailDue) rowStart {
			return rowStart{d.TaskQueue, workflows.InvitationMailWorkflowID(m.InvitationID, m.Mail),
				workflows.Work{Kind: workflows.KindInvitationMail, StoreID: m.StoreID, ResourceID: m.InvitationID,
					Summary: "staff invitation · " + workflows.StoreLabel(m.StoreSubdomain, m.StoreID)},
				workflows.InvitationMail, workflows.InvitationMailInput{StoreID: m.StoreID, InvitationID: m.InvitationID, Mail: m.Mail},
				func() error { return d.DB.MarkInvitationMailStarted(ctx, m.StoreID, m.InvitationID, m.Mail) }}
		})
}

// startAccountMails starts the account-mail:<id> workflow of each password
// reset, email verification and sign-in lock mail asked for.
func (d *Dispatcher) startAccountMails(ctx context.Context) {
	startDue(ctx, d, "account mail", enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, d.DB.FindAccountMailsDue,
		func(m storage.AccountMailDue) rowStart {
			return rowStart{d.TaskQueue, workflows.AccountMailWorkflowID(m.ID),
				workflows.Work{Kind: workflows.KindAccountMail, ResourceID: m.ID, Summary: string(m.Kind) + " mail"},
				workflows.AccountMail, workflows.AccountMailInput{MailID: m.ID},
				func() error { return d.DB.MarkAccountMailStarted(ctx, m.ID) }}
		})
}

// startGiftCardMails starts the gift-card-mail:<id> workflow of each email
// send of a gift card's code (decisions §19), and gift-card-whatsapp:<id>
// of each WhatsApp send (§25).
func (d *Dispatcher) startGiftCardMails(ctx context.Context) {
	startDue(ctx, d, "gift card mail", enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, d.DB.FindGiftCardSendsDue,
		func(m storage.GiftCardSendDue) rowStart {
			if m.Channel == "whatsapp" {
				return rowStart{d.TaskQueue, workflows.GiftCardWhatsAppWorkflowID(m.ID),
					workflows.Work{Kind: workflows.KindGiftCardWhatsApp, StoreID: m.StoreID, ResourceID: m.ID,
						Summary: "gift card whatsapp · " + workflows.StoreLabel(m.StoreSubdomain, m.StoreID)},
					workflows.GiftCardWhatsApp, workflows.GiftCardMailInput{StoreID: m.StoreID, SendID: m.ID},
					func() error { return d.DB.MarkGiftCardSendStarted(ctx, m.StoreID, m.ID) }}
			}
			return rowStart{d.TaskQueue, workflows.GiftCardMailWorkflowID(m.ID),
				workflows.Work{Kind: workflows.KindGiftCardMail, StoreID: m.StoreID, ResourceID: m.ID,
					Summary: "gift card mail · " + workflows.StoreLabel(m.StoreSubdomain, m.StoreID)},
				workflows.GiftCardMail, workflows.GiftCardMailInput{StoreID: m.StoreID, SendID: m.ID},
				func() error { return d.DB.MarkGiftCardSendStarted(ctx, m.StoreID, m.ID) }}
		})
}

// startSignInCodes starts the customer-auth-code:<id> workflow of each
// buyer's sign-in challenge (decisions §24).
func (d *Dispatcher) startSignInCodes(ctx context.Context) {
	startDue(ctx, d, "sign-in code", enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, d.DB.FindSignInSendsDue,
		func(c storage.SignInSendDue) rowStart {
			return rowStart{d.TaskQueue, workflows.SignInCodeWorkflowID(c.ID),
				workflows.Work{Kind: workflows.KindSignInCode, StoreID: c.StoreID, ResourceID: c.ID,
					Summary: "sign-in code · " + workflows.StoreLabel(c.StoreSubdomain, c.StoreID)},
				workflows.SignInCode, workflows.SignInCodeInput{StoreID: c.StoreID, ChallengeID: c.ID},
				func() error { return d.DB.MarkSignInSendStarted(ctx, c.StoreID, c.ID) }}
		})
}

// startGatewayChangeMails starts the gateway-change-mail:<id> workflow of
// each change to a payment gateway's keys, which mails the store's owner.
func (d *Dispatcher) startGatewayChangeMails(ctx context.Context) {
	startDue(ctx, d, "gateway change mail", enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, d.DB.FindGatewayChangeMailsDue,
		func(m storage.GatewayChangeMailDue) rowStart {
			return rowStart{d.TaskQueue, workflows.GatewayChangeMailWorkflowID(m.ID),
				workflows.Work{Kind: workflows.KindGatewayChange, StoreID: m.StoreID, ResourceID: m.ID,
					Summary: "gateway change mail · " + workflows.StoreLabel(m.StoreSubdomain, m.StoreID)},
				workflows.GatewayChangeMail, workflows.GatewayChangeMailInput{StoreID: m.StoreID, MailID: m.ID},
				func() error { return d.DB.MarkGatewayChangeMailStarted(ctx, m.StoreID, m.ID) }}
		})
}
