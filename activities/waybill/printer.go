// Package waybill prints waybills to PDF: internal/waybill's HTML, in a tab
// of one shared headless Chromium.
package waybill

import (
	"context"
	"fmt"
	"sync"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Printer prints HTML to PDF with one headless Chromium, started on first
// use and shared by every render (a tab each).
type Printer struct {
	// ExecPath is the Chromium binary ("chromium" on the PATH when empty).
	ExecPath string

	mu      sync.Mutex
	browser context.Context
	cancel  []context.CancelFunc
}

func (p *Printer) start() (context.Context, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.browser != nil && p.browser.Err() == nil {
		return p.browser, nil
	}
	exec := p.ExecPath
	if exec == "" {
		exec = "chromium"
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exec), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU)...)
	browser, cancelBrowser := chromedp.NewContext(alloc)
	if err := chromedp.Run(browser); err != nil {
		cancelBrowser()
		cancelAlloc()
		return nil, fmt.Errorf("start chromium: %w", err)
	}
	p.browser, p.cancel = browser, []context.CancelFunc{cancelBrowser, cancelAlloc}
	return browser, nil
}

// PDF prints html (its own CSS page size) to a PDF.
func (p *Printer) PDF(ctx context.Context, html []byte) ([]byte, error) {
	browser, err := p.start()
	if err != nil {
		return nil, err
	}
	tab, cancel := chromedp.NewContext(browser)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	var pdf []byte
	err = chromedp.Run(tab,
		chromedp.Navigate("about:blank"),
		chromedp.ActionFunc(func(ctx context.Context) error {
			tree, err := page.GetFrameTree().Do(ctx)
			if err != nil {
				return err
			}
			return page.SetDocumentContent(tree.Frame.ID, string(html)).Do(ctx)
		}),
		// The barcode images and the fonts, loaded before printing.
		chromedp.Evaluate(`Promise.all([document.fonts.ready, ...Array.from(document.images).map(i => i.complete ? 1 :
			new Promise(r => { i.onload = r; i.onerror = r; }))]).then(() => true)`, nil,
			func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
		chromedp.ActionFunc(func(ctx context.Context) error {
			var err error
			pdf, _, err = page.PrintToPDF().WithPreferCSSPageSize(true).WithPrintBackground(true).Do(ctx)
			return err
		}),
	)
	if err != nil {
		return nil, fmt.Errorf("print waybill: %w", err)
	}
	return pdf, nil
}

// Close stops the browser.
func (p *Printer) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.cancel {
		c()
	}
	p.browser, p.cancel = nil, nil
}
