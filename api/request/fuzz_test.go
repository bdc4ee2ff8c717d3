package request

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/merchantsvc/svc/api/wire"
)

// decoders decode and check every JSON request body the API reads (every
// type of this package with a Valid check; a new one adds its line here).
var decoders = map[string]func(*http.Request) error{
	"acceptInvitation":     func(r *http.Request) error { _, err := wire.Decode[AcceptInvitation](r); return err },
	"adjustment":           func(r *http.Request) error { _, err := wire.Decode[Adjustment](r); return err },
	"bulkStatus":           func(r *http.Request) error { _, err := wire.Decode[BulkStatus](r); return err },
	"cancelShipment":       func(r *http.Request) error { _, err := wire.Decode[CancelShipment](r); return err },
	"cart":                 func(r *http.Request) error { _, err := wire.Decode[Cart](r); return err },
	"changePassword":       func(r *http.Request) error { _, err := wire.Decode[ChangePassword](r); return err },
	"checkout":             func(r *http.Request) error { _, err := wire.Decode[Checkout](r); return err },
	"comment":              func(r *http.Request) error { _, err := wire.Decode[Comment](r); return err },
	"confirmPasswordReset": func(r *http.Request) error { _, err := wire.Decode[ConfirmPasswordReset](r); return err },
	"connectGateway":       func(r *http.Request) error { _, err := wire.Decode[ConnectGateway](r); return err },
	"putTaxSettings":       func(r *http.Request) error { _, err := wire.Decode[PutTaxSettings](r); return err },
	"createCarrierAccount": func(r *http.Request) error { _, err := wire.Decode[CreateCarrierAccount](r); return err },
	"createPage":           func(r *http.Request) error { _, err := wire.Decode[CreatePage](r); return err },
	"updatePage":           func(r *http.Request) error { _, err := wire.Decode[UpdatePage](r); return err },
	"createBlog":           func(r *http.Request) error { _, err := wire.Decode[CreateBlog](r); return err },
	"updateBlog":           func(r *http.Request) error { _, err := wire.Decode[UpdateBlog](r); return err },
	"createArticle":        func(r *http.Request) error { _, err := wire.Decode[CreateArticle](r); return err },
	"updateArticle":        func(r *http.Request) error { _, err := wire.Decode[UpdateArticle](r); return err },
	"createCategory":       func(r *http.Request) error { _, err := wire.Decode[CreateCategory](r); return err },
	"createCustomer":       func(r *http.Request) error { _, err := wire.Decode[CreateCustomer](r); return err },
	"createDiscount":       func(r *http.Request) error { _, err := wire.Decode[CreateDiscount](r); return err },
	"createLocation":       func(r *http.Request) error { _, err := wire.Decode[CreateLocation](r); return err },
	"createOrder":          func(r *http.Request) error { _, err := wire.Decode[CreateOrder](r); return err },
	"createProduct":        func(r *http.Request) error { _, err := wire.Decode[CreateProduct](r); return err },
	"createRefund":         func(r *http.Request) error { _, err := wire.Decode[CreateRefund](r); return err },
	"createRemittance":     func(r *http.Request) error { _, err := wire.Decode[CreateRemittance](r); return err },
	"createRole":           func(r *http.Request) error { _, err := wire.Decode[CreateRole](r); return err },
	"createShipment":       func(r *http.Request) error { _, err := wire.Decode[CreateShipment](r); return err },
	"createSubscription":   func(r *http.Request) error { _, err := wire.Decode[CreateSubscription](r); return err },
	"createToken":          func(r *http.Request) error { _, err := wire.Decode[CreateToken](r); return err },
	"createVariant":        func(r *http.Request) error { _, err := wire.Decode[CreateVariant](r); return err },
	"deleteImage":          func(r *http.Request) error { _, err := wire.Decode[DeleteImage](r); return err },
	"invitation":           func(r *http.Request) error { _, err := wire.Decode[Invitation](r); return err },
	"invitationToken":      func(r *http.Request) error { _, err := wire.Decode[InvitationToken](r); return err },
	"login":                func(r *http.Request) error { _, err := wire.Decode[Login](r); return err },
	"manifest":             func(r *http.Request) error { _, err := wire.Decode[Manifest](r); return err },
	"markRecovered":        func(r *http.Request) error { _, err := wire.Decode[MarkRecovered](r); return err },
	"memberRole":           func(r *http.Request) error { _, err := wire.Decode[MemberRole](r); return err },
	"moveReturn":           func(r *http.Request) error { _, err := wire.Decode[MoveReturn](r); return err },
	"partialAcceptance":    func(r *http.Request) error { _, err := wire.Decode[PartialAcceptance](r); return err },
	"passwordReset":        func(r *http.Request) error { _, err := wire.Decode[PasswordReset](r); return err },
	"publish":              func(r *http.Request) error { _, err := wire.Decode[Publish](r); return err },
	"quote":                func(r *http.Request) error { _, err := wire.Decode[Quote](r); return err },
	"rateState":            func(r *http.Request) error { _, err := wire.Decode[RateState](r); return err },
	"reason":               func(r *http.Request) error { _, err := wire.Decode[Reason](r); return err },
	"receiveReturn":        func(r *http.Request) error { _, err := wire.Decode[ReceiveReturn](r); return err },
	"recover":              func(r *http.Request) error { _, err := wire.Decode[Recover](r); return err },
	"requestReturn":        func(r *http.Request) error { _, err := wire.Decode[RequestReturn](r); return err },
	"resolve":              func(r *http.Request) error { _, err := wire.Decode[Resolve](r); return err },
	"revoke":               func(r *http.Request) error { _, err := wire.Decode[Revoke](r); return err },
	"setAlt":               func(r *http.Request) error { _, err := wire.Decode[SetAlt](r); return err },
	"settleRefund":         func(r *http.Request) error { _, err := wire.Decode[SettleRefund](r); return err },
	"shipmentEvent":        func(r *http.Request) error { _, err := wire.Decode[ShipmentEvent](r); return err },
	"signup":               func(r *http.Request) error { _, err := wire.Decode[Signup](r); return err },
	"token":                func(r *http.Request) error { _, err := wire.Decode[Token](r); return err },
	"updateCategory":       func(r *http.Request) error { _, err := wire.Decode[UpdateCategory](r); return err },
	"updateCustomer":       func(r *http.Request) error { _, err := wire.Decode[UpdateCustomer](r); return err },
	"updateDiscount":       func(r *http.Request) error { _, err := wire.Decode[UpdateDiscount](r); return err },
	"updateLocation":       func(r *http.Request) error { _, err := wire.Decode[UpdateLocation](r); return err },
	"updateOrder":          func(r *http.Request) error { _, err := wire.Decode[UpdateOrder](r); return err },
	"updateProduct":        func(r *http.Request) error { _, err := wire.Decode[UpdateProduct](r); return err },
	"updateRate":           func(r *http.Request) error { _, err := wire.Decode[UpdateRate](r); return err },
	"updateRole":           func(r *http.Request) error { _, err := wire.Decode[UpdateRole](r); return err },
	"updateSettings":       func(r *http.Request) error { _, err := wire.Decode[UpdateSettings](r); return err },
	"updateShipment":       func(r *http.Request) error { _, err := wire.Decode[UpdateShipment](r); return err },
	"updateStatus":         func(r *http.Request) error { _, err := wire.Decode[UpdateStatus](r); return err },
	"updateSubscription":   func(r *http.Request) error { _, err := wire.Decode[UpdateSubscription](r); return err },
	"updateVariant":        func(r *http.Request) error { _, err := wire.Decode[UpdateVariant](r); return err },
	"updateZone":           func(r *http.Request) error { _, err := wire.Decode[UpdateZone](r); return err },
	"verifyEmail":          func(r *http.Request) error { _, err := wire.Decode[VerifyEmail](r); return err },
	"zone":                 func(r *http.Request) error { _, err := wire.Decode[Zone](r); return err },
	"createGiftCard":       func(r *http.Request) error { _, err := wire.Decode[CreateGiftCard](r); return err },
	"updateGiftCard":       func(r *http.Request) error { _, err := wire.Decode[UpdateGiftCard](r); return err },
	"adjustGiftCard":       func(r *http.Request) error { _, err := wire.Decode[AdjustGiftCard](r); return err },
	"disableGiftCard":      func(r *http.Request) error { _, err := wire.Decode[DisableGiftCard](r); return err },
	"sendGiftCard":         func(r *http.Request) error { _, err := wire.Decode[SendGiftCard](r); return err },
	"giftCardBalance":      func(r *http.Request) error { _, err := wire.Decode[GiftCardBalance](r); return err },
}

// Any body, for every request type, decodes and checks without panicking
// and is refused, if at all, with a 4xx.
func FuzzDecodeRequests(f *testing.F) {
	for _, seed := range []string{`{}`, `{"lines":[{"variant_id":"x","quantity":-1}]}`, `{"price":1e400}`, `{"name":null}`,
		`{"email":"a@b.c","password":"0123456789","name":"n","store":{"name":"s","subdomain":"ab-c","currency":"EGP","default_language":"ar"}}`,
		`{"status":"SHIPPED","tracking_number":"\u0000"}`, `[1,2]`, `{"a":`, `{"scopes":["orders:read"],"name":"x","expires_in_days":366}`,
		`{"lines":[{"variant_id":"01a20bbc-987d-71e4-a754-2bc7b31e11d4","quantity":9223372036854775807}],"shipping_fee":-1}`} {
		f.Add([]byte(seed), "application/json")
	}
	f.Add([]byte(`{}`), "text/plain")
	f.Add([]byte(``), "")
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		for name, decodeBody := range decoders {
			r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
			if contentType != "" {
				r.Header.Set("Content-Type", contentType)
			}
			if err := decodeBody(r); err != nil {
				if status := answered(err); status >= 500 {
					t.Fatalf("%s: %q answered %d: %v", name, body, status, err)
				}
			}
		}
	})
}

// answered is the status the API answers err with: a *wire.Error's own
// (toAPIError passes it through), 500 for anything else.
func answered(err error) int {
	var refused *wire.Error
	if errors.As(err, &refused) {
		return refused.Status
	}
	return http.StatusInternalServerError
}
