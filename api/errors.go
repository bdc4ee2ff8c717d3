package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"go.temporal.io/sdk/temporal"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/internal/session"
	"github.com/merchantsvc/svc/internal/tracing"
	"github.com/merchantsvc/svc/storage"
)

// apiError is an error answer: the status and the body of decisions §1.
type apiError struct {
	Status      int
	Code        string
	Message     string
	MessageAr   string
	Fields      []wire.FieldError
	AllowedNext []string
	// Header is set on the response (an ETag beside a 412).
	Header http.Header
	// Current is the resource as it is now, beside a 412 (or the fresh
	// cart beside a checkout's 409).
	Current any
	// Conflicts names what an AREA_OVERLAP collides with.
	Conflicts any
	// Reason says why a discount does not apply (DISCOUNT_NOT_APPLICABLE).
	Reason           string
	RequiredSubtotal *int64
	// MemberCount says how many members hold a role (ROLE_IN_USE).
	MemberCount *int
	// Details carries what a refusal names beyond the fields, as
	// error.details (the theme's JSON Pointers beside CONTENT_IN_USE).
	Details any
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

type errorBody struct {
	Code             string            `json:"code"`
	Message          string            `json:"message"`
	MessageAr        string            `json:"message_ar"`
	RequestID        string            `json:"request_id"`
	Fields           []wire.FieldError `json:"fields,omitempty"`
	AllowedNext      *[]string         `json:"allowed_next,omitempty"`
	Reason           string            `json:"reason,omitempty"`
	RequiredSubtotal *int64            `json:"required_subtotal,omitempty"`
	Conflicts        any               `json:"conflicts,omitempty"`
	MemberCount      *int              `json:"member_count,omitempty"`
	Details          any               `json:"details,omitempty"`
}

type errorEnvelope struct {
	Success bool      `json:"success"`
	Error   errorBody `json:"error"`
	Current any       `json:"current,omitempty"`
}

func newError(status int, code, message, messageAr string) *apiError {
	return &apiError{Status: status, Code: code, Message: message, MessageAr: messageAr}
}

// The errors every endpoint may answer, English and Arabic.
var (
	errUnauthenticated = newError(http.StatusUnauthorized, "UNAUTHENTICATED",
		"Authentication required: send a valid bearer token or sign in", "المصادقة مطلوبة: أرسل رمز وصول صالحًا أو سجّل الدخول")
	errInvalidAppToken = newError(http.StatusUnauthorized, "INVALID_TOKEN",
		"Invalid or revoked app token", "رمز التطبيق غير صالح أو تم إلغاؤه")
	errBadLogin = newError(http.StatusUnauthorized, "UNAUTHENTICATED",
		"Invalid email or password", "البريد الإلكتروني أو كلمة المرور غير صحيحة")
	errStoreMismatch = newError(http.StatusForbidden, "STORE_MISMATCH",
		"This credential is not allowed to access this store", "لا يُسمح لبيانات الاعتماد هذه بالوصول إلى هذا المتجر")
	errStoreSuspended = newError(http.StatusForbidden, "STORE_SUSPENDED",
		"This store is suspended or closed; neither its members' sessions nor its tokens can use it until it is reactivated",
		"هذا المتجر موقوف أو مغلق؛ لا يمكن لجلسات أعضائه ولا لرموز الوصول استخدامه حتى يُعاد تفعيله")
	errTokenNotAllowed = newError(http.StatusForbidden, "TOKEN_NOT_ALLOWED",
		"This endpoint is only available to a signed-in merchant, not to access tokens", "هذه العملية متاحة للتاجر المسجّل دخوله فقط وليس لرموز الوصول")
	errCrossSiteRequest = newError(http.StatusForbidden, "CROSS_SITE_REQUEST",
		"This change was sent from another site with your session: make it from the merchant pages, or send an access token",
		"أُرسل هذا التغيير من موقع آخر بجلستك: نفّذه من صفحات التاجر أو أرسل رمز وصول")
	errNotFound = newError(http.StatusNotFound, "NOT_FOUND",
		"Resource not found", "المورد غير موجود")
	errRouteNotFound = newError(http.StatusNotFound, "NOT_FOUND",
		"No such endpoint", "لا توجد نقطة نهاية بهذا المسار")
	errMethodNotAllowed = newError(http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED",
		"Method not allowed on this endpoint", "الطريقة غير مسموح بها على نقطة النهاية هذه")
	errDuplicateSKU = newError(http.StatusConflict, "DUPLICATE_SKU",
		"A product or variant with this SKU already exists in the store", "يوجد منتج أو متغير بنفس رمز SKU في هذا المتجر")
	errVariantInUse = newError(http.StatusConflict, "VARIANT_IN_USE",
		"The variant is in an active cart or has reserved stock and cannot be deleted", "المتغير موجود في سلة نشطة أو له مخزون محجوز ولا يمكن حذفه")
	errLastVariant = newError(http.StatusConflict, "LAST_VARIANT",
		"A product keeps at least one variant; delete the product instead", "يجب أن يبقى للمنتج متغير واحد على الأقل؛ احذف المنتج بدلًا من ذلك")
	errIdempotencyInProgress = newError(http.StatusConflict, "IDEMPOTENCY_IN_PROGRESS",
		"A request with this Idempotency-Key is still being processed", "طلب بنفس مفتاح عدم التكرار ما زال قيد المعالجة")
	errIdempotencyReused = newError(http.StatusUnprocessableEntity, "IDEMPOTENCY_KEY_REUSED",
		"This Idempotency-Key was used with a different request", "تم استخدام مفتاح عدم التكرار هذا مع طلب مختلف")
	errRateLimited = newError(http.StatusTooManyRequests, "RATE_LIMITED",
		"Rate limit exceeded: at most 300 requests per minute per token", "تم تجاوز حد الطلبات: 300 طلب في الدقيقة لكل رمز كحد أقصى")
	errInternal = newError(http.StatusInternalServerError, "INTERNAL",
		"Internal error", "خطأ داخلي")
	errServerBusy = &apiError{Status: http.StatusServiceUnavailable, Code: "SERVER_BUSY",
		Message: "Too many password checks at once; retry in a moment", MessageAr: "عمليات تحقق كثيرة من كلمات المرور في الوقت نفسه؛ أعد المحاولة بعد لحظة",
		Header: http.Header{"Retry-After": {"1"}}}
	errProofLimit = newError(http.StatusConflict, "PROOF_LIMIT_REACHED",
		fmt.Sprintf("This order already has %d payment proofs; contact the store", storage.MaxProofsPerOrder),
		fmt.Sprintf("لهذا الطلب %d إثباتات دفع بالفعل؛ تواصل مع المتجر", storage.MaxProofsPerOrder))
	// errObjectStoreDown answers an upload the object store did not take;
	// nothing of it is left in progress.
	errObjectStoreDown = &apiError{Status: http.StatusServiceUnavailable, Code: "NOT_READY",
		Message: "The file store is not reachable; nothing was saved, try again shortly", MessageAr: "مخزن الملفات غير متاح؛ لم يُحفظ شيء، حاول مجددًا بعد قليل",
		Header: http.Header{"Retry-After": {"5"}}}
	errNotReady = newError(http.StatusServiceUnavailable, "NOT_READY",
		"A dependency is not reachable", "إحدى الخدمات المعتمد عليها غير متاحة")
)

// validationError is the 422 for a list of invalid fields.
func validationError(fields []wire.FieldError) *apiError {
	return &apiError{Status: http.StatusUnprocessableEntity, Code: "VALIDATION_FAILED",
		Message: "The request is invalid", MessageAr: "الطلب غير صالح", Fields: fields}
}

func conflictError(field, message string) *apiError {
	return &apiError{Status: http.StatusConflict, Code: "CONFLICT",
		Message: "Already exists: " + message, MessageAr: "موجود مسبقًا: " + field,
		Fields: []wire.FieldError{{Field: field, Code: "taken", Message: message, MessageAr: "القيمة مستخدمة مسبقًا"}}}
}

// toAPIError is the one place where errors become statuses.
func toAPIError(err error) *apiError {
	var (
		apiErr     *apiError
		refused    *wire.Error
		invalid    *storage.InvalidError
		conflict   *storage.ConflictError
		stock      *storage.StockError
		stockRule  *storage.StockConflictError
		transition *storage.TransitionError
		stale      *storage.StaleDraftError
		refusal    *temporal.ApplicationError
		throttled  *session.Throttled

		themeInvalid *storage.ThemeValidationError
		mediaInUse   *storage.MediaInUseError
	)
	if e := shipmentErrors(err); e != nil {
		return e
	}
	if e := returnErrors(err); e != nil {
		return e
	}
	if e := discountErrors(err); e != nil {
		return e
	}
	if e := staffErrors(err); e != nil {
		return e
	}
	if e := areaOverlapError(err); e != nil {
		return e
	}
	if e := collectionError(err); e != nil {
		return e
	}
	if e := contentErrors(err); e != nil {
		return e
	}
	if e := menuErrors(err); e != nil {
		return e
	}
	if e := giftCardErrors(err); e != nil {
		return e
	}
	switch {
	case errors.As(err, &apiErr):
		return apiErr
	case errors.As(err, &refused):
		return &apiError{Status: refused.Status, Code: refused.Code, Message: refused.Message, MessageAr: refused.MessageAr, Fields: refused.Fields}
	case errors.As(err, &stock):
		return &apiError{Status: http.StatusConflict, Code: "INSUFFICIENT_STOCK",
			Message:   fmt.Sprintf("Not enough stock for variant %s: %d available, %d requested", stock.VariantID, stock.Available, stock.Requested),
			MessageAr: fmt.Sprintf("المخزون غير كافٍ للمتغير %s: المتاح %d والمطلوب %d", stock.VariantID, stock.Available, stock.Requested),
			Fields: []wire.FieldError{{Field: fmt.Sprintf("lines[%d].variant_id", stock.Line), Code: "insufficient_stock",
				Message: stock.Error(), MessageAr: "المخزون غير كافٍ"}}}
	case errors.As(err, &stockRule):
		return stockConflictError(stockRule)
	case errors.As(err, &transition):
		return &apiError{Status: http.StatusConflict, Code: "INVALID_STATUS_TRANSITION",
			Message:     fmt.Sprintf("An order cannot move from %s to %s", transition.From, transition.To),
			MessageAr:   fmt.Sprintf("لا يمكن نقل الطلب من %s إلى %s", transition.From, transition.To),
			AllowedNext: request.AsStrings(transition.AllowedNext)}
	case errors.As(err, &themeInvalid):
		return themeValidationError(themeInvalid.Errors)
	case errors.As(err, &stale):
		return &apiError{Status: http.StatusPreconditionFailed, Code: "PRECONDITION_FAILED",
			Message:   "The draft changed since you read it; here is the current one",
			MessageAr: "تغيّرت المسودة منذ قراءتها؛ هذه هي النسخة الحالية",
			Header:    http.Header{"Etag": {stale.Current.ETag}},
			Current:   map[string]any{"draft": stale.Current.Draft, "etag": stale.Current.ETag}}
	case errors.As(err, &throttled):
		return &apiError{Status: http.StatusTooManyRequests, Code: "RATE_LIMITED",
			Message:   "Too many failed sign-ins or signups from this account or network; retry after the time in Retry-After",
			MessageAr: "محاولات دخول أو تسجيل فاشلة كثيرة من هذا الحساب أو الشبكة؛ أعد المحاولة بعد المدة المذكورة في Retry-After",
			Header:    http.Header{"Retry-After": {retryAfterSeconds(throttled.RetryAfter)}}}
	case errors.Is(err, session.ErrBusy):
		return errServerBusy
	case errors.As(err, &refusal):
		if e, known := refusals[refusal.Type()]; known {
			return e
		}
		return errInternal
	case errors.As(err, &invalid):
		return validationError([]wire.FieldError{{Field: invalid.Field, Code: invalid.Code, Message: invalid.Message, MessageAr: wire.ArabicFieldMessage(invalid.Code)}})
	case errors.As(err, &mediaInUse):
		return mediaInUseError(mediaInUse)
	case errors.As(err, &conflict):
		return conflictError(conflict.Field, conflict.Message)
	case errors.Is(err, storage.ErrNotFound):
		return errNotFound
	case errors.Is(err, storage.ErrDuplicateSKU):
		return errDuplicateSKU
	case errors.Is(err, storage.ErrVariantInUse):
		return errVariantInUse
	case errors.Is(err, storage.ErrLastVariant):
		return errLastVariant
	case errors.Is(err, storage.ErrIdempotencyInProgress):
		return errIdempotencyInProgress
	case errors.Is(err, storage.ErrIdempotencyReused):
		return errIdempotencyReused
	case errors.Is(err, storage.ErrOrderAlreadyPaid):
		return errOrderAlreadyPaid
	case errors.Is(err, storage.ErrOrderNotPaid):
		return errOrderNotPaid
	case errors.Is(err, storage.ErrPaymentNotReversible):
		return errPaymentNotReversible
	case errors.Is(err, storage.ErrRefundPending):
		return errRefundPending
	case errors.Is(err, storage.ErrRefundNotPending):
		return errRefundNotPending
	case errors.Is(err, storage.ErrRefundAutomatic):
		return errRefundAutomatic
	case errors.Is(err, storage.ErrProofLimit):
		return errProofLimit
	case errors.Is(err, storage.ErrProofNotReviewable):
		return errProofAlreadyReviewed
	case errors.Is(err, storage.ErrPaymentNotVoidable):
		return errPaymentNotVoidable
	case errors.Is(err, storage.ErrProofsNotAccepted):
		return errProofsNotAccepted
	case errors.Is(err, storage.ErrOrderClosedForPayment):
		return errOrderClosedForPayment
	case errors.Is(err, storage.ErrCartCheckedOut):
		return errCartCheckedOut
	case errors.Is(err, storage.ErrCheckoutNotAbandoned):
		return errCheckoutNotAbandoned
	case errors.Is(err, storage.ErrOrderShipped):
		return errOrderShipped
	case errors.Is(err, session.ErrBadLogin):
		return errBadLogin
	case errors.Is(err, storage.ErrCodeInvalid):
		return errCodeInvalid
	case errors.Is(err, storage.ErrCodeUsed):
		return errCodeUsed
	case errors.Is(err, storage.ErrCodeExpired):
		return errCodeExpired
	default:
		return errInternal
	}
}

// writeError is the one error writer: it answers with the error envelope. A
// 500 says only "internal error"; the cause goes to the request's log with
// the request id.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := toAPIError(err)
	if e.Status >= 500 {
		logged := storage.Redacted(err) // no Postgres row data in logs or spans
		attrs := []any{slog.String("request_id", requestID(r.Context())),
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Any("error", logged)}
		if traceID := tracing.TraceID(r.Context()); traceID != "" {
			attrs = append(attrs, slog.String("trace_id", traceID))
			tracing.RecordError(r.Context(), logged)
		}
		loggerFrom(r.Context()).ErrorContext(r.Context(), "request failed", attrs...)
	}
	for name, values := range e.Header {
		w.Header()[name] = values
	}
	encode(w, e.Status, errorEnvelope{Error: errorBody{
		Code: e.Code, Message: e.Message, MessageAr: e.MessageAr, RequestID: requestID(r.Context()),
		Fields: e.Fields, AllowedNext: allowedNext(e), Reason: e.Reason, RequiredSubtotal: e.RequiredSubtotal,
		Conflicts: e.Conflicts, MemberCount: e.MemberCount, Details: e.Details,
	}, Current: e.Current})
}

// allowedNext keeps an empty list visible ("allowed_next": []) on a transition
// error, and leaves the field out of every other error.
func allowedNext(e *apiError) *[]string {
	if e.Code != "INVALID_STATUS_TRANSITION" && e.Code != "INVALID_SHIPMENT_TRANSITION" && e.Code != "INVALID_RETURN_TRANSITION" {
		return nil
	}
	next := e.AllowedNext
	if next == nil {
		next = []string{}
	}
	return &next
}
