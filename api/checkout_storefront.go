package api

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/merchantsvc/svc/api/request"
	"github.com/merchantsvc/svc/api/wire"
	"github.com/merchantsvc/svc/storage"
)

// The public storefront (decisions §5): what buyers see and do, without a
// token. A cart opens only with its X-Cart-Token; a wrong token, cart or
// store is the same 404, so nothing can be probed.

var errCartCheckedOut = newError(http.StatusConflict, "CART_CHECKED_OUT",
	"This cart has already been checked out", "تم إتمام الطلب من هذه السلة بالفعل")

// storefrontStore finds the store a storefront path names.
func (s *Server) storefrontStore(r *http.Request) (storage.Store, error) {
	store, err := s.db.FindStoreBySubdomain(r.Context(), chi.URLParam(r, "subdomain"))
	if err != nil {
		return storage.Store{}, err
	}
	if !storefrontOpen(store) {
		return storage.Store{}, errNotFound
	}
	return store, nil
}

// storefrontOpen says whether a store's storefront answers: a suspended or
// closed store's is not found.
func storefrontOpen(store storage.Store) bool {
	return store.LifecycleState != "suspended" && store.LifecycleState != "closed"
}

// checkOrderToken checks the X-Order-Token handed out at checkout against
// the order; a missing or wrong one is 404, like a wrong order.
func (s *Server) checkOrderToken(r *http.Request, storeID, orderID uuid.UUID) error {
	token := r.Header.Get("X-Order-Token")
	if token == "" {
		return errNotFound
	}
	valid, err := s.db.OrderTokenValid(r.Context(), storeID, orderID, token)
	if err != nil {
		return err
	}
	if !valid {
		return errNotFound
	}
	return nil
}

// storefrontCart checks the path's cart against its X-Cart-Token.
func (s *Server) storefrontCart(r *http.Request) (storage.Store, uuid.UUID, error) {
	store, err := s.storefrontStore(r)
	if err != nil {
		return storage.Store{}, uuid.Nil, err
	}
	cartID, err := pathUUID(r, "cart_id")
	if err != nil {
		return storage.Store{}, uuid.Nil, err
	}
	token := r.Header.Get("X-Cart-Token")
	if token == "" {
		return storage.Store{}, uuid.Nil, errNotFound
	}
	valid, err := s.db.CartTokenValid(r.Context(), store.ID, cartID, token)
	if err != nil {
		return storage.Store{}, uuid.Nil, err
	}
	if !valid {
		return storage.Store{}, uuid.Nil, errNotFound
	}
	return store, cartID, nil
}

type storefrontVariant struct {
	ID        uuid.UUID       `json:"id"`
	SKU       *string         `json:"sku"`
	Price     int64           `json:"price"`
	Options   json.RawMessage `json:"options"`
	Available bool            `json:"available"`
}

// storefrontProductSummary is an active product as the list shows it.
type storefrontProductSummary struct {
	ID          uuid.UUID       `json:"id"`
	Name        string          `json:"name"`
	Handle      string          `json:"handle"`
	Description string          `json:"description"`
	Price       int64           `json:"price"`
	Currency    string          `json:"currency"`
	Images      json.RawMessage `json:"images"`
	Available   bool            `json:"available"` // false when every variant is out of stock
}

// storefrontProduct is one active product with its variants (always a list).
type storefrontProduct struct {
	storefrontProductSummary
	Variants []storefrontVariant `json:"variants"`
}

func newStorefrontProduct(p storage.Product, currency string) storefrontProductSummary {
	return storefrontProductSummary{ID: p.ID, Name: p.Name, Handle: p.Handle, Description: p.Description, Price: p.Price, Currency: currency, Images: p.Images,
		Available: p.Quantity > 0 || p.Kind == storage.ProductKindGiftCard} // a gift card is never out of stock (§19)
}

// handleStorefrontProducts serves GET /storefront/{subdomain}/products.
func (s *Server) handleStorefrontProducts() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, err := s.storefrontStore(r)
		if err != nil {
			return err
		}
		q := newQueryParser(r)
		page, limit := q.page(20)
		if err := q.err(); err != nil {
			return err
		}
		active := "active"
		products, total, err := s.db.FindProducts(r.Context(), store.ID, storage.ProductFilter{Status: &active, Search: q.str("search"),
			Page: storage.Page{Page: page, Limit: limit}})
		if err != nil {
			return err
		}
		items := make([]storefrontProductSummary, 0, len(products))
		for _, p := range products {
			items = append(items, newStorefrontProduct(p, store.Currency))
		}
		respond(w, http.StatusOK, newList(items, page, limit, total))
		return nil
	}
}

// handleStorefrontProduct serves GET /storefront/{subdomain}/products/{product_id}.
func (s *Server) handleStorefrontProduct() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, err := s.storefrontStore(r)
		if err != nil {
			return err
		}
		id, err := pathUUID(r, "product_id")
		if err != nil {
			return err
		}
		p, err := s.db.FindProductByID(r.Context(), store.ID, id)
		if err != nil {
			return err
		}
		if p.Status != "active" {
			return errNotFound
		}
		variants, err := s.db.FindVariants(r.Context(), store.ID, id)
		if err != nil {
			return err
		}
		resp := storefrontProduct{storefrontProductSummary: newStorefrontProduct(p, store.Currency), Variants: []storefrontVariant{}}
		for _, v := range variants {
			resp.Variants = append(resp.Variants, storefrontVariant{ID: v.ID, SKU: v.SKU, Price: v.Price, Options: v.Options,
				Available: v.Quantity > 0 || v.Value != nil}) // a gift card is never out of stock (§19)
		}
		respond(w, http.StatusOK, resp)
		return nil
	}
}

type cartLineResponse struct {
	VariantID uuid.UUID       `json:"variant_id"`
	ProductID uuid.UUID       `json:"product_id"`
	Name      string          `json:"name"`
	SKU       *string         `json:"sku"`
	Options   json.RawMessage `json:"options"`
	UnitPrice int64           `json:"unit_price"`
	Quantity  int             `json:"quantity"`
	Total     int64           `json:"total"`
	// Recipient is, on a gift card line, whom its cards are sent to.
	Recipient *storage.GiftCardRecipient `json:"recipient"`
}

// cartResponse is a cart as the buyer sees it; the merchant's checkout view
// adds the recovery fields.
type cartResponse struct {
	ID        uuid.UUID          `json:"id"`
	Status    string             `json:"status"`
	Currency  string             `json:"currency"`
	Email     *string            `json:"email"`
	Phone     *string            `json:"phone"`
	Lines     []cartLineResponse `json:"lines"`
	ItemCount int                `json:"item_count"`
	Subtotal  int64              `json:"subtotal"`
	OrderID   *uuid.UUID         `json:"order_id"`
	CreatedAt time.Time          `json:"created_at"`
	UpdatedAt time.Time          `json:"updated_at"`
}

func newCartResponse(c storage.Cart) cartResponse {
	resp := cartResponse{ID: c.ID, Status: string(c.Status), Currency: c.Currency, Email: c.Email, Phone: c.Phone, Lines: []cartLineResponse{},
		ItemCount: c.ItemCount, Subtotal: c.Subtotal, OrderID: c.OrderID, CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
	for _, l := range c.Lines {
		resp.Lines = append(resp.Lines, cartLineResponse{VariantID: l.VariantID, ProductID: l.ProductID, Name: l.Name, SKU: l.SKU,
			Options: l.Options, UnitPrice: l.UnitPrice, Quantity: l.Quantity, Total: l.Total, Recipient: l.Recipient})
	}
	// The buyer sees an open cart as active until it is checked out.
	if resp.Status == string(storage.CartAbandoned) {
		resp.Status = string(storage.CartActive)
	}
	return resp
}

// buyerCartResponse is the cart priced (§14, §15) as checkout would place it.
type buyerCartResponse struct {
	cartResponse
	Lines        []buyerCartLine           `json:"lines"`
	Discount     int64                     `json:"discount"`
	ShippingFee  int64                     `json:"shipping_fee"`
	Total        int64                     `json:"total"`
	Discounts    []storage.AppliedDiscount `json:"discounts"`
	DiscountCode *cartCodeResponse         `json:"discount_code"`
	Shipping     cartShippingResponse      `json:"shipping"`
	ShipTo       *storage.ShipTo           `json:"shipping_address"`
	RateID       *uuid.UUID                `json:"shipping_rate_id"`
	Payment      *string                   `json:"payment_method"`
	// GiftCards pay last, in the order given (§19); AmountDue is what is
	// left for the payment method.
	GiftCards []cartGiftCardResponse `json:"gift_cards"`
	AmountDue int64                  `json:"amount_due"`
}

type buyerCartLine struct {
	cartLineResponse
	Discount int64 `json:"discount"`
}

type cartCodeResponse struct {
	Code             string  `json:"code"`
	Status           string  `json:"status"`
	Reason           *string `json:"reason"`
	RequiredSubtotal *int64  `json:"required_subtotal,omitempty"`
}

type cartShippingResponse struct {
	Status  string               `json:"status"`
	ZoneID  *uuid.UUID           `json:"zone_id"`
	Options []rateOptionResponse `json:"options"`
	RateID  *uuid.UUID           `json:"rate_id"`
	Fee     int64                `json:"fee"`
}

func newBuyerCartResponse(c storage.Cart) buyerCartResponse {
	p := c.Price
	resp := buyerCartResponse{cartResponse: newCartResponse(c), Lines: []buyerCartLine{}, Discount: p.Discount, ShippingFee: p.ShippingFee,
		Total: p.Total, Discounts: p.Discounts, ShipTo: c.ShipTo, RateID: c.ShippingRateID, Payment: c.PaymentMethod,
		Shipping: cartShippingResponse{Status: p.Shipping.Status, ZoneID: p.Shipping.ZoneID, Options: newRateOptionResponses(p.Shipping.Options),
			Fee: p.ShippingFee},
		GiftCards: newCartGiftCards(p.GiftCards), AmountDue: p.AmountDue}
	if c.CheckedOutAt == nil {
		resp.Subtotal = p.Subtotal
	}
	if resp.Discounts == nil {
		resp.Discounts = []storage.AppliedDiscount{}
	}
	for i, l := range resp.cartResponse.Lines {
		line := buyerCartLine{cartLineResponse: l}
		if i < len(p.LineDiscounts) {
			line.Discount = p.LineDiscounts[i]
		}
		resp.Lines = append(resp.Lines, line)
	}
	if p.Shipping.Rate != nil {
		resp.Shipping.RateID = &p.Shipping.Rate.ID
	}
	if code := p.Code; code != nil {
		resp.DiscountCode = &cartCodeResponse{Code: code.Code, Status: code.Status, RequiredSubtotal: code.RequiredSubtotal}
		if code.Reason != "" {
			resp.DiscountCode.Reason = &code.Reason
		}
	}
	return resp
}

// handleCreateCart serves POST /storefront/{subdomain}/carts: it opens a cart (optionally with lines
// and contact) and hands out its token, shown only here.
func (s *Server) handleCreateCart() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, err := s.storefrontStore(r)
		if err != nil {
			return err
		}
		var req request.Cart
		if r.ContentLength != 0 {
			if req, err = wire.Decode[request.Cart](r); err != nil {
				return err
			}
		}
		upd := req.Update(false)
		if upd.GiftCardIDs, err = s.cartGiftCardUpdate(r, store.ID, nil, req.GiftCardCodes); err != nil {
			return err
		}
		var (
			cart  storage.Cart
			token string
		)
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			if cart, token, err = tx.CreateCart(r.Context(), store.ID); err != nil {
				return err
			}
			if req.Empty() {
				return tx.PriceCart(r.Context(), &cart, cart.Terms())
			}
			cart, err = tx.UpdateCart(r.Context(), store.ID, cart.ID, upd)
			return err
		})
		if err != nil {
			return err
		}
		respond(w, http.StatusCreated, map[string]any{"cart": newBuyerCartResponse(cart), "cart_token": token})
		return nil
	}
}

// handleGetCart serves GET /storefront/{subdomain}/carts/{cart_id}.
func (s *Server) handleGetCart() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, cartID, err := s.storefrontCart(r)
		if err != nil {
			return err
		}
		cart, err := s.db.FindPricedCart(r.Context(), store.ID, cartID)
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newBuyerCartResponse(cart))
		return nil
	}
}

// handleUpdateCart serves PUT /storefront/{subdomain}/carts/{cart_id}: it replaces the cart's lines
// (checked against stock) and sets its contact details.
func (s *Server) handleUpdateCart() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, cartID, err := s.storefrontCart(r)
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.Cart](r)
		if err != nil {
			return err
		}
		upd := req.Update(req.Lines != nil)
		if upd.GiftCardIDs, err = s.cartGiftCardUpdate(r, store.ID, &cartID, req.GiftCardCodes); err != nil {
			return err
		}
		var cart storage.Cart
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			cart, err = tx.UpdateCart(r.Context(), store.ID, cartID, upd)
			return err
		})
		if err != nil {
			return err
		}
		respond(w, http.StatusOK, newBuyerCartResponse(cart))
		return nil
	}
}

// buyerOrder is the order as the buyer may see it.
type buyerOrder struct {
	ID              uuid.UUID           `json:"id"`
	OrderNumber     string              `json:"order_number"`
	Status          string              `json:"status"`
	PaymentStatus   string              `json:"payment_status"`
	PaymentMethod   string              `json:"payment_method"`
	Currency        string              `json:"currency"`
	Subtotal        int64               `json:"subtotal"`
	ShippingFee     int64               `json:"shipping_fee"`
	Discount        int64               `json:"discount"`
	Total           int64               `json:"total"`
	BalanceDue      int64               `json:"balance_due"`
	ShippingAddress json.RawMessage     `json:"shipping_address"`
	Lines           []orderLineResponse `json:"lines"`
	CreatedAt       time.Time           `json:"created_at"`
}

func newBuyerOrder(o storage.Order) buyerOrder {
	return buyerOrder{ID: o.ID, OrderNumber: o.OrderNumber, Status: string(o.Status), PaymentStatus: string(o.PaymentStatus), PaymentMethod: o.PaymentMethod,
		Currency: o.Currency, Subtotal: o.Subtotal, ShippingFee: o.ShippingFee, Discount: o.Discount, Total: o.Total,
		BalanceDue: o.BalanceDue(), ShippingAddress: o.ShippingAddress, Lines: newOrderLineResponses(o.Lines), CreatedAt: o.CreatedAt.UTC()}
}

// withFreshCart answers a checkout refused for its price (the total
// changed, the code no longer applies or ran out) with the cart as that
// checkout would price it now, so the buyer sees what they would pay.
func (s *Server) withFreshCart(r *http.Request, storeID, cartID uuid.UUID, in storage.NewOrder, cause error) error {
	e := toAPIError(cause)
	switch e.Code {
	case "CART_TOTAL_CHANGED", "DISCOUNT_NOT_APPLICABLE", "DISCOUNT_USAGE_LIMIT_REACHED", "GIFT_CARD_BALANCE_CHANGED":
	default:
		return cause
	}
	cart, err := s.db.FindCart(r.Context(), storeID, cartID)
	if err != nil {
		return err
	}
	terms := cart.Terms()
	terms.ShipTo, terms.PaymentMethod, terms.Phone, terms.Email = in.ShipTo, in.PaymentMethod, in.ContactPhone(), in.Customer.Email
	if in.ShippingRateID != nil {
		terms.ShippingRateID = in.ShippingRateID
	}
	if err := s.db.PriceCart(r.Context(), &cart, terms); err != nil {
		return err
	}
	fresh := *e
	fresh.Current = newBuyerCartResponse(cart)
	return &fresh
}

// handleCheckout serves POST /storefront/{subdomain}/carts/{cart_id}/checkout: it turns the cart into
// a PENDING order through the admin create's path and hands out the order token for the proof upload.
func (s *Server) handleCheckout() handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		store, cartID, err := s.storefrontCart(r)
		if err != nil {
			return err
		}
		req, err := wire.Decode[request.Checkout](r)
		if err != nil {
			return err
		}
		shipping := *req.ShippingAddress
		shipping.Phone = request.NormalizePhone(shipping.Phone)
		addr, _ := json.Marshal(shipping)
		in := storage.NewOrder{ShippingAddress: addr, PaymentMethod: req.PaymentMethod, Notes: strings.TrimSpace(req.Notes),
			Customer: &storage.OrderCustomer{Name: strings.TrimSpace(req.Customer.Name), Email: req.Customer.Email,
				Phone: request.NormalizedPtr(req.Customer.Phone)},
			ShipTo:        &storage.ShipTo{Country: shipping.Country, Region: shipping.Region, City: shipping.City},
			ExpectedTotal: req.ExpectedTotal}
		if req.ShippingRateID != nil {
			id, _ := request.ParseUUID(*req.ShippingRateID)
			in.ShippingRateID = &id
		}
		// Orders per phone and per client network per hour: a buyer cannot
		// lock a store's stock or make it message someone over and over.
		keys := s.buyerOrders.keys(store.ID, r, &shipping.Phone, in.Customer.Phone)
		giveBack, err := s.buyerOrders.admit(keys)
		if err != nil {
			return err
		}
		placed := false
		defer func() {
			if !placed {
				giveBack()
			}
		}()
		card := req.PaymentMethod == "card"
		if card {
			if err := s.cardCheckout(r.Context(), store.ID); err != nil {
				return err
			}
		}
		var (
			order storage.Order
			token string
		)
		err = s.db.InTx(r.Context(), func(tx *storage.Tx) error {
			order, token, _, err = tx.CheckoutCart(r.Context(), store.ID, cartID, in)
			if err == nil && card && order.PaymentMethod == "card" { // not when gift cards paid it whole
				_, err = tx.OpenCardPayment(r.Context(), order, storage.GatewayStripe)
			}
			return err
		})
		if errors.Is(err, storage.ErrNotDeliverable) {
			return notDeliverable("shipping_address.city")
		}
		if errors.Is(err, storage.ErrGiftCardBalanceChanged) {
			err = errCheckoutGiftCardChanged
		}
		if err != nil {
			return s.withFreshCart(r, store.ID, cartID, in, err)
		}
		placed = true
		// The worker's dispatcher starts the order-placed workflow after commit.
		answer := map[string]any{"order": newBuyerOrder(order), "order_token": token, "payment": nil}
		if card && order.PaymentMethod == "card" {
			answer["payment"] = s.checkoutCardPayment(r.Context(), store, order)
		}
		respond(w, http.StatusCreated, answer)
		return nil
	}
}
