package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/merchantsvc/svc/api/pages"
	"github.com/merchantsvc/svc/storage"
)

// routes is the whole API surface in one place.
func (s *Server) routes() *chi.Mux {
	r := chi.NewRouter()
	r.Use(withRequestID, withLogger(s.log), s.recoverer, s.observe, middleware.StripSlashes)
	r.NotFound(answerError(errRouteNotFound))
	r.MethodNotAllowed(answerError(errMethodNotAllowed))

	r.Method(http.MethodGet, "/media/{store_id}/{image_id}/{file}", s.handleMedia())

	// The merchant's server-rendered pages ({merchant_url}, decisions §2
	// and §8), package pages.
	r.Method(http.MethodGet, "/login", s.pages.LoginPage())
	r.Method(http.MethodPost, "/login", s.pages.LoginForm())
	r.Method(http.MethodGet, "/oauth/authorize", s.pages.ConsentPage())
	r.Method(http.MethodPost, "/oauth/authorize", s.pages.ConsentForm())
	r.Method(http.MethodGet, "/apps/{slug}/install", s.pages.InstallFromListing())
	r.Method(http.MethodGet, "/apps/{slug}/launch", s.pages.Launch())
	r.Method(http.MethodGet, "/stores/{store_id}/themes/editor", s.pages.EditorPage())
	r.Method(http.MethodGet, "/stores/{store_id}/themes/preview", s.pages.Preview())
	r.Method(http.MethodPost, "/stores/{store_id}/themes/preview/render", s.pages.PreviewRender())
	r.Method(http.MethodGet, "/assets/editor/{file}", pages.Assets())
	r.Method(http.MethodGet, "/assets/store/{file}", pages.Assets())
	r.Method(http.MethodGet, "/stores/{store_id}/imports", s.pages.ImportsPage())
	r.Method(http.MethodGet, "/stores/{store_id}/deliveries", s.pages.DeliveriesPage())
	r.Method(http.MethodGet, "/stores/{store_id}/work", s.pages.WorkPage())
	r.Method(http.MethodGet, "/stores/{store_id}/shipments", s.pages.ShipmentsPage())
	r.Method(http.MethodGet, "/stores/{store_id}/staff", s.pages.StaffPage())
	r.Method(http.MethodGet, "/stores/{store_id}/analytics", s.pages.AnalyticsPage())
	r.Method(http.MethodGet, "/invitations", s.pages.InvitationPage())
	r.Method(http.MethodGet, "/stores/{store_id}/shipments/print", s.pages.WaybillsPrint())
	r.Method(http.MethodGet, "/stores/{store_id}/orders/{order_id}/returns", s.pages.OrderReturnsPage())
	r.Method(http.MethodGet, "/healthz", s.handleHealthz())
	r.Method(http.MethodGet, "/metrics", s.handleMetrics())
	r.Method(http.MethodGet, "/readyz", s.handleReadyz())

	r.Route("/api/v1", func(r chi.Router) {
		r.Method(http.MethodGet, "/openapi.json", s.handleOpenAPI())

		r.Method(http.MethodPost, "/chat/callback", s.handleChatCallback())
		r.Method(http.MethodPost, "/carrier-callbacks/{carrier_account_id}", s.handleCarrierCallback())
		r.Method(http.MethodPost, "/gateway-webhooks/{provider}/{store_id}", s.handleGatewayWebhook())
		r.Method(http.MethodPost, "/oauth/token", s.handleTokenExchange())
		r.Method(http.MethodPost, "/oauth/revoke", s.handleRevoke())
		r.Route("/apps", func(r chi.Router) {
			r.Use(s.authenticate, s.sessionOnly)
			r.Method(http.MethodPost, "/", s.handleRegisterApp())
			r.Method(http.MethodGet, "/", s.handleListApps())
			r.Method(http.MethodPost, "/{app_id}/rotate-secret", s.handleRotateAppSecret())
		})
		invitationLimit := s.perClientLimit(s.invitationLimiter, errInvitationRateLimited)
		r.With(invitationLimit).Method(http.MethodPost, "/staff-invitations/lookup", s.handleLookupInvitation())
		r.With(invitationLimit).Method(http.MethodPost, "/staff-invitations/accept", s.handleAcceptInvitation())
		r.Method(http.MethodPost, "/auth/signup", s.handleSignup())
		r.Method(http.MethodPost, "/auth/login", s.handleLogin())
		r.With(s.authenticate, s.sessionOnly).Method(http.MethodPost, "/auth/logout", s.handleLogout())
		r.With(s.authenticate, s.rateLimit).Method(http.MethodGet, "/auth/me", s.handleMe())
		r.With(s.authenticate, s.rateLimit).Method(http.MethodGet, "/auth/api-key/me", s.handleTokenInfo())

		// The storefront is public: buyers carry no token, so it is limited
		// per client address instead.
		r.Route("/storefront/{subdomain}", func(r chi.Router) {
			r.Use(s.perClientLimit(s.buyerLimiter, errStorefrontRateLimited))
			r.Method(http.MethodGet, "/products", s.handleStorefrontProducts())
			r.Method(http.MethodGet, "/products/{product_id}", s.handleStorefrontProduct())
			r.Method(http.MethodPost, "/carts", s.handleCreateCart())
			r.Method(http.MethodGet, "/carts/{cart_id}", s.handleGetCart())
			r.Method(http.MethodPut, "/carts/{cart_id}", s.handleUpdateCart())
			r.Method(http.MethodPost, "/carts/{cart_id}/checkout", s.handleCheckout())
			r.Method(http.MethodPost, "/orders/{order_id}/payment-proofs", s.handleStorefrontProof())
			r.Method(http.MethodPost, "/orders/{order_id}/card-payment", s.handleStorefrontCardPayment())
			r.Method(http.MethodGet, "/shipping/areas", s.handleStorefrontShippingAreas())
		})

		r.Route("/stores/{store_id}", func(r chi.Router) {
			r.Use(s.authenticate, s.rateLimit, s.bindStore, s.idempotency, s.audit)

			// Staff (decisions §16): sessions only; the owner and admins
			// manage tokens, roles and staff, the owner alone apps.
			ownerOrAdmin, owner := s.requireRole(storage.RoleOwner, storage.RoleAdmin), s.requireRole(storage.RoleOwner)
			r.Route("/access-tokens", func(r chi.Router) {
				r.Use(ownerOrAdmin)
				r.Method(http.MethodPost, "/", s.handleCreateAccessToken())
				r.Method(http.MethodGet, "/", s.handleListAccessTokens())
				r.Method(http.MethodDelete, "/{token_id}", s.handleRevokeAccessToken())
			})
			r.Route("/roles", func(r chi.Router) {
				r.With(s.sessionOnly).Method(http.MethodGet, "/", s.handleListRoles())
				r.With(ownerOrAdmin).Method(http.MethodPost, "/", s.handleCreateRole())
				r.With(ownerOrAdmin).Method(http.MethodPatch, "/{role_id}", s.handleUpdateRole())
				r.With(ownerOrAdmin).Method(http.MethodDelete, "/{role_id}", s.handleDeleteRole())
			})
			r.Route("/staff", func(r chi.Router) {
				r.With(ownerOrAdmin).Method(http.MethodGet, "/", s.handleListStaff())
				r.With(ownerOrAdmin).Method(http.MethodPatch, "/{user_id}", s.handleChangeMemberRole())
				r.With(s.sessionOnly).Method(http.MethodDelete, "/{user_id}", s.handleRemoveMember())
				r.With(ownerOrAdmin).Method(http.MethodPost, "/invitations", s.handleInvite())
				r.With(ownerOrAdmin).Method(http.MethodGet, "/invitations", s.handleListInvitations())
				r.With(ownerOrAdmin).Method(http.MethodPost, "/invitations/{invitation_id}/resend", s.handleResendInvitation())
				r.With(ownerOrAdmin).Method(http.MethodDelete, "/invitations/{invitation_id}", s.handleRevokeInvitation())
			})

			r.With(s.sessionOnly).Method(http.MethodGet, "/notifications", s.handleListNotifications())
			r.With(owner).Method(http.MethodDelete, "/apps/{app_id}", s.handleUninstallApp())
			r.With(owner).Method(http.MethodGet, "/audit-log", s.handleAuditLog())

			analyticsRead := s.requireScope("analytics:read")
			r.With(analyticsRead).Method(http.MethodGet, "/analytics/sales", s.handleSales())
			r.With(analyticsRead).Method(http.MethodGet, "/analytics/top-products", s.handleTopProducts())

			settingsRead, settingsWrite := s.requireScope("settings:read"), s.requireScope("settings:write")
			r.With(settingsRead).Method(http.MethodGet, "/settings", s.handleGetSettings())
			r.With(settingsWrite).Method(http.MethodPatch, "/settings", s.handleUpdateSettings())
			r.Route("/payment-gateways", func(r chi.Router) {
				r.With(settingsRead).Method(http.MethodGet, "/", s.handleListGateways())
				r.With(settingsWrite).Method(http.MethodPut, "/{provider}", s.handleConnectGateway())
				r.With(settingsWrite).Method(http.MethodDelete, "/{provider}", s.handleDisconnectGateway())
			})
			r.Route("/locations", func(r chi.Router) {
				r.With(settingsWrite).Method(http.MethodPost, "/", s.handleCreateLocation())
				r.With(settingsRead).Method(http.MethodGet, "/", s.handleListLocations())
				r.With(settingsRead).Method(http.MethodGet, "/{location_id}", s.handleGetLocation())
				r.With(settingsWrite).Method(http.MethodPatch, "/{location_id}", s.handleUpdateLocation())
				r.With(settingsWrite).Method(http.MethodDelete, "/{location_id}", s.handleDeleteLocation())
			})
			inventoryRead, inventoryWrite := s.requireScope("catalog:read"), s.requireScope("catalog:write")
			r.Route("/inventory", func(r chi.Router) {
				r.With(inventoryRead).Method(http.MethodGet, "/levels", s.handleListLevels())
				r.With(inventoryWrite, requireIdempotencyKey).Method(http.MethodPost, "/adjustments", s.handleAdjustInventory())
				r.With(inventoryRead).Method(http.MethodGet, "/movements", s.handleListMovements())
			})
			r.Route("/webhooks", func(r chi.Router) {
				r.With(settingsWrite).Method(http.MethodPost, "/", s.handleCreateWebhook())
				r.With(settingsRead).Method(http.MethodGet, "/", s.handleListWebhooks())
				r.With(settingsRead).Method(http.MethodGet, "/{webhook_id}", s.handleGetWebhook())
				r.With(settingsWrite).Method(http.MethodPatch, "/{webhook_id}", s.handleUpdateWebhook())
				r.With(settingsWrite).Method(http.MethodDelete, "/{webhook_id}", s.handleDeleteWebhook())
				r.With(settingsWrite).Method(http.MethodPost, "/{webhook_id}/test", s.handleTestWebhook())
				r.With(settingsWrite).Method(http.MethodPost, "/{webhook_id}/rotate-secret", s.handleRotateWebhookSecret())
				r.With(settingsRead).Method(http.MethodGet, "/{webhook_id}/logs", s.handleWebhookLogs())
				r.With(settingsWrite).Method(http.MethodPost, "/{webhook_id}/deliveries/{delivery_id}/redeliver", s.handleRedeliver())
				r.With(settingsWrite).Method(http.MethodPost, "/{webhook_id}/recover", s.handleRecover())
			})

			customersRead, customersWrite := s.requireScope("customers:read"), s.requireScope("customers:write")
			r.Route("/customers", func(r chi.Router) {
				r.With(customersWrite).Method(http.MethodPost, "/", s.handleCreateCustomer())
				r.With(customersRead).Method(http.MethodGet, "/", s.handleListCustomers())
				r.With(customersRead).Method(http.MethodGet, "/{customer_id}", s.handleGetCustomer())
				r.With(customersWrite).Method(http.MethodPatch, "/{customer_id}", s.handleUpdateCustomer())
				r.With(customersWrite).Method(http.MethodDelete, "/{customer_id}", s.handleDeleteCustomer())
			})

			ordersRead, ordersWrite := s.requireScope("orders:read"), s.requireScope("orders:write")
			r.Route("/orders", func(r chi.Router) {
				r.With(ordersWrite).Method(http.MethodPost, "/", s.handleCreateOrder(false))
				r.With(ordersRead).Method(http.MethodPost, "/preview", s.handlePreviewOrder())
				r.With(ordersWrite).Method(http.MethodPost, "/drafts", s.handleCreateOrder(true))
				r.With(ordersRead).Method(http.MethodGet, "/", s.handleListOrders())
				r.With(ordersRead).Method(http.MethodGet, "/counts", s.handleOrderCounts())
				r.With(ordersRead).Method(http.MethodGet, "/pending-manual-review", s.handlePendingReview())
				r.With(ordersRead).Method(http.MethodGet, "/autopilot-exceptions", s.handleListAutopilot())
				r.With(ordersWrite).Method(http.MethodPost, "/autopilot-exceptions/{order_id}/resolve", s.handleResolveAutopilot())
				r.With(ordersWrite).Method(http.MethodPost, "/bulk-status", s.handleBulkStatus())
				r.With(ordersWrite).Method(http.MethodPatch, "/{order_id}", s.handleUpdateOrder())
				r.With(ordersWrite).Method(http.MethodPost, "/{order_id}/convert", s.handleConvertDraft())
				r.With(ordersRead).Method(http.MethodGet, "/{order_id}/email-preview", s.handleEmailPreview())
				r.With(ordersWrite).Method(http.MethodPost, "/{order_id}/resend-email", s.handleResend("email"))
				r.With(ordersRead).Method(http.MethodGet, "/{order_id}/chat-messages", s.handleChatMessages())
				r.With(ordersWrite).Method(http.MethodPost, "/{order_id}/resend-chat-message", s.handleResend("chat"))
				r.With(ordersRead).Method(http.MethodGet, "/{order_id}", s.handleGetOrder())
				r.With(ordersWrite).Method(http.MethodDelete, "/{order_id}", s.handleCancelOrder())
				r.With(ordersWrite).Method(http.MethodPatch, "/{order_id}/status", s.handleUpdateOrderStatus())
				r.With(ordersRead).Method(http.MethodGet, "/{order_id}/timeline", s.handleActivities(true))
				r.With(ordersRead).Method(http.MethodGet, "/{order_id}/activities", s.handleActivities(false))
				r.With(ordersWrite).Method(http.MethodPost, "/{order_id}/comments", s.handleAddComment())
				r.With(ordersWrite).Method(http.MethodPost, "/{order_id}/mark-paid", s.handleMarkPaid())
				r.With(ordersWrite).Method(http.MethodPost, "/{order_id}/unmark-paid", s.handleUnmarkPaid())
				r.With(ordersWrite).Method(http.MethodPost, "/{order_id}/partial-acceptance", s.handlePartialAcceptance())
				r.With(ordersWrite).Method(http.MethodPost, "/{order_id}/payments", s.handleRecordPayment())
				r.With(ordersRead).Method(http.MethodGet, "/{order_id}/payment-proofs", s.handleListProofs())
				r.With(ordersWrite).Method(http.MethodPost, "/{order_id}/shipments", s.handleCreateShipment())
				r.With(ordersRead).Method(http.MethodGet, "/{order_id}/shipments", s.handleListShipments(true))
				r.With(ordersRead).Method(http.MethodGet, "/{order_id}/returns", s.handleListReturns(true))
				r.With(ordersWrite).Method(http.MethodPost, "/{order_id}/returns", s.handleRequestReturn())
				r.With(ordersWrite, requireIdempotencyKey).Method(http.MethodPost, "/{order_id}/refunds", s.handleCreateRefund())
				r.With(ordersRead).Method(http.MethodGet, "/{order_id}/refunds", s.handleListRefunds())
			})
			r.Route("/shipments", func(r chi.Router) {
				r.With(ordersRead).Method(http.MethodGet, "/", s.handleListShipments(false))
				r.With(ordersRead).Method(http.MethodGet, "/{shipment_id}", s.handleGetShipment())
				r.With(ordersWrite).Method(http.MethodPatch, "/{shipment_id}", s.handleUpdateShipment())
				r.With(ordersWrite).Method(http.MethodPost, "/{shipment_id}/events", s.handleShipmentEvent())
				r.With(ordersWrite).Method(http.MethodPost, "/{shipment_id}/cancel", s.handleCancelShipment())
				r.With(ordersRead).Method(http.MethodGet, "/{shipment_id}/waybill", s.handleDownloadWaybill())
				r.With(ordersWrite).Method(http.MethodPost, "/{shipment_id}/waybill", s.handleRequestWaybill())
			})
			r.Route("/returns", func(r chi.Router) {
				r.With(ordersRead).Method(http.MethodGet, "/", s.handleListReturns(false))
				r.With(ordersRead).Method(http.MethodGet, "/{return_id}", s.handleGetReturn())
				r.With(ordersWrite).Method(http.MethodPost, "/{return_id}/receive", s.handleReceiveReturn())
				r.With(ordersWrite).Method(http.MethodPost, "/{return_id}/approve", s.handleMoveReturn(storage.ReturnApproved))
				r.With(ordersWrite).Method(http.MethodPost, "/{return_id}/decline", s.handleMoveReturn(storage.ReturnDeclined))
				r.With(ordersWrite).Method(http.MethodPost, "/{return_id}/cancel", s.handleMoveReturn(storage.ReturnCancelled))
			})
			marketingRead, marketingWrite := s.requireScope("marketing:read"), s.requireScope("marketing:write")
			r.With(settingsRead).Method(http.MethodPost, "/shipping/quote", s.handleQuote())
			r.Route("/shipping/zones", func(r chi.Router) {
				r.With(settingsWrite).Method(http.MethodPost, "/", s.handleCreateZone())
				r.With(settingsRead).Method(http.MethodGet, "/", s.handleListZones())
				r.With(settingsRead).Method(http.MethodGet, "/{zone_id}", s.handleGetZone())
				r.With(settingsWrite).Method(http.MethodPatch, "/{zone_id}", s.handleUpdateZone())
				r.With(settingsWrite).Method(http.MethodDelete, "/{zone_id}", s.handleDeleteZone())
				r.With(settingsWrite).Method(http.MethodPost, "/{zone_id}/rates", s.handleCreateRate())
				r.With(settingsWrite).Method(http.MethodPatch, "/{zone_id}/rates/{rate_id}", s.handleUpdateRate())
				r.With(settingsWrite).Method(http.MethodDelete, "/{zone_id}/rates/{rate_id}", s.handleDeleteRate())
			})
			r.Route("/discounts", func(r chi.Router) {
				r.With(marketingWrite).Method(http.MethodPost, "/", s.handleCreateDiscount())
				r.With(marketingRead).Method(http.MethodGet, "/", s.handleListDiscounts())
				r.With(marketingRead).Method(http.MethodGet, "/{discount_id}", s.handleGetDiscount())
				r.With(marketingWrite).Method(http.MethodPatch, "/{discount_id}", s.handleUpdateDiscount())
				r.With(marketingWrite).Method(http.MethodDelete, "/{discount_id}", s.handleDeleteDiscount())
				r.With(marketingRead).Method(http.MethodGet, "/{discount_id}/redemptions", s.handleListRedemptions())
			})
			r.Route("/refunds", func(r chi.Router) {
				r.With(ordersRead).Method(http.MethodGet, "/{refund_id}", s.handleGetRefund())
				r.With(ordersWrite, requireIdempotencyKey).Method(http.MethodPost, "/{refund_id}/settle", s.handleSettleRefund())
			})
			r.Route("/cod-remittances", func(r chi.Router) {
				r.With(ordersWrite, requireIdempotencyKey).Method(http.MethodPost, "/", s.handleCreateRemittance())
				r.With(ordersRead).Method(http.MethodGet, "/", s.handleListRemittances())
				r.With(ordersRead).Method(http.MethodGet, "/{remittance_id}", s.handleGetRemittance())
			})
			r.Route("/carrier-accounts", func(r chi.Router) {
				r.With(settingsWrite).Method(http.MethodPost, "/", s.handleCreateCarrierAccount())
				r.With(settingsRead).Method(http.MethodGet, "/", s.handleListCarrierAccounts())
				r.With(settingsRead).Method(http.MethodGet, "/{carrier_account_id}", s.handleGetCarrierAccount())
				r.With(settingsWrite).Method(http.MethodDelete, "/{carrier_account_id}", s.handleDeleteCarrierAccount())
				r.With(settingsWrite).Method(http.MethodPost, "/{carrier_account_id}/rotate-secret", s.handleRotateCarrierSecret())
			})
			r.Route("/abandoned-checkouts", func(r chi.Router) {
				r.With(ordersRead).Method(http.MethodGet, "/summary", s.handleCheckoutSummary())
				r.With(ordersRead).Method(http.MethodGet, "/", s.handleListCheckouts())
				r.With(ordersRead).Method(http.MethodGet, "/{checkout_id}", s.handleGetCheckout())
				r.With(ordersWrite).Method(http.MethodPost, "/{checkout_id}/send-recovery-email", s.handleSendRecoveryEmail())
				r.With(ordersWrite).Method(http.MethodPost, "/{checkout_id}/mark-recovered", s.handleMarkRecovered())
			})
			// Reviewing proofs and undoing payments are settings scopes (spec §4.3).
			r.Route("/payment-proofs/{proof_id}", func(r chi.Router) {
				r.With(settingsRead).Method(http.MethodGet, "/image", s.handleProofImage())
				r.With(settingsRead).Method(http.MethodGet, "/similar", s.handleSimilarProofs())
				r.With(settingsWrite).Method(http.MethodPost, "/approve", s.handleApproveProof())
				r.With(settingsWrite).Method(http.MethodPost, "/reject", s.handleRejectProof())
			})
			r.With(settingsWrite).Method(http.MethodPost, "/payments/{proof_id}/void", s.handleVoidPayment())

			themesRead, themesWrite := s.requireScope("themes:read"), s.requireScope("themes:write")
			r.Route("/themes/v3", func(r chi.Router) {
				r.With(themesRead).Method(http.MethodGet, "/customization", s.handleGetCustomization())
				r.With(themesWrite).Method(http.MethodPut, "/customization", s.handleSaveDraft())
				r.With(themesWrite).Method(http.MethodPost, "/customization/publish", s.handlePublishTheme())
				r.With(themesRead).Method(http.MethodGet, "/versions", s.handleListThemeVersions())
				r.With(themesRead).Method(http.MethodGet, "/versions/compare", s.handleCompareThemes())
				r.With(themesRead).Method(http.MethodGet, "/versions/{version_id}", s.handleGetThemeVersion())
				r.With(themesWrite).Method(http.MethodPost, "/versions/{version_id}/restore", s.handleRestoreThemeVersion())
				r.With(themesRead).Method(http.MethodGet, "/schemas", s.handleThemeSchemas())
			})

			read, write := s.requireScope("catalog:read"), s.requireScope("catalog:write")
			r.Route("/products", func(r chi.Router) {
				r.With(write).Method(http.MethodPost, "/", s.handleCreateProduct())
				r.With(read).Method(http.MethodGet, "/", s.handleListProducts())
				r.With(read).Method(http.MethodGet, "/template", s.handleCSVTemplate())
				r.With(read).Method(http.MethodGet, "/export", s.handleExport())
				r.With(write).Method(http.MethodPost, "/import", s.handleImport())
				r.With(read).Method(http.MethodGet, "/imports/{import_id}", s.handleGetImport())
				r.With(read).Method(http.MethodGet, "/imports/{import_id}/events", s.handleImportEvents())
				r.With(read).Method(http.MethodGet, "/imports/{import_id}/errors", s.handleImportErrors())
				r.With(read).Method(http.MethodGet, "/{product_id}", s.handleGetProduct())
				r.With(write).Method(http.MethodPatch, "/{product_id}", s.handleUpdateProduct())
				r.With(write).Method(http.MethodDelete, "/{product_id}", s.handleDeleteProduct())

				r.With(write).Method(http.MethodPost, "/{product_id}/images", s.handleUploadImage())
				r.With(write).Method(http.MethodDelete, "/{product_id}/images", s.handleDeleteImage())
				r.With(write).Method(http.MethodPatch, "/{product_id}/images/alt", s.handleSetImageAlt())
				r.With(read).Method(http.MethodGet, "/{product_id}/images/{image_id}", s.handleGetImage())

				r.With(read).Method(http.MethodGet, "/{product_id}/variants", s.handleListVariants())
				r.With(write).Method(http.MethodPost, "/{product_id}/variants", s.handleCreateVariant())
				r.With(write).Method(http.MethodPatch, "/{product_id}/variants/{variant_id}", s.handleUpdateVariant())
				r.With(write).Method(http.MethodDelete, "/{product_id}/variants/{variant_id}", s.handleDeleteVariant())
			})
			r.Route("/categories", func(r chi.Router) {
				r.With(write).Method(http.MethodPost, "/", s.handleCreateCategory())
				r.With(read).Method(http.MethodGet, "/", s.handleListCategories())
				r.With(read).Method(http.MethodGet, "/{category_id}", s.handleGetCategory())
				r.With(write).Method(http.MethodPatch, "/{category_id}", s.handleUpdateCategory())
				r.With(write).Method(http.MethodDelete, "/{category_id}", s.handleDeleteCategory())
			})
		})
	})
	return r
}
