package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/internal/orderemail"
	"github.com/merchantsvc/svc/storage"
)

// OrderInput names an order.
type OrderInput struct {
	StoreID uuid.UUID
	OrderID uuid.UUID
}

// SideEffectResult says what a side effect did.
type SideEffectResult struct {
	Status string // succeeded, skipped, or StatusRefused by a resend's guard
	Detail string
}

// StatusRefused is a resend a guard refused; Detail names the guard.
const StatusRefused = "refused"

func (a *Activities) order(ctx context.Context, in OrderInput) (storage.Order, storage.StoreSettings, error) {
	o, err := a.DB.FindOrderByRef(ctx, in.StoreID, in.OrderID.String())
	if err != nil {
		return storage.Order{}, storage.StoreSettings{}, err
	}
	settings, err := a.DB.FindStoreSettings(ctx, in.StoreID)
	return o, settings, err
}

// start reads, in one round trip, whether a side effect was already
// recorded, the order and the store's settings.
func (a *Activities) start(ctx context.Context, in OrderInput, kind string) (storage.SideEffectStart, error) {
	return a.DB.FindSideEffectStart(ctx, in.StoreID, in.OrderID, kind)
}

func (a *Activities) skip(ctx context.Context, in OrderInput, kind, why string) (SideEffectResult, error) {
	err := a.DB.RecordSideEffect(ctx, in.StoreID, in.OrderID, kind, "skipped", map[string]string{"reason": why})
	return SideEffectResult{Status: "skipped", Detail: why}, err
}

// claimContact reports whether an automatic confirmation may go to contact
// now: the store sent none to it on channel within ContactInterval.
func (a *Activities) claimContact(ctx context.Context, o storage.Order, channel, contact string) (bool, error) {
	return a.DB.ClaimContactSend(ctx, o.StoreID, o.ID, channel, contact, a.contactInterval())
}

// contactInterval is ContactInterval, 10 minutes when unset.
func (a *Activities) contactInterval() time.Duration {
	if a.ContactInterval <= 0 {
		return 10 * time.Minute
	}
	return a.ContactInterval
}

// skipRepeat records a confirmation skipped because its contact had one
// within the interval; the merchant's resend still sends it.
func (a *Activities) skipRepeat(ctx context.Context, in OrderInput, kind string, err error) (SideEffectResult, error) {
	if err != nil {
		return SideEffectResult{}, err
	}
	return a.skip(ctx, in, kind, "this contact had a confirmation from the store within the last few minutes")
}

// SendOrderEmail sends the status email for the order's current status,
// once: the step of order-placed workflows begun before RunOrderSideEffects.
func (a *Activities) SendOrderEmail(ctx context.Context, in OrderInput) (SideEffectResult, error) {
	start, err := a.start(ctx, in, "email")
	if err != nil || start.Done {
		return SideEffectResult{Status: "skipped", Detail: "already sent"}, err
	}
	return a.runAlone(ctx, in, start.Order, a.planEmail(in, start.Order, start.Settings))
}

// sideEffect is one side effect of a placed order once the order is read:
// failed before it ran (err), skipped (skip, the reason), or to send, after
// claiming claim when it is set. send sends and records the outcome.
type sideEffect struct {
	kind  string
	err   error
	skip  string
	claim *storage.ContactClaim
	send  func(context.Context) (SideEffectResult, error)
}

// planEmail is the status email for the order's current status; a
// placed order's claims its address (one confirmation per contact within
// ContactInterval).
func (a *Activities) planEmail(in OrderInput, o storage.Order, settings storage.StoreSettings) sideEffect {
	e := sideEffect{kind: "email"}
	email, err := orderemail.Render(settings.Name, settings.DefaultLanguage, settings.Numerals, o, o.Status)
	switch {
	case err != nil:
		e.err = err
		return e
	case email.To == "":
		e.skip = "the customer has no email address"
		return e
	case o.Status == storage.OrderPending:
		e.claim = &storage.ContactClaim{Channel: "email", Contact: email.To}
	}
	e.send = func(ctx context.Context) (SideEffectResult, error) {
		if err := a.Mailer.Send(ctx, email.To, email.Subject, email.HTML); err != nil {
			return SideEffectResult{}, err
		}
		err := a.DB.RecordSideEffect(ctx, in.StoreID, in.OrderID, "email", "succeeded", map[string]string{"to": email.To, "subject": email.Subject})
		return SideEffectResult{Status: "succeeded", Detail: email.To}, err
	}
	return e
}

// runAlone runs one side effect with round trips of its own: a skip is
// recorded, a claim taken (a contact that had a confirmation lately is a
// skip), then the send.
func (a *Activities) runAlone(ctx context.Context, in OrderInput, o storage.Order, e sideEffect) (SideEffectResult, error) {
	switch {
	case e.err != nil:
		return SideEffectResult{}, e.err
	case e.skip != "":
		return a.skip(ctx, in, e.kind, e.skip)
	case e.claim != nil:
		if fresh, err := a.claimContact(ctx, o, e.claim.Channel, e.claim.Contact); err != nil || !fresh {
			return a.skipRepeat(ctx, in, e.kind, err)
		}
	}
	return e.send(ctx)
}

// ResendOrderEmail sends the current status email again, whatever was sent before.
func (a *Activities) ResendOrderEmail(ctx context.Context, in OrderInput) (SideEffectResult, error) {
	o, settings, err := a.order(ctx, in)
	if err != nil {
		return SideEffectResult{}, err
	}
	email, err := orderemail.Render(settings.Name, settings.DefaultLanguage, settings.Numerals, o, o.Status)
	if err != nil {
		return SideEffectResult{}, err
	}
	if email.To == "" {
		return SideEffectResult{Status: "skipped", Detail: "the customer has no email address"}, nil
	}
	return SideEffectResult{Status: "succeeded", Detail: email.To}, a.Mailer.Send(ctx, email.To, email.Subject, email.HTML)
}

// Chat guard refusals, which resend answers with 409 and distinct codes.
var (
	ErrChatDisabled    = errors.New("CHAT_DISABLED")
	ErrChatOptedOut    = errors.New("CHAT_OPTED_OUT")
	ErrChatNotApproved = errors.New("CHAT_TEMPLATE_NOT_APPROVED")
	ErrChatNoPhone     = errors.New("CHAT_NO_PHONE")
)

// ChatTemplateFor routes rule 5: a COD order of a store that confirms in
// chat gets the tap-to-confirm request; any other order the passive one.
func ChatTemplateFor(paymentMethod string, confirmInChat bool) string {
	if paymentMethod == "cod" && confirmInChat {
		return TemplateConfirmRequest
	}
	return TemplateConfirmation
}

// chatOptedOut reads whether the order's customer asked for no chat messages.
func (a *Activities) chatOptedOut(ctx context.Context, o storage.Order) bool {
	if o.CustomerID == nil {
		return false
	}
	c, err := a.DB.FindCustomerByID(ctx, o.StoreID, *o.CustomerID)
	return err == nil && c.ChatOptOut
}

// chatGuards checks the merchant toggle, the customer's opt-out and the
// template's approval, and picks the template.
func chatGuards(o storage.Order, s storage.StoreSettings, optedOut bool) (string, string, error) {
	if !s.ChatConfirmations {
		return "", "", ErrChatDisabled
	}
	cust := o.Customer
	if cust.Phone == nil {
		return "", "", ErrChatNoPhone
	}
	if optedOut {
		return "", "", ErrChatOptedOut
	}
	template := ChatTemplateFor(o.PaymentMethod, s.ConfirmInChat)
	if !slices.Contains(s.ChatTemplatesApproved, template) {
		return "", "", ErrChatNotApproved
	}
	return template, *cust.Phone, nil
}

// SendChatConfirmation sends the order's chat confirmation once: the step
// of order-placed workflows begun before RunOrderSideEffects.
func (a *Activities) SendChatConfirmation(ctx context.Context, in OrderInput) (SideEffectResult, error) {
	start, err := a.start(ctx, in, "chat")
	if err != nil || start.Done {
		return SideEffectResult{Status: "skipped", Detail: "already sent"}, err
	}
	return a.runAlone(ctx, in, start.Order, a.planChat(in, start.Order, start.Settings, a.chatOptedOut(ctx, start.Order)))
}

// planChat is the order's chat confirmation: a guard that holds makes it a
// skip, not a failure; otherwise it claims the phone.
func (a *Activities) planChat(in OrderInput, o storage.Order, settings storage.StoreSettings, optedOut bool) sideEffect {
	e := sideEffect{kind: "chat"}
	template, phone, err := chatGuards(o, settings, optedOut)
	if err != nil {
		e.skip = err.Error()
		return e
	}
	e.claim = &storage.ContactClaim{Channel: "chat", Contact: phone}
	e.send = func(ctx context.Context) (SideEffectResult, error) {
		status, err := a.sendChat(ctx, o, settings, template, phone)
		if err != nil {
			return SideEffectResult{}, err
		}
		err = a.DB.RecordSideEffect(ctx, in.StoreID, in.OrderID, "chat", "succeeded", map[string]string{"template": template, "status": status})
		return SideEffectResult{Status: "succeeded", Detail: template}, err
	}
	return e
}

// ResendChatConfirmation routes like the original send and keeps every
// guard; only the send-once check is bypassed. A guard that holds is
// returned as its error for the API to answer 409.
func (a *Activities) ResendChatConfirmation(ctx context.Context, in OrderInput) (SideEffectResult, error) {
	o, settings, err := a.order(ctx, in)
	if err != nil {
		return SideEffectResult{}, err
	}
	template, phone, err := chatGuards(o, settings, a.chatOptedOut(ctx, o))
	if err != nil {
		return SideEffectResult{Status: StatusRefused, Detail: err.Error()}, nil
	}
	status, err := a.sendChat(ctx, o, settings, template, phone)
	return SideEffectResult{Status: status, Detail: template}, err
}

// sendChat records the message, sends it, and records the outcome; a
// provider refusal is recorded as failed with its numeric code.
func (a *Activities) sendChat(ctx context.Context, o storage.Order, s storage.StoreSettings, template, phone string) (string, error) {
	id, err := a.DB.CreateChatMessage(ctx, o.StoreID, o.ID, template, phone)
	if err != nil {
		return "", err
	}
	chat, err := a.chatFor(ctx, o.StoreID)
	if err != nil {
		return "", err
	}
	cust := o.Customer
	providerID, sendErr := chat.SendTemplate(ctx, ChatMessage{To: phone, Template: template, Language: s.DefaultLanguage,
		Params:    []string{cust.Name, o.OrderNumber, storage.FormatPrice(o.Total, storage.CurrencyExponent(o.Currency)) + " " + o.Currency},
		Reference: o.ID.String()})
	var ce *ChatError
	switch {
	case sendErr == nil:
		return "sent", a.DB.UpdateChatMessage(ctx, o.StoreID, id, "sent", &providerID, nil, "")
	case errors.As(sendErr, &ce):
		if err := a.DB.UpdateChatMessage(ctx, o.StoreID, id, "failed", nil, &ce.Code, ce.Message); err != nil {
			return "", err
		}
		return "failed", nil
	default:
		_ = a.DB.UpdateChatMessage(ctx, o.StoreID, id, "failed", nil, nil, sendErr.Error())
		return "", fmt.Errorf("send chat: %w", sendErr)
	}
}

// CreateOrderShipment opens a shipment when the store asks for automatic
// ones: the step of order-placed workflows begun before RunOrderSideEffects.
func (a *Activities) CreateOrderShipment(ctx context.Context, in OrderInput) (SideEffectResult, error) {
	start, err := a.DB.FindSideEffectSettings(ctx, in.StoreID, in.OrderID, "shipment")
	if err != nil || start.Done {
		return SideEffectResult{Status: "skipped", Detail: "already created"}, err
	}
	return a.runAlone(ctx, in, start.Order, a.planShipment(in, start.Settings))
}

// planShipment is the automatic shipment, when the store asks for them.
func (a *Activities) planShipment(in OrderInput, settings storage.StoreSettings) sideEffect {
	e := sideEffect{kind: "shipment"}
	if !settings.AutoCreateShipment {
		e.skip = "automatic shipments are off"
		return e
	}
	e.send = func(ctx context.Context) (SideEffectResult, error) {
		return SideEffectResult{Status: "succeeded"}, a.DB.CreateShipmentForOrder(ctx, in.StoreID, in.OrderID)
	}
	return e
}

// OrderSideEffectKinds are a placed order's side effects, in the order
// their outcomes are reported and a failing one is flagged.
var OrderSideEffectKinds = []string{"email", "chat", "shipment"}

// OrderSideEffectsResult is each side effect's outcome, by kind.
type OrderSideEffectsResult struct {
	Steps map[string]SideEffectResult
}

// ErrSideEffectsFailed is the type of the ApplicationError
// RunOrderSideEffects returns when a side effect failed. Its details are
// the attempt's OrderSideEffectsResult: the failed side effects with
// Status "failed" and their error as Detail, the others as they ended.
const ErrSideEffectsFailed = "SideEffectsFailed"

// RunOrderSideEffects runs a placed order's side effects (the status
// email, the chat confirmation, an automatic shipment): one read for all
// of them; one round trip for their contact claims and their skips; then
// the sends side by side. Each records its outcome as it ends, so a retry
// runs only those not recorded; one recorded before is reported as
// recorded.
func (a *Activities) RunOrderSideEffects(ctx context.Context, in OrderInput) (OrderSideEffectsResult, error) {
	start, err := a.DB.FindOrderSideEffectsStart(ctx, in.StoreID, in.OrderID)
	if err != nil {
		return OrderSideEffectsResult{}, err
	}
	o, settings := start.Order, start.Settings
	results := make([]SideEffectResult, len(OrderSideEffectKinds))
	errs := make([]error, len(OrderSideEffectKinds))
	var (
		pending []int // indexes of the side effects to run
		plans   = make([]sideEffect, len(OrderSideEffectKinds))
		claims  []storage.ContactClaim // of the pending ones that claim, in their order
		skips   []storage.SideEffectSkip
	)
	for i, kind := range OrderSideEffectKinds {
		if status, ok := start.Recorded[kind]; ok {
			results[i] = SideEffectResult{Status: status, Detail: "recorded before"}
			continue
		}
		switch kind {
		case "email":
			plans[i] = a.planEmail(in, o, settings)
		case "chat":
			plans[i] = a.planChat(in, o, settings, start.ChatOptOut)
		case "shipment":
			plans[i] = a.planShipment(in, settings)
		}
		e := plans[i]
		switch {
		case e.err != nil:
			errs[i] = e.err
		case e.skip != "":
			skips = append(skips, storage.SideEffectSkip{Kind: kind, Reason: e.skip})
			results[i] = SideEffectResult{Status: "skipped", Detail: e.skip}
		default:
			if e.claim != nil {
				claims = append(claims, *e.claim)
			}
			pending = append(pending, i)
		}
	}
	fresh, err := a.DB.BeginSideEffects(ctx, in.StoreID, in.OrderID, claims, a.contactInterval(), skips)
	if err != nil {
		return OrderSideEffectsResult{}, err
	}
	var wg sync.WaitGroup
	for _, i := range pending {
		if plans[i].claim != nil {
			claimed := fresh[0]
			fresh = fresh[1:]
			if !claimed {
				results[i], errs[i] = a.skipRepeat(ctx, in, OrderSideEffectKinds[i], nil)
				continue
			}
		}
		wg.Go(func() { results[i], errs[i] = plans[i].send(ctx) })
	}
	wg.Wait()
	out := OrderSideEffectsResult{Steps: map[string]SideEffectResult{}}
	var failed []string
	for i, kind := range OrderSideEffectKinds {
		if errs[i] != nil {
			out.Steps[kind] = SideEffectResult{Status: "failed", Detail: errs[i].Error()}
			failed = append(failed, kind+": "+errs[i].Error())
			continue
		}
		out.Steps[kind] = results[i]
	}
	if len(failed) > 0 {
		return OrderSideEffectsResult{}, temporal.NewApplicationError(strings.Join(failed, "; "), ErrSideEffectsFailed, out)
	}
	return out, nil
}

// RecordOrderRollup is the step order-placed workflows started before
// analytics (§17) still schedule. The order's own transaction counted it
// (and the migration counted those placed before), so it does nothing.
func (a *Activities) RecordOrderRollup(ctx context.Context, in OrderInput) (SideEffectResult, error) {
	return SideEffectResult{Status: "skipped"}, nil
}

// FlagSideEffectInput names the order, the side effect that kept failing
// (email, chat, shipment, rollup) and its last error.
type FlagSideEffectInput struct {
	StoreID uuid.UUID
	OrderID uuid.UUID
	Kind    string
	Reason  string
}

// FlagSideEffectResult is empty: the flag is recorded on the order.
type FlagSideEffectResult struct{}

// FlagSideEffectFailure records a side effect that kept failing and flags
// the order for a person; the order itself is untouched.
func (a *Activities) FlagSideEffectFailure(ctx context.Context, in FlagSideEffectInput) (FlagSideEffectResult, error) {
	recorded, err := a.DB.RecordSideEffectFailure(ctx, in.StoreID, in.OrderID, in.Kind, in.Reason)
	if err != nil || !recorded {
		return FlagSideEffectResult{}, err
	}
	return FlagSideEffectResult{}, a.DB.FlagOrder(ctx, in.StoreID, in.OrderID, storage.ReasonSideEffectFailed+":"+in.Kind,
		fmt.Sprintf("The %s step after the order was placed failed: %s", in.Kind, in.Reason),
		fmt.Sprintf("فشلت خطوة %s بعد إنشاء الطلب", in.Kind), map[string]string{"kind": in.Kind})
}
