// Package genclient drives one real flow through the Go client oapi-codegen
// generates from the served OpenAPI document. TestGeneratedGoClientDrivesARealFlow
// writes the client beside this file (client.gen.go, package genclient),
// builds the two into a test binary and runs TestFlow against the test
// server: if the document and the API disagree, this does not compile or
// fails.
package genclient

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os"
	"testing"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"
)

// TestFlow runs against the API at SVC_FLOW_BASE with a webhook receiver at
// SVC_FLOW_RECEIVER; without them (any plain `go test`) it has nothing to do.
func TestFlow(t *testing.T) {
	base, receiver := os.Getenv("SVC_FLOW_BASE"), os.Getenv("SVC_FLOW_RECEIVER")
	if base == "" || receiver == "" {
		t.Skip("run by TestGeneratedGoClientDrivesARealFlow")
	}
	if err := run(t.Context(), base, receiver); err != nil {
		t.Fatal(err)
	}
}

// expect turns an unexpected status into an error naming the step.
func expect(step string, got, want int, body []byte) error {
	if got != want {
		return fmt.Errorf("%s: %d, want %d: %s", step, got, want, body)
	}
	return nil
}

func run(ctx context.Context, base, receiverURL string) error {
	jar, _ := cookiejar.New(nil)
	// A session writes only from the API's own origin (or the merchant
	// pages'), as a browser on them says in Origin.
	session, err := NewClientWithResponses(base, WithHTTPClient(&http.Client{Jar: jar, Timeout: time.Minute}),
		WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
			req.Header.Set("Origin", base)
			return nil
		}))
	if err != nil {
		return err
	}
	// Sign up: the merchant, the store and a session cookie.
	sub := fmt.Sprintf("sdk-%d", time.Now().UnixNano()%1_000_000_000)
	var signup SignupRequest
	signup.Email = openapi_types.Email(sub + "@example.com")
	signup.Name, signup.Password = "SDK user", "a long password"
	signup.Store.Name, signup.Store.Subdomain, signup.Store.Currency, signup.Store.DefaultLanguage = "SDK store", sub, "EGP", "ar"
	signed, err := session.SignUpWithResponse(ctx, signup)
	if err != nil {
		return err
	}
	if err := expect("sign up", signed.StatusCode(), http.StatusCreated, signed.Body); err != nil {
		return err
	}
	storeID := signed.JSON201.Data.Store.Id

	// Mint a personal access token with the session.
	minted, err := session.CreateAccessTokenWithResponse(ctx, storeID, nil, CreateTokenRequest{Name: "sdk",
		Scopes: []Scope{"catalog:write", "orders:write", "settings:write"}})
	if err != nil {
		return err
	}
	if err := expect("mint a token", minted.StatusCode(), http.StatusCreated, minted.Body); err != nil {
		return err
	}
	token := *minted.JSON201.Data.Token
	c, err := NewClientWithResponses(base, WithRequestEditorFn(func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}))
	if err != nil {
		return err
	}

	// Subscribe a webhook before anything happens, so the order reaches it.
	hook, err := c.CreateWebhookWithResponse(ctx, storeID, nil, CreateWebhookRequest{Url: receiverURL,
		Events: []WebhookEvent{"order.created"}})
	if err != nil {
		return err
	}
	if err := expect("subscribe", hook.StatusCode(), http.StatusCreated, hook.Body); err != nil {
		return err
	}
	hookID := hook.JSON201.Data.Id

	// A product and a variant with stock.
	product, err := c.CreateProductWithResponse(ctx, storeID, nil, CreateProductRequest{Name: "Abaya", Price: 45000})
	if err != nil {
		return err
	}
	if err := expect("create a product", product.StatusCode(), http.StatusCreated, product.Body); err != nil {
		return err
	}
	sku, quantity := sub+"-M", 5
	variant, err := c.CreateVariantWithResponse(ctx, storeID, product.JSON201.Data.Id, nil,
		CreateVariantRequest{Sku: &sku, Quantity: &quantity, Options: &map[string]any{"size": "M"}})
	if err != nil {
		return err
	}
	if err := expect("create a variant", variant.StatusCode(), http.StatusCreated, variant.Body); err != nil {
		return err
	}

	// An order, then the list filtered to its status.
	var order CreateOrderRequest
	order.Customer = &struct {
		Email *openapi_types.Email `json:"email,omitempty"`
		Name  string               `json:"name"`
		Phone *string              `json:"phone,omitempty"`
	}{Name: "Mona Adel", Phone: new("+201001234567")}
	order.Lines = append(order.Lines, struct {
		Quantity  int                `json:"quantity"`
		Recipient *GiftCardRecipient `json:"recipient,omitempty"`
		VariantId openapi_types.UUID `json:"variant_id"`
	}{Quantity: 2, VariantId: variant.JSON201.Id})
	order.PaymentMethod = new(CreateOrderRequestPaymentMethod("cod"))
	order.ShippingAddress = Address{Name: "Mona Adel", Phone: "+201001234567", Line1: "12 Tahrir St", City: "Cairo", Country: "EG"}
	placed, err := c.CreateOrderWithResponse(ctx, storeID, nil, order)
	if err != nil {
		return err
	}
	if err := expect("create an order", placed.StatusCode(), http.StatusCreated, placed.Body); err != nil {
		return err
	}
	pending := ListOrdersParamsStatus("PENDING")
	list, err := c.ListOrdersWithResponse(ctx, storeID, &ListOrdersParams{Status: &pending})
	if err != nil {
		return err
	}
	if err := expect("list orders", list.StatusCode(), http.StatusOK, list.Body); err != nil {
		return err
	}
	if items := *list.JSON200.Data.Items; len(items) != 1 || items[0].Id != placed.JSON201.Data.Id {
		return fmt.Errorf("list orders by status: %s", list.Body)
	}

	// The order.created delivery, read back from the webhook's log.
	deadline := time.Now().Add(30 * time.Second)
	for {
		logs, err := c.ListWebhookLogsWithResponse(ctx, storeID, hookID, nil)
		if err != nil {
			return err
		}
		if err := expect("read the webhook log", logs.StatusCode(), http.StatusOK, logs.Body); err != nil {
			return err
		}
		if items := *logs.JSON200.Data.Items; len(items) > 0 {
			if items[0].Event != "order.created" || items[0].Status != "succeeded" {
				return fmt.Errorf("the delivery: %s", logs.Body)
			}
			fmt.Println("delivered", items[0].DeliveryId)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no delivery in the log after 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
