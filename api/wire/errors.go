// Package wire reads what a request sends: a JSON body into its request
// type, checked by the type's Valid (Decode), a multipart upload
// (ReadUpload), and the fingerprint an Idempotency-Key compares. It needs
// nothing of the server, so its fuzz test links nothing but it; what it
// refuses is an *Error, which the API answers with its status.
package wire

import "net/http"

// Error is a body refused before its handler reads it: the status and the
// body of decisions §1 (the API's toAPIError answers it as it is).
type Error struct {
	Status    int
	Code      string
	Message   string
	MessageAr string
	Fields    []FieldError
}

// Error names the refusal.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

func newError(status int, code, message, messageAr string) *Error {
	return &Error{Status: status, Code: code, Message: message, MessageAr: messageAr}
}

// validationError is the 422 for a list of invalid fields.
func validationError(fields []FieldError) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "VALIDATION_FAILED",
		Message: "The request is invalid", MessageAr: "الطلب غير صالح", Fields: fields}
}

// FieldError names one invalid field of a 422.
type FieldError struct {
	Field     string `json:"field"`
	Code      string `json:"code"`
	Message   string `json:"message"`
	MessageAr string `json:"message_ar"`
}

// The errors of a JSON body, English and Arabic.
var (
	ErrMalformedJSON = newError(http.StatusBadRequest, "MALFORMED_JSON",
		"The request body is not valid JSON", "جسم الطلب ليس JSON صالحًا")
	ErrPayloadTooLarge = newError(http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE",
		"The request body is too large", "جسم الطلب كبير جدًا")
	ErrUnsupportedMediaType = newError(http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE",
		"Send the body as application/json", "أرسل جسم الطلب بصيغة application/json")
)

// ArabicFieldMessage is the Arabic text of a field error code.
func ArabicFieldMessage(code string) string {
	switch code {
	case "required":
		return "هذا الحقل مطلوب"
	case "too_long":
		return "القيمة أطول من المسموح"
	case "too_short":
		return "القيمة أقصر من المسموح"
	case "out_of_range":
		return "القيمة خارج النطاق المسموح"
	case "range_too_large":
		return "الفترة أطول من المسموح: قصّرها أو اختر فاصلًا أكبر"
	case "unknown_timezone":
		return "ليست منطقة زمنية معروفة؛ استخدم اسمًا مثل Africa/Cairo"
	case "scope_required":
		return "لا تملك صلاحية قراءة هذا الحدث"
	case "one_of":
		return "القيمة ليست من القيم المسموح بها"
	case "invalid_uuid":
		return "المعرّف ليس UUID صالحًا"
	case "invalid_type":
		return "نوع القيمة غير صحيح"
	case "not_found":
		return "العنصر المشار إليه غير موجود في هذا المتجر"
	case "cycle":
		return "لا يمكن أن يكون التصنيف أبًا لنفسه أو لأحد أسلافه"
	case "multiple_locations":
		return "المتغير مخزَّن في أكثر من موقع؛ استخدم تعديلات المخزون"
	case "managed_by_variants":
		return "للمنتج متغيرات؛ اكتب كمية كل متغير على حدة"
	case "sign":
		return "إشارة التغيير لا تناسب السبب: الاستلام يزيد المخزون والتالف ينقصه"
	case "depth_exceeded":
		return "تتداخل عناصر القائمة ثلاثة مستويات على الأكثر"
	case "too_many":
		return "عدد العناصر أكبر من المسموح"
	case "loop":
		return "تعود إعادة التوجيه هذه إلى مسارها نفسه عبر إعادات توجيه المتجر"
	case "duplicate":
		return "القيمة مكرّرة: عنصر آخر في الطلب يشير إلى الشيء نفسه"
	case "exceeds_balance":
		return "المبلغ أكبر من الرصيد المستحق بعد خصم الشحنات المفتوحة الأخرى"
	case "not_cod":
		return "الطلب ليس بالدفع عند الاستلام"
	case "only_when_delivered":
		return "يُرسل هذا الحقل مع الحالة delivered فقط"
	case "exceeds_returnable":
		return "الكمية أكبر مما يمكن إرجاعه: المُسلَّم ناقص المُرتجَع والمرتجعات المفتوحة"
	case "exceeds_refundable":
		return "المبلغ أكبر مما يمكن استرداده: المدفوع ناقص الاستردادات المعلّقة والناجحة"
	case "exceeds_refundable_quantity":
		return "الكمية أكبر من القطع التي لم تُسترد بعد"
	case "exceeds_shipping":
		return "المبلغ أكبر من رسوم الشحن التي لم تُسترد بعد"
	case "not_ascending":
		return "يجب أن تكون الشرائح تصاعدية تمامًا حسب الوزن"
	case "not_allowed":
		return "هذا الحقل غير مسموح به هنا"
	case "immutable":
		return "لا يمكن تغيير هذه القيمة؛ أنشئ خصمًا جديدًا"
	case "automatic":
		return "يُسوّى الاسترداد عبر بوابة الدفع تلقائيًا"
	case "original_unavailable":
		return "الاسترداد بطريقة الدفع الأصلية غير متاح لهذا الطلب"
	case "departed":
		return "لا يمكن التعديل بعد خروج الشحنة"
	case "invalid_url":
		return "الرابط غير صالح"
	case "default_location":
		return "لا يمكن إيقاف الموقع الافتراضي أو نزع صفته؛ اجعل موقعًا آخر هو الافتراضي أولًا"
	case "past":
		return "التاريخ مضى؛ اختر اليوم أو تاريخًا لاحقًا بتوقيت المتجر"
	case "no_contact":
		return "ليس لدى مستلم البطاقة وسيلة التواصل هذه"
	case "not_sendable":
		return "رصيد المتجر بلا رمز يُرسل"
	case "not_usable":
		return "لا يمكن استخدام رمز بطاقة الهدايا هذا"
	case "no_customer":
		return "الطلب بلا عميل يُضاف إليه رصيد المتجر؛ اختر النقد أو المحفظة أو التحويل البنكي"
	case "exceeds_value":
		return "لا يزيد السعر على قيمة بطاقة الهدايا"
	case "value_required":
		return "بطاقة الهدايا تحتاج قيمة (value)"
	case "gift_card_only":
		return "القيمة (value) لمتغيرات منتجات بطاقات الهدايا وحدها"
	default:
		return "القيمة غير صالحة"
	}
}
