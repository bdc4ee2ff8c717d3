package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
)

// routes is the whole API surface in one place.
func (s *Server) routes() *chi.Mux {
	r := chi.NewRouter()
	r.Use(withRequestID, s.recoverer, s.observe, middleware.StripSlashes)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) { s.writeError(w, r, errRouteNotFound) })
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) { s.writeError(w, r, errMethodNotAllowed) })

	r.Get("/media/{store_id}/{image_id}/{file}", s.handleMedia())

	// The merchant's pages ({merchant_url}, decisions §2 and §8).
	r.Get("/login", s.handleLoginPage())
	r.Post("/login", s.handleLoginForm())
	r.Get("/oauth/authorize", s.handleConsentPage())
	r.Post("/oauth/authorize", s.handleConsentForm())
	r.Get("/apps/{slug}/install", s.handleInstallFromListing())
	r.Get("/apps/{slug}/launch", s.handleLaunch())
	r.Get("/stores/{store_id}/themes/editor", s.handleEditorPage())
	r.Get("/stores/{store_id}/themes/preview", s.handlePreview())
	r.Post("/stores/{store_id}/themes/preview/render", s.handlePreviewRender())
	r.Method(http.MethodGet, "/assets/editor/{file}", handleAssets())
	r.Get("/healthz", s.handleHealthz())
	r.Get("/metrics", s.handleMetrics())
	r.Get("/readyz", s.handleReadyz())

	r.Route("/api/v1", func(r chi.Router) {
		r.Get("/openapi.json", s.handleOpenAPI())

		r.Post("/chat/callback", s.handleChatCallback())
		r.Post("/oauth/token", s.handleTokenExchange())
		r.Post("/oauth/revoke", s.handleRevoke())
		r.Route("/apps", func(r chi.Router) {
			r.Use(s.authenticate, s.sessionOnly)
			r.Post("/", s.handleRegisterApp())
			r.Get("/", s.handleListApps())
			r.Post("/{app_id}/rotate-secret", s.handleRotateAppSecret())
		})
		r.Post("/auth/signup", s.handleSignup())
		r.Post("/auth/login", s.handleLogin())
		r.With(s.authenticate, s.sessionOnly).Post("/auth/logout", s.handleLogout())
		r.With(s.authenticate, s.rateLimit).Get("/auth/me", s.handleMe())
		r.With(s.authenticate, s.rateLimit).Get("/auth/api-key/me", s.handleTokenInfo())

		// The storefront is public: buyers carry no token, so it is limited
		// per client address instead.
		r.Route("/storefront/{subdomain}", func(r chi.Router) {
			r.Use(s.storefrontRateLimit)
			r.Get("/products", s.handleStorefrontProducts())
			r.Get("/products/{product_id}", s.handleStorefrontProduct())
			r.Post("/carts", s.handleCreateCart())
			r.Get("/carts/{cart_id}", s.handleGetCart())
			r.Put("/carts/{cart_id}", s.handleUpdateCart())
			r.Post("/carts/{cart_id}/checkout", s.handleCheckout())
			r.Post("/orders/{order_id}/payment-proofs", s.handleStorefrontProof())
		})

		r.Route("/stores/{store_id}", func(r chi.Router) {
			r.Use(s.authenticate, s.rateLimit, s.bindStore, s.idempotency)

			r.Route("/access-tokens", func(r chi.Router) {
				r.Use(s.sessionOnly)
				r.Post("/", s.handleCreateAccessToken())
				r.Get("/", s.handleListAccessTokens())
				r.Delete("/{token_id}", s.handleRevokeAccessToken())
			})

			r.With(s.sessionOnly).Get("/notifications", s.handleListNotifications())
			r.With(s.sessionOnly).Delete("/apps/{app_id}", s.handleUninstallApp())

			settingsRead, settingsWrite := s.requireScope("settings:read"), s.requireScope("settings:write")
			r.With(settingsRead).Get("/settings", s.handleGetSettings())
			r.With(settingsWrite).Patch("/settings", s.handleUpdateSettings())
			r.Route("/webhooks", func(r chi.Router) {
				r.With(settingsWrite).Post("/", s.handleCreateWebhook())
				r.With(settingsRead).Get("/", s.handleListWebhooks())
				r.With(settingsRead).Get("/{webhook_id}", s.handleGetWebhook())
				r.With(settingsWrite).Patch("/{webhook_id}", s.handleUpdateWebhook())
				r.With(settingsWrite).Delete("/{webhook_id}", s.handleDeleteWebhook())
				r.With(settingsWrite).Post("/{webhook_id}/test", s.handleTestWebhook())
				r.With(settingsWrite).Post("/{webhook_id}/rotate-secret", s.handleRotateWebhookSecret())
				r.With(settingsRead).Get("/{webhook_id}/logs", s.handleWebhookLogs())
				r.With(settingsWrite).Post("/{webhook_id}/deliveries/{delivery_id}/redeliver", s.handleRedeliver())
				r.With(settingsWrite).Post("/{webhook_id}/recover", s.handleRecover())
			})

			customersRead, customersWrite := s.requireScope("customers:read"), s.requireScope("customers:write")
			r.Route("/customers", func(r chi.Router) {
				r.With(customersWrite).Post("/", s.handleCreateCustomer())
				r.With(customersRead).Get("/", s.handleListCustomers())
				r.With(customersRead).Get("/{customer_id}", s.handleGetCustomer())
				r.With(customersWrite).Patch("/{customer_id}", s.handleUpdateCustomer())
				r.With(customersWrite).Delete("/{customer_id}", s.handleDeleteCustomer())
			})

			ordersRead, ordersWrite := s.requireScope("orders:read"), s.requireScope("orders:write")
			r.Route("/orders", func(r chi.Router) {
				r.With(ordersWrite).Post("/", s.handleCreateOrder(false))
				r.With(ordersWrite).Post("/drafts", s.handleCreateOrder(true))
				r.With(ordersRead).Get("/", s.handleListOrders())
				r.With(ordersRead).Get("/counts", s.handleOrderCounts())
				r.With(ordersRead).Get("/pending-manual-review", s.handlePendingReview())
				r.With(ordersRead).Get("/autopilot-exceptions", s.handleListAutopilot())
				r.With(ordersWrite).Post("/autopilot-exceptions/{order_id}/resolve", s.handleResolveAutopilot())
				r.With(ordersWrite).Post("/bulk-status", s.handleBulkStatus())
				r.With(ordersWrite).Patch("/{order_id}", s.handleUpdateOrder())
				r.With(ordersWrite).Post("/{order_id}/convert", s.handleConvertDraft())
				r.With(ordersRead).Get("/{order_id}/email-preview", s.handleEmailPreview())
				r.With(ordersWrite).Post("/{order_id}/resend-email", s.handleResend("email"))
				r.With(ordersRead).Get("/{order_id}/chat-messages", s.handleChatMessages())
				r.With(ordersWrite).Post("/{order_id}/resend-chat-message", s.handleResend("chat"))
				r.With(ordersRead).Get("/{order_ref}", s.handleGetOrder())
				r.With(ordersWrite).Delete("/{order_id}", s.handleCancelOrder())
				r.With(ordersWrite).Patch("/{order_id}/status", s.handleUpdateOrderStatus())
				r.With(ordersRead).Get("/{order_id}/timeline", s.handleActivities(true))
				r.With(ordersRead).Get("/{order_id}/activities", s.handleActivities(false))
				r.With(ordersWrite).Post("/{order_id}/comments", s.handleAddComment())
				r.With(ordersWrite).Post("/{order_id}/mark-paid", s.handleMarkPaid())
				r.With(ordersWrite).Post("/{order_id}/unmark-paid", s.handleUnmarkPaid())
				r.With(ordersWrite).Post("/{order_id}/partial-acceptance", s.handlePartialAcceptance())
				r.With(ordersWrite).Post("/{order_id}/payments", s.handleRecordPayment())
				r.With(ordersRead).Get("/{order_id}/payment-proofs", s.handleListProofs())
			})
			r.Route("/abandoned-checkouts", func(r chi.Router) {
				r.With(ordersRead).Get("/summary", s.handleCheckoutSummary())
				r.With(ordersRead).Get("/", s.handleListCheckouts())
				r.With(ordersRead).Get("/{checkout_id}", s.handleGetCheckout())
				r.With(ordersWrite).Post("/{checkout_id}/send-recovery-email", s.handleSendRecoveryEmail())
				r.With(ordersWrite).Post("/{checkout_id}/mark-recovered", s.handleMarkRecovered())
			})
			// Reviewing proofs and undoing payments are settings scopes (spec §4.3).
			r.Route("/payment-proofs/{proof_id}", func(r chi.Router) {
				r.With(settingsRead).Get("/image", s.handleProofImage())
				r.With(settingsRead).Get("/similar", s.handleSimilarProofs())
				r.With(settingsWrite).Post("/approve", s.handleApproveProof())
				r.With(settingsWrite).Post("/reject", s.handleRejectProof())
			})
			r.With(settingsWrite).Post("/payments/{proof_id}/void", s.handleVoidPayment())

			themesRead, themesWrite := s.requireScope("themes:read"), s.requireScope("themes:write")
			r.Route("/themes/v3", func(r chi.Router) {
				r.With(themesRead).Get("/customization", s.handleGetCustomization())
				r.With(themesWrite).Put("/customization", s.handleSaveDraft())
				r.With(themesWrite).Post("/customization/publish", s.handlePublishTheme())
				r.With(themesRead).Get("/versions", s.handleListThemeVersions())
				r.With(themesRead).Get("/versions/compare", s.handleCompareThemes())
				r.With(themesRead).Get("/versions/{version_id}", s.handleGetThemeVersion())
				r.With(themesWrite).Post("/versions/{version_id}/restore", s.handleRestoreThemeVersion())
				r.With(themesRead).Get("/schemas", s.handleThemeSchemas())
			})

			read, write := s.requireScope("catalog:read"), s.requireScope("catalog:write")
			r.Route("/products", func(r chi.Router) {
				r.With(write).Post("/", s.handleCreateProduct())
				r.With(read).Get("/", s.handleListProducts())
				r.With(read).Get("/template", s.handleCSVTemplate())
				r.With(read).Get("/export", s.handleExport())
				r.With(write).Post("/import", s.handleImport())
				r.With(read).Get("/imports/{import_id}", s.handleGetImport())
				r.With(read).Get("/{product_id}", s.handleGetProduct())
				r.With(write).Patch("/{product_id}", s.handleUpdateProduct())
				r.With(write).Delete("/{product_id}", s.handleDeleteProduct())

				r.With(write).Post("/{product_id}/images", s.handleUploadImage())
				r.With(write).Delete("/{product_id}/images", s.handleDeleteImage())
				r.With(write).Patch("/{product_id}/images/alt", s.handleSetImageAlt())
				r.With(read).Get("/{product_id}/images/{image_id}", s.handleGetImage())

				r.With(read).Get("/{product_id}/variants", s.handleListVariants())
				r.With(write).Post("/{product_id}/variants", s.handleCreateVariant())
				r.With(write).Patch("/{product_id}/variants/{variant_id}", s.handleUpdateVariant())
				r.With(write).Delete("/{product_id}/variants/{variant_id}", s.handleDeleteVariant())
			})
			r.Route("/categories", func(r chi.Router) {
				r.With(write).Post("/", s.handleCreateCategory())
				r.With(read).Get("/", s.handleListCategories())
				r.With(read).Get("/{category_id}", s.handleGetCategory())
				r.With(write).Patch("/{category_id}", s.handleUpdateCategory())
				r.With(write).Delete("/{category_id}", s.handleDeleteCategory())
			})
		})
	})
	return r
}
